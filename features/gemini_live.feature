Feature: An actor answered by Google's Gemini API, live
  As a developer whose agent runs on Gemini models
  I want `provider: gemini` in an actor's configuration to answer calls through generateContent
  So that my agent gets text, tool calls, structured answers, usage and costs in the same ActorResponse as with any
  other provider, through the official google-genai SDK

  Every call below goes through the unmodified google-genai SDK to the emulator's Gemini API, in process.

  Background:
    Given an emulated Gemini API

  Scenario: A live call returns the full ActorResponse, its usage priced at Gemini's live prices
    Given a Gemini actor "pilot" with:
      """
      system_prompt: You answer in one line.
      temperature: 1.5
      top_p: 0.9
      top_k: 40
      max_tokens: 600
      """
    When the actor is asked "Is the harbour open?"
    Then the answer is the emulated reply to "Is the harbour open?"
    And the response has these fields:
      | field        | value            |
      | model        | gemini-2.5-flash |
      | provider     | gemini           |
      | mode         | live             |
      | stop_reason  | end_turn         |
      | ids.batch_id |                  |
      | cost.pricing | live             |
    And the response content is one text block holding the answer
    And the Gemini answer's usage counts its thinking tokens as output, and nothing cached
    And the Gemini answer's cost is what genai-prices asks for "gemini-2.5-flash" at live prices
    And Gemini was sent, in its generateContent body:
      | path                                          | value                       |
      | systemInstruction.parts.0.text                | "You answer in one line."   |
      | contents.0.role                               | "user"                      |
      | contents.0.parts.0.text                       | "Is the harbour open?"      |
      | generationConfig.temperature                  | 1.5                         |
      | generationConfig.topP                         | 0.9                         |
      | generationConfig.topK                         | 40                          |
      | generationConfig.maxOutputTokens              | 600                         |
    And the API received these calls:
      | call                    | count |
      | gemini.generate_content | 1     |

  Scenario: A forced function is called; its result goes back as a function response named by the function
    Given a Gemini actor "recorder" with:
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
    Then the Gemini actor called "record_tide" with a string "port" and a number "height_m"
    And the response has these fields:
      | field       | value    |
      | stop_reason | tool_use |
      | text        |          |
    And Gemini was sent, in its generateContent body:
      | path                                                           | value           |
      | tools.0.functionDeclarations.0.name                            | "record_tide"   |
      | tools.0.functionDeclarations.0.parameters_json_schema.type     | "object"        |
      | toolConfig.functionCallingConfig.mode                          | "ANY"           |
      | toolConfig.functionCallingConfig.allowedFunctionNames          | ["record_tide"] |
    When the Gemini actor is told the result "recorded" of that call
    Then Gemini was sent, in its generateContent body:
      | path                                   | value                    |
      | contents.1.role                        | "model"                  |
      | contents.1.parts.0.functionCall.name   | "record_tide"            |
      | contents.2.parts.0.functionResponse    | {"name": "record_tide", "response": {"output": "recorded"}} |

  Scenario: A response model is asked for as JSON of its schema, and the answer is parsed into it
    Given a Gemini actor "planner" with:
      """
      max_tokens: 400
      """
    When the Gemini actor is asked "Plan a voyage" for a Voyage
    Then the Gemini answer is parsed into a Voyage
    And Gemini was sent, in its generateContent body:
      | path                                    | value              |
      | generationConfig.responseMimeType       | "application/json" |
      | generationConfig.responseJsonSchema.type | "object"          |

  Scenario: Stop sequences and thinking settings reach Gemini in its own words
    Given a Gemini actor "brief" with:
      """
      stop_sequences: ["reply"]
      provider_options: {gemini: {thinking_budget: 0}}
      """
    When the actor is asked "Hello"
    Then the Gemini answer's text is "Emulated "
    And the Gemini answer's usage counts no thinking tokens
    And Gemini was sent, in its generateContent body:
      | path                                          | value     |
      | generationConfig.stopSequences                | ["reply"] |
      | generationConfig.thinkingConfig.thinking_budget | 0       |

  Scenario Outline: What Gemini would refuse is refused before anything is sent: <what>
    When a Gemini actor "eager" is configured with:
      """
      <setting>
      """
    Then a ConfigurationError is raised
    And the error names the field "<field>"
    And the error message contains "<mention>"
    And nothing was sent to Gemini

    Examples:
      | what                          | setting                                           | field                                  | mention                                   |
      | a temperature above 2         | temperature: 2.5                                  | temperature                            | outside the range Gemini takes, 0 to 2    |
      | a top_p above 1               | top_p: 1.5                                        | top_p                                  | outside the range Gemini takes, 0 to 1    |
      | a top_k of 0                  | top_k: 0                                          | top_k                                  | below 1                                   |
      | six stop sequences            | stop_sequences: [a, b, c, d, e, f]                | stop_sequences                         | at most 5                                 |
      | a blank stop sequence         | stop_sequences: ["  "]                            | stop_sequences.0                       | empty                                     |
      | Anthropic's thinking          | thinking: {type: enabled, budget_tokens: 2048}    | thinking                               | thinking_budget                           |
      | a thinking budget below -1    | provider_options: {gemini: {thinking_budget: -2}} | provider_options.gemini.thinking_budget | Invalid Gemini setting                   |
      | a negative batch inline size  | provider_options: {gemini: {batch_inline_bytes: -1}} | provider_options.gemini.batch_inline_bytes | Invalid Gemini setting                |

  Scenario: A call's own tools are checked before anything is sent
    Given a Gemini actor "tooled"
    When the actor is asked "Hello" with:
      """
      tools:
        - name: 9lives
          input_schema: {type: object}
      """
    Then a ConfigurationError is raised
    And the error names the field "tools[0].name"
    And nothing was sent to Gemini

  Scenario Outline: A <reason> stop, or a blocked prompt, is an error naming it, never an answer, and is not retried
    Given a Gemini actor "careful"
    When the actor is asked "Hello [[emulator:<marker>]]"
    Then an InvalidRequestError is raised
    And the error message contains "<mention>"
    And the error is not retryable
    And the API received these calls:
      | call                    | count |
      | gemini.generate_content | 1     |

    Examples:
      | reason     | marker             | mention                                                            |
      | SAFETY     | finish:SAFETY      | stopped the answer for SAFETY; safety ratings HARM_CATEGORY_DANGEROUS_CONTENT: HIGH, blocked |
      | RECITATION | finish:RECITATION  | stopped the answer for RECITATION                                  |
      | blocked    | blocked:SAFETY     | blocked the prompt (SAFETY)                                        |

  Scenario: A 429 pauses the call for the wait its RetryInfo asks for, then the call is answered
    Given a Gemini actor "patient"
    And the Gemini emulator answers the next generateContent call with status 429, asking to wait 7 seconds
    When the actor is asked "Is the harbour open?"
    Then the answer is the emulated reply to "Is the harbour open?"
    And the answer arrived 7 seconds after the call
    And the API received these calls:
      | call                    | count |
      | gemini.generate_content | 2     |

  Scenario: A 429 with no retries left is a RateLimitError keeping the wait; a 500 is a ServerError
    Given a Gemini actor "hasty" with:
      """
      live: {retries: {rate_limited: 0, server: 0}}
      """
    And the Gemini emulator answers the next generateContent call with status 429, asking to wait 7 seconds
    When the actor is asked "Is the harbour open?"
    Then a RateLimitError is raised
    And the rate limit error asks to wait 7 seconds and says it is retryable
    Given the Gemini emulator answers the next generateContent call with status 500
    When the actor is asked "Is the harbour open?"
    Then a ServerError is raised

  Scenario: A model genai-prices does not know is answered with its cost unknown, not $0
    Given an emulated Gemini API that also serves the model "gemini-tidal-9"
    And a Gemini actor "novel" with:
      """
      model: gemini-tidal-9
      """
    When the actor is asked "Hello"
    Then the response has these fields:
      | field    | value          |
      | model    | gemini-tidal-9 |
      | provider | gemini         |
    And the answer's cost is unknown

  Scenario: Without a key, the actor says which variable to set before anything is sent
    Given a Gemini actor "keyless" with no client, whose key variables are unset
    When the actor is asked "Hello"
    Then a ConfigurationError is raised
    And the error message contains "GEMINI_API_KEY"
    And nothing was sent to Gemini

  Scenario Outline: A call Gemini would refuse is refused before anything is sent: <case>
    Given a Gemini actor "strict"
    When the Gemini actor is asked "Hello" given <case>
    Then a ConfigurationError is raised
    And the error names the field "<field>"
    And the error message contains "<mention>"
    And nothing was sent to Gemini

    Examples:
      | case                                | field                           | mention                                  |
      | a function declared twice           | tools[1].name                   | declared twice                           |
      | a server tool                       | tools[0].type                   | only function tools                      |
      | a forced tool with no name          | tool_choice.name                | must name the tool                       |
      | a forced tool it was not given      | tool_choice.name                | not among the request's tools            |
      | a tool choice of another kind       | tool_choice.type                | not one of auto, any, tool, none         |
      | a tool result answering no call     | messages[0].content[0].tool_use_id | answers no tool call                  |
      | an image in a tool result           | messages[2].content[0].content  | only text in a tool result               |
      | a PDF whose data is not base64      | messages.0.content.0.source.data | not valid base64                        |
      | a stop sequence given twice         | stop_sequences.1                | given twice                              |

  Scenario Outline: <case> reaches Gemini in its own words
    Given a Gemini actor "open"
    When the Gemini actor is asked "Hello" given <case>
    Then the Gemini call succeeded
    And Gemini was sent, in its generateContent body:
      | path   | value   |
      | <path> | <value> |

    Examples:
      | case                         | path                                          | value                                   |
      | a free tool choice           | toolConfig.functionCallingConfig.mode         | "AUTO"                                  |
      | no tool choice allowed       | toolConfig.functionCallingConfig.mode         | "NONE"                                  |
      | any tool choice              | toolConfig.functionCallingConfig.mode         | "ANY"                                   |
      | an inline image              | contents.0.parts.0.inlineData.mime_type       | "image/png"                             |
      | an inline PDF                | contents.0.parts.0.inlineData.mime_type       | "application/pdf"                       |
      | a further generation setting | generationConfig.seed                         | 7                                       |
      | a call id Gemini gave        | contents.1.parts.0.functionCall.id            | "call-7"                                |

  Scenario: Thought summaries asked for come back as thinking, counted as output
    Given a Gemini actor "thoughtful" with:
      """
      provider_options: {gemini: {include_thoughts: true, api_version: v1}}
      """
    When the actor is asked "Why do tides turn?"
    Then the answer is the emulated reply to "Why do tides turn?"
    And the Gemini answer holds thinking before its text

  Scenario: An actor building its own client takes the key, the base URL and an HTTP client, and closes what it made
    Given a Gemini actor "own" that builds its own client with the key, the emulator's base URL and an HTTP client
    When the actor is asked "Hello"
    Then the answer is the emulated reply to "Hello"

  Scenario Outline: A client of the wrong kind is refused, naming it
    When a Gemini actor "confused" is given <what>
    Then a ConfigurationError is raised
    And the error names the field "<field>"

    Examples:
      | what                      | field       |
      | an OpenAI client          | client      |
      | an HTTP client of httpx   | http_client |

  Scenario: A connection that cannot be made is an APIUnreachableError naming the host
    Given a Gemini actor "stranded" whose API cannot be reached
    When the actor is asked "Hello"
    Then an APIUnreachableError is raised

  Scenario: Gemini's answers and errors are read as the API sends them
    Then a Gemini answer of these parts is read as these blocks:
      | part                                                                  | block                                                                     |
      | {"text": "Let me see", "thought": true, "thoughtSignature": "c2ln"}   | {"type": "thinking", "thinking": "Let me see", "signature": "c2ln"}       |
      | {"text": ""}                                                          |                                                                           |
      | {"functionCall": {"name": "f", "id": "fc-1", "args": {"a": 1}}}       | {"type": "tool_use", "id": "fc-1", "name": "f", "input": {"a": 1}}        |
      | {"functionCall": {"name": "g"}}                                       | {"type": "tool_use", "id": "gemini-call-3-g", "name": "g", "input": {}}   |
      | {"executableCode": {"code": "1+1", "language": "PYTHON"}}             | {"type": "other", "data": {"executableCode": {"code": "1+1", "language": "PYTHON"}}} |
      | {"thoughtSignature": "c2ln"}                                          |                                                                           |
    And these Gemini error bodies ask for these waits:
      | body                                                                                                         | wait |
      | {"error": {"details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0.5s"}]}}        | 0.5  |
      | [{"error": {"details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "30s"}]}}]       | 30   |
      | {"error": {"details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo"}, "x", {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "soon"}]}} |      |
      | "Not JSON"                                                                                                   |      |
    And the Gemini provider's classes are found by name in lowtide.providers.gemini

  Scenario: A live bulk run of a Gemini actor answers every item, in input order, each priced
    Given a Gemini actor "bulk" with:
      """
      live: {rpm: 60}
      """
    When the Gemini actor maps 6 prompts in live mode
    Then the Gemini run's 6 results are in input order, each the emulated reply to its prompt, each priced
