Feature: An actor answered by Together AI's live Chat Completions
  As a developer whose agents run on open models served by Together AI
  I want `provider: together` in live mode to call Together's Chat Completions through the official together SDK
  So that one call is one answer, priced at Together's prices, with lowtide's retries, keys and checks

  Background:
    Given an emulated Together API

  Scenario: A live call returns the full ActorResponse, its usage priced at Together's live prices
    Given a Together actor "quick" with:
      """
      top_k: 40
      provider_options: {together: {repetition_penalty: 1.1, min_p: 0.05}}
      """
    When the actor is asked "Is the harbour open?"
    Then the answer is the emulated reply to "Is the harbour open?"
    And the response has these fields:
      | field    | value                                   |
      | model    | meta-llama/Llama-3.3-70B-Instruct-Turbo |
      | provider | together                                |
      | mode     | live                                    |
    And the Together answer's cost is what genai-prices asks for "meta-llama/Llama-3.3-70B-Instruct-Turbo" at live prices
    And the API received these calls:
      | call                             | count |
      | together.chat.completions.create | 1     |
      | openai.chat.completions.create   | 0     |

  Scenario: A 429 pauses the call for the wait its retry-after asks for, then the call is answered
    Given a Together actor "patient" with:
      """
      max_tokens: 64
      """
    And the Together emulator answers the next chat completion with status 429, asking to wait 7 seconds
    When the actor is asked "Is the harbour open?"
    Then the answer is the emulated reply to "Is the harbour open?"
    And the answer arrived 7 seconds after the call
    And the API received these calls:
      | call                             | count |
      | together.chat.completions.create | 2     |

  Scenario: A 429 with no retries left is a RateLimitError keeping the wait; a 500 is a ServerError
    Given a Together actor "hasty" with:
      """
      live: {retries: {rate_limited: 0, server: 0}}
      """
    And the Together emulator answers the next chat completion with status 429, asking to wait 7 seconds
    When the actor is asked "Is the harbour open?"
    Then a RateLimitError is raised
    And the rate limit error asks to wait 7 seconds and says it is retryable
    Given the Together emulator answers the next chat completion with status 500
    When the actor is asked "Is the harbour open?"
    Then a ServerError is raised

  Scenario: A misspelt model is refused before anything is sent, naming the closest models Together lists
    Given a Together actor "typo" with:
      """
      model: meta-llama/Llama-3.3-70B-Instruct-Trbo
      """
    When the actor is asked "Is the harbour open?"
    Then a ConfigurationError is raised
    And the error names the field "model"
    And the error message contains "model: Together at http://emulator.invalid has no model 'meta-llama/Llama-3.3-70B-Instruct-Trbo'. Did you mean 'meta-llama/Llama-3.3-70B-Instruct-Turbo'"
    And the error message contains "is sent with provider_options: {together: {unlisted_model: true}}"
    When the actor is asked "Is the harbour open, then?"
    Then a ConfigurationError is raised
    And the API received these calls:
      | call                             | count |
      | together.models.list             | 1     |
      | together.chat.completions.create | 0     |

  Scenario: A model the list leaves out (a fine-tune's) is sent when the actor insists, and the API has the last word
    Given a Together actor "tuned" with:
      """
      model: acme/Llama-3.3-70B-Instruct-Turbo-ft-5f2c
      provider_options: {together: {unlisted_model: true}}
      """
    When the actor is asked "Is the harbour open?"
    Then a NotFoundError is raised
    And the error message contains "acme/Llama-3.3-70B-Instruct-Turbo-ft-5f2c"
    And the API received these calls:
      | call                             | count |
      | together.models.list             | 0     |
      | together.chat.completions.create | 1     |

  Scenario: A known model is checked against one reading of the list, however many calls name it
    Given a Together actor "known" with:
      """
      max_tokens: 64
      """
    When the actor is asked "Hello"
    And the actor is asked "Hello again"
    Then the API received these calls:
      | call                             | count |
      | together.models.list             | 1     |
      | together.chat.completions.create | 2     |

  Scenario: When Together's list of models cannot be read, the model goes unchecked and the API's 404 comes back
    Given the Together API will fail the next "together.models.list" call with status 500
    And a Together actor "typo" with:
      """
      model: meta-llama/Llama-3.3-70B-Instruct-Trbo
      """
    When the actor is asked "Is the harbour open?"
    Then a NotFoundError is raised
    And the API received these calls:
      | call                             | count |
      | together.chat.completions.create | 1     |

  Scenario: A model genai-prices does not know is answered with its cost unknown, not $0
    Given a Together actor "novel" with:
      """
      model: togethercomputer/Tidal-Lite-8B
      """
    When the actor is asked "Hello"
    Then the response has these fields:
      | field    | value    |
      | provider | together |
    And the answer's cost is unknown

  Scenario Outline: A base URL ending in the path the Together SDK adds itself is refused, naming the address to give: <url>
    Given a Together actor "doubled" with no client, its base URL "<url>" given by <source>
    When the actor is asked "Hello"
    Then a ConfigurationError is raised
    And the error message contains "<said> <url> ends with <path>: the Together SDK adds /v1 before every route itself, so give the address without it, <bare>."
    And the API received no calls at all

    Examples:
      | url                                  | source            | said               | path       | bare                             |
      | http://127.0.0.1:9/v1                | TOGETHER_BASE_URL | $TOGETHER_BASE_URL | /v1        | http://127.0.0.1:9               |
      | https://gateway.example/together/v1  | its base_url      | base_url           | /v1        | https://gateway.example/together |

  Scenario: Without a key, the actor says which variable to set before anything is sent
    Given a Together actor "keyless" with no client, whose key variable is unset
    When the actor is asked "Hello"
    Then a ConfigurationError is raised
    And the error message contains "TOGETHER_API_KEY"
    And the API received no calls at all

  Scenario Outline: Content Together's Chat Completions cannot carry is refused before anything is sent: <case>
    Given a Together actor "readers" with:
      """
      max_tokens: 64
      """
    When the actor is asked with:
      """
      <request>
      """
    Then a ConfigurationError is raised
    And the error names the field "<field>"
    And the error message contains "Together AI's Chat Completions <says>"
    And the error message does not contain "Responses endpoint"
    And the API received no calls at all

    Examples:
      | case                | request                                                                                                                   | field                          | says                                                      |
      | a PDF sent inline   | messages: [{role: user, content: [{type: document, source: {type: base64, media_type: application/pdf, data: aGVsbG8=}}]}]     | messages[0].content[0].source  | takes no documents (messages[0].content[0]); send the document's text instead |
      | a document by URL   | messages: [{role: user, content: [{type: document, source: {type: url, url: "https://example.com/t.pdf"}}]}]              | messages[0].content[0].source  | takes no documents                                        |
      | an image by file id | messages: [{role: user, content: [{type: image, source: {type: file, file_id: file-1}}]}]                                  | messages[0].content[0].source  | takes images by URL only, not by file id (messages[0].content[0]); send the image inline (base64) or by URL |

  Scenario Outline: A call Together would refuse is refused before anything is sent: <case>
    Given a Together actor "strict" with:
      """
      max_tokens: 64
      """
    When the actor is asked "Hello" with:
      """
      <given>
      """
    Then a ConfigurationError is raised
    And the error names the field "<field>"
    And the API received no calls at all

    Examples:
      | case              | given                                        | field                                 |
      | an empty stop     | stop_sequences: [""]                         | stop_sequences.0                      |
      | metadata          | metadata: {run: tides}                       | metadata                              |
      | top_k of 0        | top_k: 0                                     | top_k                                 |
      | an unknown effort | provider_options: {together: {reasoning_effort: max}} | provider_options.together.reasoning_effort |
      | a streamed answer | extra_params: {stream: true}                 | extra_params.stream                   |
      | a setting given twice | {provider_options: {together: {min_p: 0.1}}, extra_params: {min_p: 0.2}} | extra_params.min_p |

  Scenario: A forced tool call comes back as a tool call, its arguments read as JSON
    Given a Together actor "recorder" with:
      """
      tool_choice: {type: tool, name: record_tide}
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
      | provider    | together     |

  Scenario: An actor built from TOGETHER_API_KEY and TOGETHER_BASE_URL alone answers, and closes the client it made
    Given an emulator on a socket whose Together jobs take 0 seconds, reached through TOGETHER_BASE_URL alone
    And a Together actor "plain" built from the environment alone
    When the actor is asked "Is the harbour open?"
    Then the response has these fields:
      | field    | value |
      | provider | together  |
    And the Together actor's own client is closed once the actor is

  Scenario: The Together provider classes are lowtide.providers.together's exports, loaded when first asked for
    Then lowtide.providers.together's __all__ is sorted
    And every name in lowtide.providers.together's __all__ is exported
    And "from lowtide.providers.together import *" imports exactly the names in __all__
    And asking lowtide.providers.together for "TogetherChatProvider" is Python's AttributeError, naming it

  Scenario: A live bulk run of a Together actor checks its request once, then answers every item in input order, each priced
    Given a Together actor "bulk" with:
      """
      live: {rpm: 60}
      """
    When the Together actor maps 4 prompts in live mode
    Then the Together run's 4 results are in input order, each the emulated reply to its prompt, each priced

  Scenario: A client of the wrong kind is refused, naming it
    When a Together actor "wrong" is given an OpenAI client
    Then a ConfigurationError is raised
    And the error names the field "client"
