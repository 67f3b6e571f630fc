Feature: An actor answered by Mistral's chat completions, live
  As a developer whose agent runs on Mistral models
  I want `provider: mistral` in an actor's configuration to answer calls through chat completions
  So that my agent gets text, tool calls, structured answers, usage and costs in the same ActorResponse as with any
  other provider, through the official mistralai SDK

  Every call below goes through the unmodified mistralai SDK to the emulator's Mistral API, in process.

  Background:
    Given an emulated Mistral API whose chat calls are kept

  Scenario: A live call returns the full ActorResponse, its usage priced at Mistral's live prices
    Given a Mistral actor "pilot" with:
      """
      system_prompt: You answer in one line.
      temperature: 0.7
      top_p: 0.9
      max_tokens: 600
      stop_sequences: ["tide table"]
      provider_options: {mistral: {random_seed: 7, safe_prompt: false}}
      """
    When the actor is asked "Is the harbour open?"
    Then the answer is the emulated reply to "Is the harbour open?"
    And the response has these fields:
      | field        | value                |
      | model        | mistral-small-latest |
      | provider     | mistral              |
      | mode         | live                 |
      | stop_reason  | end_turn             |
      | ids.batch_id |                      |
      | cost.pricing | live                 |
    And the Mistral answer's cost is what genai-prices asks for "mistral-small-latest" at live prices
    And Mistral was sent, in its chat body:
      | path                 | value                     |
      | messages.0.role      | "system"                  |
      | messages.0.content   | "You answer in one line." |
      | messages.1.content   | "Is the harbour open?"    |
      | temperature          | 0.7                       |
      | top_p                | 0.9                       |
      | max_tokens           | 600                       |
      | stop                 | ["tide table"]            |
      | random_seed          | 7                         |
      | safe_prompt          | false                     |
    And the API received these calls:
      | call                     | count |
      | mistral.models.get       | 1     |
      | mistral.chat.completions | 1     |

  Scenario: A long answer is streamed, and the chunks make the same answer
    Given a Mistral actor "long" with:
      """
      max_tokens: 8000
      """
    When the actor is asked "Tell me about the tides of the Atlantic coast"
    Then the answer is the emulated reply to "Tell me about the tides of the Atlantic coast"
    And the response has these fields:
      | field       | value    |
      | stop_reason | end_turn |
    And Mistral was sent, in its chat body:
      | path       | value |
      | stream     | true  |
      | max_tokens | 8000  |

  Scenario: A forced function is called; its result goes back as a tool message answering the call
    Given a Mistral actor "recorder" with:
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
    Then the Mistral actor called "record_tide" with a string "port" and a number "height_m"
    And the response has these fields:
      | field       | value    |
      | stop_reason | tool_use |
    And Mistral was sent, in its chat body:
      | path                        | value                                                     |
      | tools.0.function.name       | "record_tide"                                             |
      | tool_choice                 | {"type": "function", "function": {"name": "record_tide"}} |
    When the Mistral actor is told the result "recorded" of that call
    Then Mistral was sent, in its chat body:
      | path                                  | value         |
      | messages.1.role                       | "assistant"   |
      | messages.1.tool_calls.0.function.name | "record_tide" |
      | messages.2.role                       | "tool"        |
      | messages.2.content                    | "recorded"    |

  Scenario: A response model is asked for as JSON of its schema, and the answer is parsed into it
    Given a Mistral actor "planner" with:
      """
      max_tokens: 400
      """
    When the Mistral actor is asked "Plan a voyage" for a Voyage
    Then the Mistral answer is parsed into a Voyage
    And Mistral was sent, in its chat body:
      | path                                  | value         |
      | response_format.type                  | "json_schema" |
      | response_format.json_schema.name      | "Voyage"      |
      | response_format.json_schema.schema.type | "object"    |

  Scenario Outline: What Mistral would refuse is refused before anything is sent: <what>
    When a Mistral actor "eager" is set up with:
      """
      <setting>
      """
    Then a ConfigurationError is raised
    And the error names the field "<field>"
    And the error message contains "<mention>"
    And nothing was sent to Mistral

    Examples:
      | what                     | setting                                         | field                               | mention                                  |
      | a temperature above 1.5  | temperature: 1.8                                | temperature                         | outside the range Mistral takes, 0 to 1.5 |
      | a top_p above 1          | top_p: 1.5                                      | top_p                               | outside the range Mistral takes, 0 to 1  |
      | a top_k                  | top_k: 40                                       | top_k                               | temperature and top_p only               |
      | Anthropic's thinking     | thinking: {type: enabled, budget_tokens: 2048}  | thinking                            | think by themselves                      |
      | a negative random seed   | provider_options: {mistral: {random_seed: -1}}  | provider_options.mistral.random_seed | Invalid Mistral setting                 |

  Scenario: An image sent to a Mistral model whose models endpoint says it does not read images is refused before the call
    Given a Mistral actor "viewer" with:
      """
      model: mistral-large-latest
      """
    When the actor is asked with:
      """
      messages:
        - role: user
          content:
            - {type: text, text: "What does this chart say?"}
            - {type: image, source: {type: url, url: "https://example.com/tides.png"}}
      """
    Then a ConfigurationError is raised
    And the error names the field "messages[0].content[1]"
    And the error message contains "Mistral's model 'mistral-large-latest' does not read images (its models endpoint says vision: false)"
    And the ledger holds no requests and no batches
    And the API received these calls:
      | call                     | count |
      | mistral.models.get       | 1     |
      | mistral.chat.completions | 0     |

  Scenario: A model Mistral does not serve is refused before the call, naming the models it may have meant
    Given a Mistral actor "typo" with:
      """
      model: mistral-larg-latest
      """
    When the actor is asked "Hello"
    Then a ConfigurationError is raised
    And the error message contains "Did you mean 'mistral-large-latest'"
    And the API received these calls:
      | call                     | count |
      | mistral.chat.completions | 0     |

  Scenario: A call's own tools are checked before anything is sent
    Given a Mistral actor "tooled" with:
      """
      max_tokens: 64
      """
    When the actor is asked "Hello" with:
      """
      tools:
        - name: record tide
          input_schema: {type: object}
      """
    Then a ConfigurationError is raised
    And the error names the field "tools[0].name"

  Scenario: A 429 pauses the call for the wait its retry-after asks for, then the call is answered
    Given a Mistral actor "patient" with:
      """
      max_tokens: 64
      """
    And the Mistral emulator answers the next chat call with status 429, asking to wait 7 seconds
    When the actor is asked "Is the harbour open?"
    Then the answer is the emulated reply to "Is the harbour open?"
    And the answer arrived 7 seconds after the call
    And the API received these calls:
      | call                     | count |
      | mistral.chat.completions | 2     |

  Scenario: A 429 with no retries left is a RateLimitError keeping the wait; a 500 is a ServerError; a 400 is not retried
    Given a Mistral actor "hasty" with:
      """
      live: {retries: {rate_limited: 0, server: 0}}
      """
    And the Mistral emulator answers the next chat call with status 429, asking to wait 7 seconds
    When the actor is asked "Is the harbour open?"
    Then a RateLimitError is raised
    And the rate limit error asks to wait 7 seconds and says it is retryable
    Given the Mistral emulator answers the next chat call with status 500
    When the actor is asked "Is the harbour open?"
    Then a ServerError is raised
    When the actor is asked "[[emulator:errored:invalid_request_error]] Is the harbour open?"
    Then an InvalidRequestError is raised
    And the error is not retryable

  Scenario: A model genai-prices does not know is answered with its cost unknown, not $0
    Given an emulated Mistral API that also serves the model "mistral-tidal-9"
    And a Mistral actor "novel" with:
      """
      model: mistral-tidal-9
      """
    When the actor is asked "Hello"
    Then the response has these fields:
      | field    | value           |
      | model    | mistral-tidal-9 |
      | provider | mistral         |
    And the answer's cost is unknown

  Scenario: Without a key, the actor says which variable to set before anything is sent
    Given a Mistral actor "keyless" with no client, whose key variable is unset
    When the actor is asked "Hello"
    Then a ConfigurationError is raised
    And the error message contains "MISTRAL_API_KEY"
    And nothing was sent to Mistral

  Scenario: An actor building its own client reads its key and server URL from the environment, as the SDK would be told them
    Given an emulated Mistral API on a socket, named by MISTRAL_SERVER_URL, with MISTRAL_API_KEY set
    And a Mistral actor "own" building its own client
    When the actor is asked "Hello"
    Then the answer is the emulated reply to "Hello"
    And the API received these calls:
      | call                     | count |
      | mistral.chat.completions | 1     |

  Scenario Outline: A call Mistral could not take is refused before anything is sent: <what>
    Given a Mistral actor "careful" with:
      """
      max_tokens: 64
      """
    When the actor is asked with:
      """
      <call>
      """
    Then a ConfigurationError is raised
    And the error names the field "<field>"
    And the error message contains "<mention>"
    And nothing was sent to Mistral

    Examples:
      | what                                | call                                                                                                                  | field                 | mention                                      |
      | a server tool | {prompt: Hello, tools: [{name: web_search, type: web_search_20250305}]} | tools[0].type | Mistral takes only function tools |
      | a tool declared twice | {prompt: Hello, tools: [{name: record_tide}, {name: record_tide}]} | tools[1].name | 'record_tide' is declared twice |
      | a forced tool with no name | {prompt: Hello, tools: [{name: record_tide}], tool_choice: {type: tool}} | tool_choice.name | must name the tool |
      | a forced tool it was not given | {prompt: Hello, tools: [{name: record_tide}], tool_choice: {type: tool, name: sound_depth}} | tool_choice.name | 'sound_depth' is not among the request's tools |
      | a tool choice Mistral has no word for | {prompt: Hello, tools: [{name: record_tide}], tool_choice: {type: sometimes}} | tool_choice.type | is not one of auto, any, tool, none |
      | an empty stop sequence | {prompt: Hello, stop_sequences: [' ']} | stop_sequences.0 | the stop sequence is empty |
      | a stop sequence given twice | {prompt: Hello, stop_sequences: [ebb, ebb]} | stop_sequences.1 | 'ebb' is given twice |
      | streaming asked in extra_params | {prompt: Hello, extra_params: {stream: true}} | extra_params.stream | lowtide reads whole answers |
      | extra_params repeating max_tokens | {prompt: Hello, extra_params: {max_tokens: 5}} | extra_params | already set: max_tokens |
      | a parameter the SDK cannot send | {prompt: Hello, extra_params: {seed: 3}} | extra_params | the mistralai SDK cannot send seed |
      | an image by file id | {messages: [{role: user, content: [{type: image, source: {type: file, file_id: file_1}}]}]} | messages[0].content[0].source | not by file id |
      | a PDF sent inline | {messages: [{role: user, content: [{type: document, source: {type: base64, media_type: application/pdf, data: JVBERi0=}}]}]} | messages[0].content[0].source | document_url |
      | an image in a tool result | {messages: [{role: user, content: [{type: tool_result, tool_use_id: abcdefghi, content: [{type: image, source: {type: url, url: 'https://example.com/a.png'}}]}]}]} | messages[0].content[0].content | only text in a tool result |

  Scenario: Images and documents by URL go as Mistral's chunks; an earlier plain answer goes back as the assistant's text; a tool choice in Mistral's words
    Given a Mistral actor "viewer" with:
      """
      max_tokens: 64
      """
    When the actor is asked with:
      """
      messages:
        - role: user
          content:
            - {type: text, text: "What does this chart say?"}
            - {type: image, source: {type: url, url: "https://example.com/tides.png"}}
            - {type: document, source: {type: url, url: "https://example.com/tides.pdf"}}
        - role: assistant
          content: [{type: text, text: "High tide at noon."}]
        - role: user
          content: [{type: text, text: "And low tide?"}]
      tools: [{name: record_tide, input_schema: {type: object}}]
      tool_choice: {type: auto, disable_parallel_tool_use: true}
      """
    Then the response has these fields:
      | field    | value   |
      | provider | mistral |
    And Mistral was sent, in its chat body:
      | path                               | value                                                            |
      | messages.0.content.1               | {"type": "image_url", "image_url": {"url": "https://example.com/tides.png"}} |
      | messages.0.content.2               | {"type": "document_url", "document_url": "https://example.com/tides.pdf"}    |
      | messages.1.role                    | "assistant"                                                      |
      | messages.1.content                 | "High tide at noon."                                             |
      | messages.2.content                 | [{"type": "text", "text": "And low tide?"}]                      |
      | tool_choice                        | "auto"                                                           |
      | parallel_tool_calls                | false                                                            |

  Scenario Outline: A client the mistralai SDK cannot use (<which>) is refused before anything is sent
    When a Mistral actor "misfit" is given a <which> of another kind, and asked "Hello"
    Then a ConfigurationError is raised
    And the error names the field "<which>"
    And the error message contains "<mention>"
    And nothing was sent to Mistral

    Examples:
      | which       | mention                                         |
      | client      | client must be a mistralai.client.Mistral       |
      | http_client | http_client must be an httpx2.AsyncClient       |

  Scenario: A long answer forced to call a function is streamed, and the call arrives whole
    Given a Mistral actor "recorder" with:
      """
      max_tokens: 8000
      tool_choice: {type: tool, name: record_tide}
      """
    When the actor is asked "Record today's high tide" with:
      """
      tools:
        - name: record_tide
          input_schema:
            type: object
            properties: {port: {type: string}, height_m: {type: number}}
            required: [port, height_m]
      """
    Then the Mistral actor called "record_tide" with a string "port" and a number "height_m"
    And Mistral was sent, in its chat body:
      | path   | value |
      | stream | true  |

  Scenario: The Mistral providers' package names its classes, and says plainly which names it has not
    Then lowtide.providers.mistral gives MistralProvider, MistralBatchProvider and MistralOptions
    And lowtide.providers.mistral has no MistralClient
