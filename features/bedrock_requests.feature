Feature: What a Bedrock actor sends to Converse, and what it reads back
  As a developer whose agents run on Bedrock models
  I want every part of a request to reach Converse in AWS's own shape, and every part of its answer read back
  So that conversations with tools, images, documents and reasoning work on Bedrock as on any provider

  Every call goes through the unmodified boto3 to the emulator's AWS account on a loopback socket.

  Background:
    Given an emulated AWS account on a socket, whose batch inference jobs take 0 seconds
    And a Bedrock actor "tides" with:
      """
      model: amazon.nova-lite-v1:0
      max_tokens: 256
      """

  Scenario: A conversation with a system prompt, sampling settings, tools, their results, an image and a PDF reaches Converse in its shape
    When the actor is asked with:
      """
      system: You log tides.
      temperature: 0.25
      top_p: 0.5
      top_k: 40
      stop_sequences: [STOP]
      extra_params: {requestMetadata: {team: harbour}}
      tools:
        - name: log_tide
          description: Log a tide.
          input_schema: {type: object, properties: {place: {type: string}}}
        - name: ring_bell
      messages:
        - role: user
          content:
            - {type: text, text: Log the tide in this chart.}
            - {type: image, source: {type: base64, media_type: image/png, data: aGVsbG8=}}
            - {type: document, title: Tide table.pdf, source: {type: base64, media_type: application/pdf, data: aGVsbG8=}}
        - role: assistant
          content:
            - {type: thinking, thinking: The chart shows Brest., signature: c2ln}
            - {type: text, text: Logging it.}
            - {type: tool_use, id: toolu_1, name: log_tide, input: {place: Brest}}
            - {type: tool_use, id: toolu_2, name: ring_bell, input: {}}
        - role: user
          content:
            - {type: tool_result, tool_use_id: toolu_1, content: [{type: text, text: Logged at Brest.}]}
            - {type: tool_result, tool_use_id: toolu_2}
      """
    Then the answer is the emulated reply to "Logged at Brest."
    And Converse received these fields:
      | field                             | json                                                                                       |
      | modelId                           | "amazon.nova-lite-v1:0"                                                                    |
      | system                            | [{"text": "You log tides."}]                                                               |
      | inferenceConfig                   | {"maxTokens": 256, "temperature": 0.25, "topP": 0.5, "stopSequences": ["STOP"]}            |
      | additionalModelRequestFields      | {"top_k": 40}                                                                              |
      | requestMetadata                   | {"team": "harbour"}                                                                        |
      | toolConfig                        | {"tools": [{"toolSpec": {"name": "log_tide", "description": "Log a tide.", "inputSchema": {"json": {"type": "object", "properties": {"place": {"type": "string"}}}}}}, {"toolSpec": {"name": "ring_bell", "inputSchema": {"json": {"type": "object", "properties": {}}}}}]} |
      | messages.0.content.1              | {"image": {"format": "png", "source": {"bytes": "aGVsbG8="}}}                              |
      | messages.0.content.2              | {"document": {"format": "pdf", "name": "Tide table", "source": {"bytes": "aGVsbG8="}}}     |
      | messages.1.content                | [{"text": "Logging it."}, {"toolUse": {"toolUseId": "toolu_1", "name": "log_tide", "input": {"place": "Brest"}}}, {"toolUse": {"toolUseId": "toolu_2", "name": "ring_bell", "input": {}}}] |
      | messages.2.content                | [{"toolResult": {"toolUseId": "toolu_1", "content": [{"text": "Logged at Brest."}]}}, {"toolResult": {"toolUseId": "toolu_2", "content": [{"text": ""}]}}] |

  Scenario: A document without a title goes as "document", and a JPEG, GIF or WebP image in its own format
    When the actor is asked with:
      """
      messages:
        - role: user
          content:
            - {type: document, source: {type: base64, media_type: application/pdf, data: aGVsbG8=}}
            - {type: image, source: {type: base64, media_type: image/jpeg, data: aGVsbG8=}}
            - {type: image, source: {type: base64, media_type: image/gif, data: aGVsbG8=}}
            - {type: image, source: {type: base64, media_type: image/webp, data: aGVsbG8=}}
            - {type: text, text: "What do these show?"}
      """
    Then the answer is the emulated reply to "What do these show?"
    And Converse received these fields:
      | field                            | json                       |
      | messages.0.content.0.document.name | "document"               |
      | messages.0.content.1.image.format  | "jpeg"                   |
      | messages.0.content.2.image.format  | "gif"                    |
      | messages.0.content.3.image.format  | "webp"                   |

  Scenario Outline: tool_choice <choice> is Converse's toolChoice <sent>, and the model <does>
    When the actor is asked "When is high tide?" with:
      """
      tools:
        - name: log_tide
          input_schema: {type: object, properties: {place: {type: string}}, required: [place]}
      tool_choice: <choice>
      """
    Then the response has these fields:
      | field       | value  |
      | stop_reason | <stop> |
    And Converse received these fields:
      | field                 | json   |
      | toolConfig.toolChoice | <sent> |

    Examples:
      | choice                       | sent                              | does                    | stop     |
      | {type: any}                  | {"any": {}}                       | calls the tool          | tool_use |
      | {type: tool, name: log_tide} | {"tool": {"name": "log_tide"}}    | calls the tool it names | tool_use |
      | {type: auto}                 | null                              | answers in words        | end_turn |

  Scenario: tool_choice none sends no tools at all, and the model answers in words
    When the actor is asked "When is high tide?" with:
      """
      tools: [{name: log_tide}]
      tool_choice: {type: none}
      """
    Then the answer is the emulated reply to "When is high tide?"
    And Converse received these fields:
      | field      | json |
      | toolConfig | null |

  Scenario Outline: <what> is refused before anything is sent
    When the actor is asked "When is high tide?" with:
      """
      <settings>
      """
    Then a ConfigurationError is raised
    And the error message contains "<says>"
    And the API received no calls at all

    Examples:
      | what                              | settings                                                                        | says                                                |
      | A tool_choice naming no tool sent | {tools: [{name: log_tide}], tool_choice: {type: tool, name: ring_bell}}         | 'ring_bell' is not among the request's tools        |
      | A tool_choice of an unknown type  | {tools: [{name: log_tide}], tool_choice: {type: sometimes}}                     | tool_choice type 'sometimes' is not one of          |
      | A tool name Converse cannot take  | {tools: [{name: log tide}]}                                                     | is not a name Converse takes                        |
      | A server tool                     | {tools: [{name: web_search, type: web_search_20250305}]}                        | only function tools are sent                        |
      | A Bedrock setting it does not have | {provider_options: {bedrock: {regoin: eu-west-1}}}                             | Invalid Bedrock setting provider_options.bedrock.regoin |

  Scenario Outline: <what> is refused before anything is sent
    When the actor is asked with:
      """
      messages: [{role: user, content: [<block>]}]
      """
    Then a ConfigurationError is raised
    And the error message contains "<says>"
    And the API received no calls at all

    Examples:
      | what              | block                                                                            | says                                                                          |
      | A BMP image       | {type: image, source: {type: base64, media_type: image/bmp, data: aGVsbG8=}}     | messages[0].content[0]: Bedrock takes png, jpeg, gif or webp images, not image/bmp |
      | A document by URL | {type: document, source: {type: url, url: "https://example.com/t.pdf"}}          | messages[0].content[0]: Bedrock takes images and documents inline             |

  Scenario: A stop sequence the answer reaches ends it there, its stop reason stop_sequence
    When the actor is asked "When is high tide?" with:
      """
      stop_sequences: [ply]
      """
    Then the answer is "Emulated re"
    And the response has these fields:
      | field       | value         |
      | stop_reason | stop_sequence |

  Scenario: An answer cut at max_tokens says so
    When the actor is asked "When is high tide?" with:
      """
      max_tokens: 3
      """
    Then the answer is "Emulated rep"
    And the response has these fields:
      | field       | value      |
      | stop_reason | max_tokens |

  Scenario Outline: A Claude model's reasoning, asked for with thinking, comes back first and signed (<how>)
    Given a Bedrock actor "thinker" with:
      """
      model: anthropic.claude-3-5-haiku-20241022-v1:0
      """
    When the actor is asked "When is high tide?" with:
      """
      max_tokens: <max_tokens>
      thinking: {type: enabled, budget_tokens: 1024}
      """
    Then the response content holds the block types "thinking, text"
    And the response's thinking mentions "When is high tide?"
    And the Bedrock answer's thinking is signed
    And Converse received these fields:
      | field                        | json                                                   |
      | additionalModelRequestFields | {"thinking": {"type": "enabled", "budget_tokens": 1024}} |
    And the API received these calls:
      | call     | count |
      | <call>   | 1     |

    Examples:
      | how               | max_tokens | call                    |
      | in one response   | 2048       | bedrock.converse        |
      | streamed          | 8000       | bedrock.converse_stream |

  Scenario: A streamed tool call comes back whole, its input read from the stream's pieces
    When the actor is asked "[[emulator:tool:log_tide]] Log today's high tide." with:
      """
      max_tokens: 8000
      tools:
        - name: log_tide
          input_schema: {type: object, properties: {place: {type: string}, height: {type: number}}, required: [place, height]}
      """
    Then the actor called the tool "log_tide" with a string "place" and a number "height"
    And the response has these fields:
      | field       | value    |
      | stop_reason | tool_use |
    And the API received these calls:
      | call                    | count |
      | bedrock.converse_stream | 1     |

  Scenario: A stream that ends before its answer is finished is a connection error, never a cut answer
    When Bedrock's ConverseStream ends after a text block, before its messageStop
    Then an APIConnectionError is raised
    And the error message contains "Bedrock's stream ended after 1 block(s), before its answer was finished."

  Scenario Outline: Converse's answer <what> is read as <reading>
    When Bedrock's Converse answers with:
      """
      <answer>
      """
    Then the Bedrock answer has these fields:
      | field            | json      |
      | stop_reason      | <stop>    |
      | content          | <content> |
      | provider_details | <details> |

    Examples:
      | what                              | answer                                                                                                                                  | reading                           | stop          | content                                                                                         | details                                                     |
      | a guardrail stopped, with a trace | {"output": {"message": {"content": [{"text": "Sorry."}]}}, "stopReason": "guardrail_intervened", "trace": {"guardrail": {"action": "INTERVENED"}}} | a refusal, its trace kept | "refusal"     | [{"type": "text", "text": "Sorry."}]                                                             | {"trace": {"guardrail": {"action": "INTERVENED"}}, "stop_reason": "guardrail_intervened"} |
      | the content filter stopped        | {"output": {"message": {"content": [{"text": ""}]}}, "stopReason": "content_filtered"}                                                | a refusal, its empty text dropped | "refusal"     | []                                                                                              | {"stop_reason": "content_filtered"}                          |
      | with reasoning and a tool call    | {"output": {"message": {"content": [{"reasoningContent": {"reasoningText": {"text": "Look it up.", "signature": "c2ln"}}}, {"toolUse": {"toolUseId": "t1", "name": "log_tide", "input": "not an object"}}]}}, "stopReason": "tool_use"} | thinking, then a tool use with no input | "tool_use" | [{"type": "thinking", "thinking": "Look it up.", "signature": "c2ln"}, {"type": "tool_use", "id": "t1", "name": "log_tide", "input": {}}] | null |
      | with a block lowtide does not know | {"output": {"message": {"content": [{"citationsContent": {"content": [{"text": "High tide at noon."}]}}]}}}                             | that block kept whole, end_turn   | "end_turn"    | [{"type": "other", "data": {"citationsContent": {"content": [{"text": "High tide at noon."}]}}}] | null                                                        |
