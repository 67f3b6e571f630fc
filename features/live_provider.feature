Feature: Calls answered through the live Messages API
  As a developer whose actor runs in live mode
  I want each call answered through the Messages API with the full ActorResponse
  So that my agent gets text, tool calls, thinking and costs in the same shape as a batch-mode actor would

  Background:
    Given an emulated Anthropic API

  Scenario: A live call returns the full ActorResponse, priced at live prices
    Given an actor "chatter" with:
      """
      model: claude-sonnet-5-5
      system_prompt: You answer in one line.
      """
    When the actor is asked "Is the harbour open?"
    Then the answer is the emulated reply to "Is the harbour open?"
    And the response has these fields:
      | field         | value             |
      | model         | claude-sonnet-5-5 |
      | provider      | anthropic         |
      | mode          | live              |
      | stop_reason   | end_turn          |
      | stop_sequence |                   |
      | ids.batch_id  |                   |
      | ids.custom_id |                   |
      | cost.pricing  | live              |
      | cost.note     |                   |
      | provider_details |                   |
    And the response ids start with:
      | field          | prefix |
      | ids.message_id | msg_   |
      | ids.request_id | req_   |
    And the response content is one text block holding the answer
    And the response reports some input and output tokens, and no cache use
    And the cost is what the tokens cost at these rates, in dollars per million tokens:
      | input | output | cache write | cache read |
      | 2.00  | 10.00  | 2.50        | 0.10       |

  Scenario: A forced tool call comes back as tool calls
    Given an actor "recorder" with:
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
        - name: unused
          input_schema: {type: object}
      """
    Then the actor called the tool "record_tide" with a string "port" and a number "height_m"
    And the response has these fields:
      | field       | value    |
      | stop_reason | tool_use |
      | text        |          |

  Scenario: A tool choice given with the call wins over the configured one
    Given an actor "recorder" with:
      """
      tool_choice: {type: none}
      """
    When the actor is asked, in Python, with:
      """
      {
          "prompt": "Record the tide at Brest",
          "tools": [{"name": "record_tide", "input_schema": {"type": "object", "properties": {"port": {"type": "string"}, "height_m": {"type": "number"}}, "required": ["port", "height_m"]}}],
          "tool_choice": {"type": "any"},
      }
      """
    Then the actor called the tool "record_tide" with a string "port" and a number "height_m"

  Scenario: Extended thinking comes back as the response's thinking, before the answer
    Given an actor "thinker" with:
      """
      max_tokens: 4000
      thinking: {type: enabled, budget_tokens: 2000}
      """
    When the actor is asked "Why do tides happen twice a day?"
    Then the response content holds the block types "thinking, text"
    And the response's thinking mentions "Why do tides happen twice a day?"
    And the answer is the emulated reply to "Why do tides happen twice a day?"

  Scenario: A stop sequence ends the answer where it first appears
    Given an actor "brief" with:
      """
      stop_sequences: ["harbour", "tide"]
      """
    When the actor is asked "When is the tide in the harbour?"
    Then the answer is "Emulated reply to "When is the "
    And the response has these fields:
      | field         | value         |
      | stop_reason   | stop_sequence |
      | stop_sequence | tide          |

  Scenario: A call's own stop sequences and max_tokens override the configuration
    Given an actor "brief" with:
      """
      stop_sequences: ["never-said"]
      max_tokens: 1000
      """
    When the actor is asked "Tell me everything about the tide" with:
      """
      max_tokens: 3
      """
    Then the answer is "Emulated rep"
    And the response has these fields:
      | field               | value      |
      | stop_reason         | max_tokens |
      | usage.output_tokens | 3          |

  Scenario: A conversation is given as messages instead of a prompt
    Given an actor "chatter" in live mode
    When the actor is asked with:
      """
      messages:
        - {role: user, content: "What is high tide?"}
        - {role: assistant, content: "The highest water level of a tide cycle."}
        - {role: user, content: [{type: text, text: "And low tide?"}]}
      """
    Then the answer is the emulated reply to "And low tide?"

  Scenario: Messages and tools can be given as lowtide's own types
    Given an actor "chatter" in live mode
    When the actor is asked with a ChatMessage conversation and a ToolSpec it is forced to use
    Then the actor called the tool "record_tide" with a string "port" and a number "height_m"

  Scenario: A prompt and messages together are refused before anything is sent
    Given an actor "chatter" in live mode
    When the actor is asked "Hello" with:
      """
      messages: [{role: user, content: Hi}]
      """
    Then a ConfigurationError is raised
    And the error message is:
      """
      Give either a prompt or messages (exactly one of them).
      """
    And the error names the field "prompt"
    And the API received no calls at all

  Scenario: A call with neither a prompt nor messages is refused before anything is sent
    Given an actor "chatter" in live mode
    When the actor is asked with:
      """
      max_tokens: 10
      """
    Then a ConfigurationError is raised
    And the error names the field "prompt"
    And the API received no calls at all

  Scenario Outline: Bad call arguments are refused before anything is sent, naming the argument
    Given an actor "chatter" in live mode
    When the actor is asked "Hello" with:
      """
      <arguments>
      """
    Then a ConfigurationError is raised
    And the error message contains "<message>"
    And the error names the field "<field>"
    And the API received no calls at all

    Examples:
      | arguments                         | field        | message                                                                                 |
      | {colour: blue, flavour: mint}     | colour       | Unknown call parameter(s): colour, flavour.                                             |
      | {max_tokens: 0}                   | max_tokens   | Invalid call to actor 'chatter': max_tokens: Input should be greater than or equal to 1 |
      | {messages: []}                    | prompt       | Give either a prompt or messages                                                        |
      | {tools: [{description: no name}]} | tools.0.name | Invalid call to actor 'chatter': tools.0.name: Field required                           |
      | {system: 5}                              | system               | Invalid call to actor 'chatter': system: Input should be a valid string or a valid list |

  Scenario Outline: A message's content of neither shape is refused naming where it is wrong, not the shapes tried
    Given an actor "chatter" in live mode
    When the actor is asked with:
      """
      messages: [{role: user, content: <content>}]
      """
    Then a ConfigurationError is raised
    And the error message contains "<message>"
    And the error names the field "<field>"
    And the API received no calls at all

    Examples:
      | content | field                | message                                                                                             |
      | [5]     | messages.0.content.0 | Invalid call to actor 'chatter': messages.0.content.0: Input should be a valid dictionary            |
      | 5       | messages.0.content   | Invalid call to actor 'chatter': messages.0.content: Input should be a valid string or a valid list |

  Scenario: A conversation with a message of an unknown role is refused before anything is sent
    Given an actor "chatter" in live mode
    When the actor is asked with:
      """
      messages: [{role: narrator, content: Once upon a time}]
      """
    Then a ConfigurationError is raised
    And the error names the field "messages.0.role"
    And the API received no calls at all

  Scenario: Extra API parameters of the configuration are passed through
    Given an actor "tiered" with:
      """
      extra_params: {service_tier: standard_only}
      """
    When the actor is asked "Hello"
    Then the answer is the emulated reply to "Hello"

  Scenario: An extra API parameter must not repeat one lowtide already sets
    Given an actor "confused" with:
      """
      temperature: 0.5
      extra_params: {temperature: 0.9, top_k: 5}
      """
    When the actor is asked "Hello"
    Then a ConfigurationError is raised
    And the error message is:
      """
      extra_params repeats parameter(s) already set: temperature
      """
    And the error names the field "extra_params"
    And the API received no calls at all

  Scenario: Sampling settings are sent to the live API as they are to the batch API
    Given an actor "careful" with:
      """
      temperature: 0.2
      top_p: 0.9
      top_k: 40
      """
    When the actor is asked "Hello"
    Then the answer is the emulated reply to "Hello"
    And the answer came through live mode

  Scenario: An extra API parameter the API does not know is the API's error
    Given an actor "inventive" with:
      """
      extra_params: {frequency_penalty: 0.5}
      """
    When the actor is asked "Hello"
    Then the call fails with InvalidRequestError
    And the error message contains "frequency_penalty"

  Scenario Outline: A short answer comes back in one response, a long one streamed
    Streaming costs the caller more CPU than a short answer itself, and the API asks for long answers to be streamed.

    Given the emulated API notes whether each Messages call asks for a stream
    And an actor "writer" with:
      """
      max_tokens: <max_tokens>
      """
    When the actor is asked "Is the harbour open?"
    Then the answer is the emulated reply to "Is the harbour open?"
    And the Messages call <how> a stream

    Examples:
      | max_tokens | how             |
      | 16         | did not ask for |
      | 4096       | did not ask for |
      | 4097       | asked for       |
      | 64000      | asked for       |
