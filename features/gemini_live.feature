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
