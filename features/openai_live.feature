Feature: An actor answered by OpenAI's live APIs
  As a developer whose agent runs on OpenAI models
  I want `provider: openai` in an actor's configuration to answer calls through the Responses or Chat Completions API
  So that my agent gets text, tool calls, structured answers, usage and costs in the same ActorResponse as with any
  other provider, through the official openai SDK

  Background:
    Given an emulated OpenAI API

  Scenario Outline: A live call returns the full ActorResponse, priced at live prices
    Given an OpenAI actor "chatter" with:
      """
      system_prompt: You answer in one line.
      provider_options: {openai: {endpoint: <endpoint>}}
      """
    When the actor is asked "Is the harbour open?"
    Then the answer is the emulated reply to "Is the harbour open?"
    And the response has these fields:
      | field            | value                   |
      | model            | gpt-5.4-mini-2026-03-17 |
      | provider         | openai                  |
      | mode             | live                    |
      | stop_reason      | end_turn                |
      | ids.batch_id     |                         |
      | cost.pricing     | live                    |
      | provider_details |                         |
    And the response ids start with:
      | field          | prefix    |
      | ids.message_id | <id>      |
      | ids.request_id | req_      |
    And the response content is one text block holding the answer
    And the response reports some input and output tokens, and no cache use
    And the cost is what the tokens cost at these rates, in dollars per million tokens:
      | input | output | cache write | cache read |
      | 0.75  | 4.50   | 0.75        | 0.075      |
    And the API received these calls:
      | call   | count |
      | <call> | 1     |

    Examples:
      | endpoint         | id        | call                           |
      | responses        | resp_     | openai.responses.create        |
      | chat_completions | chatcmpl- | openai.chat.completions.create |

  Scenario Outline: A forced tool call comes back as a tool call, named by OpenAI's call id
    Given an OpenAI actor "recorder" with:
      """
      tool_choice: {type: tool, name: record_tide}
      provider_options: {openai: {endpoint: <endpoint>}}
      """
    When the actor is asked "Record today's high tide" with:
      """
      tools:
        - name: record_tide
          description: Record a tide measurement
          input_schema:
            type: object
            properties: {port: {type: string}, height_m: {type: number}}
            required: [port, height_m]
      """
    Then the actor called the OpenAI tool "record_tide" with a string "port" and a number "height_m"
    And the response has these fields:
      | field       | value    |
      | stop_reason | tool_use |
      | text        |          |

    Examples:
      | endpoint         |
      | responses        |
      | chat_completions |

  Scenario: A stop sequence on the Responses API cuts the answer before it is parsed into the response model
    Given an OpenAI actor "clerk" with:
      """
      provider_options: {openai: {endpoint: responses}}
      """
    When the OpenAI actor is asked "Record the tide at Brest" for a TideRecord, with the stop sequence ":"
    Then a StructuredOutputError is raised
    And the error keeps the answer cut before ":", stopped by it

  Scenario Outline: A conversation goes on after a tool call, with the tool's result
    Given an OpenAI actor "recorder" with:
      """
      provider_options: {openai: {endpoint: <endpoint>}}
      """
    When the OpenAI actor is told the result "Recorded: 4.2 m at Brest" of its call to "record_tide"
    Then the answer is the emulated reply to "Recorded: 4.2 m at Brest"

    Examples:
      | endpoint         |
      | responses        |
      | chat_completions |

  Scenario Outline: A structured answer is parsed into the response model
    Given an OpenAI actor "clerk" with:
      """
      provider_options: {openai: {endpoint: <endpoint>}}
      """
    When the OpenAI actor is asked "Record the tide at Brest" for a TideRecord
    Then the parsed answer is a TideRecord

    Examples:
      | endpoint         |
      | responses        |
      | chat_completions |

  Scenario Outline: Images and PDFs in the conversation are sent and counted
    Given an OpenAI actor "reader" with:
      """
      provider_options: {openai: {endpoint: <endpoint>}}
      """
    When the OpenAI actor is asked "What do these show?" with a 1024 x 1024 PNG image and a one-page PDF
    Then the answer is the emulated reply to "What do these show?"
    And the input counted more than <tokens> tokens

    Examples:
      | endpoint         | tokens |
      | responses        | 1000   |
      | chat_completions | 1000   |

  Scenario: A long prompt asked again reads OpenAI's prompt cache, priced at the cache-read rate
    Given an OpenAI actor "archivist" whose system prompt is long enough to cache
    When the OpenAI actor is asked "High tide today?" twice
    Then the first answer read nothing from the prompt cache, and the second read most of its prompt from it
    And the cost is what the tokens cost at these rates, in dollars per million tokens:
      | input | output | cache write | cache read |
      | 0.75  | 4.50   | 0.75        | 0.075      |

  Scenario: The API's refusal is the ActorError of the same meaning, the wait asked for kept
    Given an OpenAI actor "chatter" with:
      """
      system_prompt: You answer in one line.
      live: {retries: {rate_limited: 0, server: 0}}
      """
    And the OpenAI emulator answers the next Responses call with status 429, asking to wait 20 seconds
    When the actor is asked "Is the harbour open?"
    Then a RateLimitError is raised
    And the rate limit error asks to wait 20 seconds and says it is retryable
    When the actor is asked "Hello [[emulator:errored:api_error]]"
    Then a ServerError is raised
    And the error is retryable

  Scenario: An unknown model the models endpoint could not check is a NotFoundError with OpenAI's code
    Given the OpenAI API's models endpoint refuses connections
    And an OpenAI actor "lost" with:
      """
      model: claude-sonnet-4-5
      """
    When the actor is asked "Hello"
    Then a NotFoundError is raised
    And the error message contains "claude-sonnet-4-5"
    And the error is not retryable

  Scenario: A wrong key is an AuthenticationError that never shows the key
    Given an emulated OpenAI API that accepts only the key "sk-the-right-one"
    And an OpenAI actor "intruder" with:
      """
      max_tokens: 100
      """
    When the actor is asked "Hello"
    Then an AuthenticationError is raised
    And the error message does not contain the OpenAI key

  Scenario: A parameter OpenAI does not know is sent all the same, and the API's refusal comes back
    Given an OpenAI actor "bold" with:
      """
      extra_params: {harbour_mode: strict, truncation: auto}
      """
    When the actor is asked "Hello"
    Then an InvalidRequestError is raised
    And the error message contains "harbour_mode"

  Scenario: What the Responses API cannot do is refused as the actor is configured, before anything is sent
    When an OpenAI actor "stopper" is configured with:
      """
      max_tokens: 10
      """
    Then a ConfigurationError is raised
    And the error names the field "max_tokens"
    And the API received no calls at all

  Scenario: A live call over its budget is refused at OpenAI's prices; one within it is answered
    Given an OpenAI actor "thrifty" with:
      """
      max_tokens: 1000
      """
    When the actor is asked "Is the harbour open?" with:
      """
      max_cost_usd: 0.0001
      """
    Then a BudgetExceededError is raised
    And the API received only these calls:
      | call                   | count |
      | openai.models.retrieve | 1     |
    When the actor is asked "Is the harbour open?" with:
      """
      max_cost_usd: 0.01
      """
    Then the answer is the emulated reply to "Is the harbour open?"

  Scenario: The built-in OpenAI provider registers through the plugin entry point, for live and batch modes
    Then the default registry has the provider "openai" for live and batch modes

  Scenario: An actor builds its own OpenAI client from a key, a base URL and an HTTP client, and closes it
    Given an OpenAI actor "own" that builds its own client with the key, the emulator's base URL and an HTTP client
    When the actor is asked "Is the harbour open?"
    Then the answer is the emulated reply to "Is the harbour open?"
    And once the actor is closed, its OpenAI client is closed too

  Scenario: Without a key the error says which variable to set, before anything is sent
    Given an OpenAI actor "keyless" with no API client, whose key variable "LOWTIDE_TEST_OPENAI_KEY" is unset
    When the actor is asked "Hello"
    Then a ConfigurationError is raised
    And the error names the field "api_key_env"
    And the error message contains "LOWTIDE_TEST_OPENAI_KEY"

  Scenario: An Anthropic client handed to an OpenAI actor is refused
    Given an OpenAI actor "confused" handed an Anthropic client
    When the actor is asked "Hello"
    Then a ConfigurationError is raised
    And the error names the field "client"

  Scenario: Anthropic checks its own provider options, and says that it ignores OpenAI's
    Given an emulated Anthropic API
    And the warnings of "lowtide.config.actors" are kept
    And an actor "claude" with:
      """
      provider_options: {openai: {endpoint: chat_completions}}
      """
    When the actor is asked "Is the harbour open?"
    Then the answer is the emulated reply to "Is the harbour open?"
    And "lowtide.config.actors" warned once: "provider_options.openai: actor 'claude' is of provider 'anthropic', which reads only provider_options.anthropic; the options for 'openai' are ignored (a file's `defaults` may hold several providers' options, each actor taking its own provider's)."
    When an actor "claude-too" is configured with:
      """
      provider_options: {anthropic: {beta: true}}
      """
    Then a ConfigurationError is raised
    And the error names the field "provider_options.anthropic.beta"
    And the error message contains "Anthropic's own settings are top_k, thinking, output_config, cache_control"

  Scenario: Options under a name no provider has are refused, naming the provider meant
    When an actor "claude-typo" is configured with:
      """
      provider_options: {antropic: {top_k: 5}}
      """
    Then a ConfigurationError is raised
    And the error names the field "provider_options.antropic"
    And the error message contains "provider_options.antropic: no provider is named 'antropic' (did you mean 'anthropic'?); actor 'claude-typo' is of provider 'anthropic', which reads only provider_options.anthropic."

  Scenario: A file's defaults hold several providers' options: each actor takes its own, and nothing is said
    Given the warnings of "lowtide.config.actors" are kept
    When the actors are loaded from the dict:
      """
      {
          "defaults": {"provider_options": {"anthropic": {"top_k": 5}, "openai": {"endpoint": "chat_completions"}}},
          "actors": [
              {"name": "claude", "model": "claude-sonnet-4-5"},
              {"name": "gpt", "provider": "openai", "model": "gpt-4o-mini"},
          ],
      }
      """
    Then the loaded actor "claude" has the provider options {"anthropic": {"top_k": 5}}
    And the loaded actor "gpt" has the provider options {"openai": {"endpoint": "chat_completions"}}
    And "lowtide.config.actors" warned of nothing

  Scenario: A call's own options for another provider are said to be ignored, once for all the calls, and answered
    Given an emulated Anthropic API
    And the warnings of "lowtide.config.actors" are kept
    And an actor "claude" with:
      """
      temperature: 0.2
      """
    When the actor is asked "Is the harbour open?" with:
      """
      provider_options: {openai: {endpoint: chat_completions}}
      """
    Then the answer is the emulated reply to "Is the harbour open?"
    When the actor is asked "Is the tide in?" with:
      """
      provider_options: {openai: {endpoint: chat_completions}}
      """
    Then the answer is the emulated reply to "Is the tide in?"
    And "lowtide.config.actors" warned once: "a call's own provider_options.openai: actor 'claude' is of provider 'anthropic', which reads only provider_options.anthropic; the options for 'openai' are ignored (a file's `defaults` may hold several providers' options, each actor taking its own provider's)."

  Scenario: A call's own options under a name no provider has are refused before anything is sent, naming the one meant
    Given an emulated Anthropic API
    And an actor "claude" with:
      """
      temperature: 0.2
      """
    When the actor is asked "Is the harbour open?" with:
      """
      provider_options: {antropic: {top_k: 5}}
      """
    Then a ConfigurationError is raised
    And the error names the field "provider_options.antropic"
    And the error message contains "a call's own provider_options.antropic: no provider is named 'antropic' (did you mean 'anthropic'?); actor 'claude' is of provider 'anthropic', which reads only provider_options.anthropic."
    And the API received no calls at all
