Feature: A provider is its folder: neutral code knows no provider's names, shapes or error types
  As a maintainer adding a provider
  I want every rule of a provider (its names, usage shape, parameter ranges, custom ids, error types) in its folder
  So that a new provider is a folder and an entry point, with no edit across lowtide's neutral code

  # Neutral code: every module of lowtide outside `providers/<name>/` and `emulator/`. Its code is what runs (names,
  # imports, strings); its documentation (docstrings, the text of an option) may name a provider as an example.

  Scenario: No neutral module names a provider or uses a provider's own identifiers, but the default provider
    When the code of lowtide's neutral modules is searched for these words:
      | word                  | what                                  |
      | anthropic             | a provider's name                     |
      | openai                | a provider's name                     |
      | claude                | a provider's models                   |
      | gpt                   | a provider's models                   |
      | gemini                | a provider's name                     |
      | bedrock               | a provider's name                     |
      | boto3                 | a provider's SDK                      |
      | overloaded_error      | a provider's error type               |
      | rate_limit_error      | a provider's error type               |
      | invalid_request_error | a provider's error type               |
      | insufficient_quota    | a provider's error code               |
      | rate_limit_exceeded   | a provider's error code               |
      | message_batch         | a provider's batch object             |
      | x-ratelimit           | a provider's rate limit headers       |
      | retry-after-ms        | a provider's header                   |
    Then they are found only here:
      | module                          | text                        | why                                                  |
      | config/settings.py              | anthropic                   | DEFAULT_PROVIDER: the provider of an actor naming none |
      | __init__.py                     | lowtide.providers.anthropic | the default provider's classes, exported lazily       |
      | __init__.py                     | ClaudeBatchProvider         | the default provider's classes, exported lazily       |
      | __init__.py                     | ClaudeProvider              | the default provider's classes, exported lazily       |
      | integrations/langchain/model.py | convert_to_openai_tool      | LangChain's own name for its tool format              |
      | messages/wire.py                | invalid_request_error       | serve's own refusals (REFUSAL_TYPES), each wire translates them |
      | serve/app.py                    | invalid_request_error       | serve's own refusals (REFUSAL_TYPES), each wire translates them |
      | serve/body.py                   | invalid_request_error       | serve's own refusals (REFUSAL_TYPES), each wire translates them |

  Scenario: The check finds a provider's name put in neutral code, and passes over its documentation
    Given a neutral module that says:
      """
      '''Prices, as Anthropic's API reports them.'''

      def price(provider: str) -> int:
          '''2 for OpenAI.'''
          return 2 if provider == "openai" else 1
      """
    When the code of that module is searched for the words "anthropic" and "openai"
    Then "openai" is found on its line 5, and nothing else
