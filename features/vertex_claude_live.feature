Feature: An actor answered by a Claude model on Vertex AI, live
  As a developer whose company reaches Claude through Google Cloud
  I want `provider: vertex_claude` with a project and a location to answer calls through Vertex AI's rawPredict
  So that my agent gets the same ActorResponse as through Anthropic's API, billed to my Google Cloud project

  Every call below goes through the unmodified anthropic SDK's `AsyncAnthropicVertex`, built by lowtide from the
  actor's settings, to the emulator's Vertex AI, in process.

  Background:
    Given an emulated Vertex AI

  Scenario: A live call is answered under the actor's project and location, priced at Vertex AI's prices
    Given a Vertex Claude actor "pilot" with:
      """
      system_prompt: You answer in one line.
      max_tokens: 600
      """
    When the actor is asked "Is the harbour open?"
    Then the answer is the emulated reply to "Is the harbour open?"
    And the response has these fields:
      | field        | value             |
      | provider     | vertex_claude     |
      | mode         | live              |
      | stop_reason  | end_turn          |
      | cost.pricing | live              |
    And Vertex AI was asked for Claude at "/v1/projects/tide-project/locations/europe-west4/publishers/anthropic/models/claude-sonnet-4-6@20260217:rawPredict" with the token "lowtide-anonymous"
    And the API received these calls:
      | call                        | count |
      | vertex.claude.models.get    | 1     |
      | vertex.claude.raw_predict   | 1     |
      | messages.create             | 0     |

  Scenario: Anthropic's own settings are read from provider_options.anthropic, not said to be ignored; OpenAI's are
    Given the warnings of "lowtide.config.actors" are kept
    And a Vertex Claude actor "pilot" with:
      """
      provider_options: {anthropic: {top_k: 5}, openai: {endpoint: chat_completions}}
      """
    When the actor is asked "Is the harbour open?"
    Then the answer is the emulated reply to "Is the harbour open?"
    And "lowtide.config.actors" warned once: "provider_options.openai: actor 'pilot' is of provider 'vertex_claude', which reads only provider_options.vertex_claude and provider_options.anthropic; the options for 'openai' are ignored (a file's `defaults` may hold several providers' options, each actor taking its own provider's)."

  Scenario: A long answer is streamed through streamRawPredict, and makes the same answer
    Given a Vertex Claude actor "talkative" with:
      """
      max_tokens: 9000
      """
    When the actor is asked "Tell me of the tides"
    Then the answer is the emulated reply to "Tell me of the tides"
    And the API received these calls:
      | call                             | count |
      | vertex.claude.stream_raw_predict | 1     |
      | vertex.claude.raw_predict        | 0     |

  Scenario: Actor.stream gives the answer's pieces as they come, then the response
    Given a Vertex Claude actor "streamer"
    When the actor's answer to "Tell me of the tides, at length" is streamed
    Then more than one piece of text came before the response, and the response came last
    And the pieces of text joined are the response's text
    And the same call made with run answers the same text with the same usage and cost

  Scenario: A 429 with no retries left is a RateLimitError keeping the wait; a 500 is a ServerError
    Given a Vertex Claude actor "hasty" with:
      """
      live: {retries: {rate_limited: 0, server: 0}}
      """
    And the Vertex emulator answers the next Claude rawPredict call with status 429, asking to wait 7 seconds
    When the actor is asked "Is the harbour open?"
    Then a RateLimitError is raised
    And the rate limit error asks to wait 7 seconds and says it is retryable
    Given the Vertex emulator answers the next Claude rawPredict call with status 500
    When the actor is asked "Is the harbour open?"
    Then a ServerError is raised

  Scenario: A request the model refuses is an InvalidRequestError with the API's words
    Given a Vertex Claude actor "marked"
    When the actor is asked "[[emulator:errored:invalid_request_error]] Which tide?"
    Then an InvalidRequestError is raised
    And the error message contains "Emulated invalid_request_error requested by a marker"

  Scenario: A Claude model Vertex AI does not serve is refused before anything is generated
    Given a Vertex Claude actor "lost" with:
      """
      model: claude-sonet-4-6@20260217
      """
    When the actor is asked "Hello"
    Then a ConfigurationError is raised
    And the error names the field "model"
    And the error message contains "claude-sonet-4-6@20260217"
    And the API received these calls:
      | call                      | count |
      | vertex.claude.raw_predict | 0     |

  Scenario: Without a project, the actor says what to set before anything is sent
    Given no Google Cloud project is set in the environment
    And a Vertex Claude actor "homeless" with:
      """
      vertex_claude: {project: null}
      """
    When the actor is asked "Hello"
    Then a ConfigurationError is raised
    And the error names the field "provider_options.vertex_claude.project"
    And the error message contains "GOOGLE_CLOUD_PROJECT"
    And nothing was sent to Vertex AI

  Scenario: Anthropic's parameter rules hold on Vertex AI: a temperature above 1 is refused as the actor loads
    When an actor of Claude on Vertex AI "hot" is configured with:
      """
      temperature: 1.5
      """
    Then a ConfigurationError is raised
    And the error names the field "temperature"
    And nothing was sent to Vertex AI
