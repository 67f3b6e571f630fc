Feature: An actor answered by Groq's live Chat Completions
  As a developer whose agents run on models served by Groq
  I want `provider: groq` in live mode to call Groq's Chat Completions through the official groq SDK
  So that one call is one answer, priced at Groq's prices, with lowtide's retries, keys and checks

  Background:
    Given an emulated Groq API

  Scenario: A live call returns the full ActorResponse, its usage priced at Groq's live prices
    Given a Groq actor "quick" with:
      """
      provider_options: {groq: {reasoning_effort: low, service_tier: on_demand}}
      """
    When the actor is asked "Is the harbour open?"
    Then the answer is the emulated reply to "Is the harbour open?"
    And the response has these fields:
      | field    | value                |
      | model    | llama-3.1-8b-instant |
      | provider | groq                 |
      | mode     | live                 |
    And the Groq answer's cost is what genai-prices asks for "llama-3.1-8b-instant" at live prices
    And the API received these calls:
      | call                         | count |
      | groq.chat.completions.create | 1     |

  Scenario: A 429 pauses the call for the wait its retry-after asks for, then the call is answered
    Given a Groq actor "patient" with:
      """
      max_tokens: 64
      """
    And the Groq emulator answers the next chat completion with status 429, asking to wait 7 seconds
    When the actor is asked "Is the harbour open?"
    Then the answer is the emulated reply to "Is the harbour open?"
    And the answer arrived 7 seconds after the call
    And the API received these calls:
      | call                         | count |
      | groq.chat.completions.create | 2     |

  Scenario: A 429 with no retries left is a RateLimitError keeping the wait; a 500 is a ServerError
    Given a Groq actor "hasty" with:
      """
      live: {retries: {rate_limited: 0, server: 0}}
      """
    And the Groq emulator answers the next chat completion with status 429, asking to wait 7 seconds
    When the actor is asked "Is the harbour open?"
    Then a RateLimitError is raised
    And the rate limit error asks to wait 7 seconds and says it is retryable
    Given the Groq emulator answers the next chat completion with status 500
    When the actor is asked "Is the harbour open?"
    Then a ServerError is raised

  Scenario: A misspelt model is refused before anything is sent, naming the closest models Groq lists
    Given a Groq actor "typo" with:
      """
      model: llama-3.1-8b-instnt
      """
    When the actor is asked "Is the harbour open?"
    Then a ConfigurationError is raised
    And the error names the field "model"
    And the error message contains "model: Groq at http://emulator.invalid has no model 'llama-3.1-8b-instnt'. Did you mean 'llama-3.1-8b-instant'"
    When the actor is asked "Is the harbour open, then?"
    Then a ConfigurationError is raised
    And the API received these calls:
      | call                         | count |
      | groq.models.retrieve         | 1     |
      | groq.models.list             | 1     |
      | groq.chat.completions.create | 0     |

  Scenario: A model nothing resembles is refused, pointing to Groq's list of models
    Given a Groq actor "lost" with:
      """
      model: claude-tidal
      """
    When the actor is asked "Hello"
    Then a ConfigurationError is raised
    And the error message contains "has no model 'claude-tidal' (its models list names the models it serves)."

  Scenario: A known model is asked about once, however many calls name it
    Given a Groq actor "known" with:
      """
      max_tokens: 64
      """
    When the actor is asked "Hello"
    And the actor is asked "Hello again"
    Then the API received these calls:
      | call                         | count |
      | groq.models.retrieve         | 1     |
      | groq.models.list             | 0     |
      | groq.chat.completions.create | 2     |

  Scenario Outline: When Groq's models endpoint cannot say (<status>), the model goes unchecked and the API's 404 comes back, not retried
    Given the Groq API will fail the next "groq.models.retrieve" call with status <status>
    And a Groq actor "typo" with:
      """
      model: llama-3.1-8b-instnt
      """
    When the actor is asked "Is the harbour open?"
    Then a NotFoundError is raised
    And the error message contains "llama-3.1-8b-instnt"
    And the API received these calls:
      | call                         | count |
      | groq.chat.completions.create | 1     |

    Examples:
      | status |
      | 500    |
      | 503    |

  Scenario: When Groq's models endpoint cannot be reached, models go unchecked for the rest of the process, said once
    Given the warnings of "lowtide.providers.model_names" are kept
    And the Groq API will answer the next "groq.models.retrieve" call, then drop the connection before the answer
    And a Groq actor "unchecked" with:
      """
      max_tokens: 64
      """
    When the actor is asked "Is the harbour open?"
    And the actor is asked "Is the harbour open, then?"
    Then the API received these calls:
      | call                         | count |
      | groq.models.retrieve         | 1     |
      | groq.chat.completions.create | 2     |
    And "lowtide.providers.model_names" warned once: "The models endpoint of http://emulator.invalid cannot be reached (APIConnectionError): model names are not checked before sending."

  Scenario: A call whose model check the endpoint failed goes unchecked; the next call asks again, and it is said once
    Given the warnings of "lowtide.providers.model_names" are kept
    And the Groq API will fail the next "groq.models.retrieve" call with status 503
    And the Groq API will fail the next "groq.models.retrieve" call with status 503
    And a Groq actor "typo" with:
      """
      model: llama-3.1-8b-instnt
      """
    When the actor is asked "Is the harbour open?"
    Then a NotFoundError is raised
    When the actor is asked "Is the harbour open, then?"
    Then a NotFoundError is raised
    When the actor is asked "Is the harbour open at last?"
    Then a ConfigurationError is raised
    And the API received these calls:
      | call                         | count |
      | groq.models.retrieve         | 3     |
      | groq.chat.completions.create | 2     |
    And "lowtide.providers.model_names" warned once: "The models endpoint of http://emulator.invalid answered 503: model names are not checked before sending."

  Scenario: When Groq's list of models cannot be read, a misspelt model is refused all the same, without suggestions
    Given the Groq API will fail the next "groq.models.list" call with status 500
    And a Groq actor "typo" with:
      """
      model: llama-3.1-8b-instnt
      """
    When the actor is asked "Is the harbour open?"
    Then a ConfigurationError is raised
    And the error message contains "has no model 'llama-3.1-8b-instnt' (its models list names the models it serves)."

  Scenario: A key the models endpoint rejects is the call's AuthenticationError, before anything is sent
    Given the Groq API will fail the next "groq.models.retrieve" call with status 401
    And a Groq actor "rejected" with:
      """
      max_tokens: 64
      """
    When the actor is asked "Hello"
    Then an AuthenticationError is raised
    And the API received these calls:
      | call                         | count |
      | groq.chat.completions.create | 0     |

  Scenario: A model genai-prices does not know is answered with its cost unknown, not $0
    Given a Groq actor "novel" with:
      """
      model: allam-2-7b
      """
    When the actor is asked "Hello"
    Then the response has these fields:
      | field    | value                       |
      | provider | groq                        |
    And the answer's cost is unknown

  Scenario Outline: A base URL ending in the path the Groq SDK adds itself is refused, naming the address to give: <url>
    Given a Groq actor "doubled" with no client, its base URL "<url>" given by <source>
    When the actor is asked "Hello"
    Then a ConfigurationError is raised
    And the error message contains "<said> <url> ends with <path>: the Groq SDK adds /openai/v1 before every route itself, so give the address without it, <bare>."
    And the API received no calls at all

    Examples:
      | url                                  | source            | said               | path       | bare                             |
      | http://127.0.0.1:9/v1                | its base_url      | base_url           | /v1        | http://127.0.0.1:9               |
      | http://127.0.0.1:9/openai/v1/        | GROQ_BASE_URL     | $GROQ_BASE_URL     | /openai/v1 | http://127.0.0.1:9               |

  Scenario: Without a key, the actor says which variable to set before anything is sent
    Given a Groq actor "keyless" with no client, whose key variable is unset
    When the actor is asked "Hello"
    Then a ConfigurationError is raised
    And the error message contains "GROQ_API_KEY"
    And the API received no calls at all

  Scenario Outline: Content Groq's Chat Completions cannot carry is refused before anything is sent: <case>
    Given a Groq actor "readers" with:
      """
      max_tokens: 64
      """
    When the actor is asked with:
      """
      <request>
      """
    Then a ConfigurationError is raised
    And the error names the field "<field>"
    And the error message contains "Groq's Chat Completions <says>"
    And the error message does not contain "Responses endpoint"
    And the API received no calls at all

    Examples:
      | case                | request                                                                                                                   | field                          | says                                                      |
      | a PDF sent inline   | messages: [{role: user, content: [{type: document, source: {type: base64, media_type: application/pdf, data: aGVsbG8=}}]}]     | messages[0].content[0].source  | takes no documents (messages[0].content[0]); send the document's text instead |
      | a document by URL   | messages: [{role: user, content: [{type: document, source: {type: url, url: "https://example.com/t.pdf"}}]}]              | messages[0].content[0].source  | takes no documents                                        |
      | an image by file id | messages: [{role: user, content: [{type: image, source: {type: file, file_id: file-1}}]}]                                  | messages[0].content[0].source  | takes images by URL only, not by file id (messages[0].content[0]); send the image inline (base64) or by URL |

  Scenario Outline: A call Groq would refuse is refused before anything is sent: <case>
    Given a Groq actor "strict" with:
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
      | case                  | given                                           | field                                   |
      | five stop sequences   | stop_sequences: [a, b, c, d, e]                 | stop_sequences                          |
      | an empty stop         | stop_sequences: [""]                            | stop_sequences.0                        |
      | metadata              | metadata: {run: tides}                          | metadata                                |
      | an unknown effort     | provider_options: {groq: {reasoning_effort: max}} | provider_options.groq.reasoning_effort |
      | a streamed answer     | extra_params: {stream: true}                    | extra_params.stream                     |
      | a stop given twice    | stop_sequences: [ebb, ebb]                      | stop_sequences.1                        |
      | a setting given twice | {provider_options: {groq: {reasoning_format: parsed}}, extra_params: {reasoning_format: raw}} | extra_params.reasoning_format |

  Scenario: A forced tool call comes back as a tool call, its arguments read as JSON
    Given a Groq actor "recorder" with:
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
      | provider    | groq     |

  Scenario: An actor built from GROQ_API_KEY and GROQ_BASE_URL alone answers, and closes the client it made
    Given an emulator on a socket whose Groq batches take 0 seconds, reached through GROQ_BASE_URL alone
    And a Groq actor "plain" built from the environment alone
    When the actor is asked "Is the harbour open?"
    Then the response has these fields:
      | field    | value |
      | provider | groq  |
    And the Groq actor's own client is closed once the actor is

  Scenario: The Groq provider classes are lowtide.providers.groq's exports, loaded when first asked for
    Then lowtide.providers.groq's __all__ is sorted
    And every name in lowtide.providers.groq's __all__ is exported
    And "from lowtide.providers.groq import *" imports exactly the names in __all__
    And asking lowtide.providers.groq for "GroqChatProvider" is Python's AttributeError, naming it

  Scenario: A live bulk run of a Groq actor checks its request once, then answers every item in input order, each priced
    Given a Groq actor "bulk" with:
      """
      live: {rpm: 60}
      """
    When the Groq actor maps 4 prompts in live mode
    Then the Groq run's 4 results are in input order, each the emulated reply to its prompt, each priced

  Scenario: A client of the wrong kind is refused, naming it
    When a Groq actor "wrong" is given an OpenAI client
    Then a ConfigurationError is raised
    And the error names the field "client"
