Feature: How lowtide serve reads Gemini request bodies and writes Gemini answers
  As a developer pointing the google-genai SDK (or plain REST) at lowtide serve
  I want every part of my request carried to the model, and answers and errors in the shapes the Gemini API uses
  So that my program cannot tell lowtide serve from the Gemini API, except by the price

  Scenario: A body's system instruction, media, function calls and responses become the actor's call
    When lowtide serve reads this Gemini body for models/gemini-2.5-flash:streamGenerateContent
      """
      {"system_instruction": {"parts": [{"text": "Be brief."}, {"text": "Be kind."}]},
       "contents": [
         {"role": "user", "parts": [
           {"text": "Look:"},
           {"inlineData": {"mimeType": "image/png", "data": "iVBO"}},
           {"inline_data": {"mime_type": "application/pdf", "data": "JVBE"}}]},
         {"role": "model", "parts": [
           {"text": "I think so.", "thought": true, "thoughtSignature": "c2ln"},
           {"functionCall": {"name": "tide", "args": {"port": "Brest"}}},
           {"functionCall": {"id": "call-9", "name": "tide", "args": {"port": "Oslo"}}}]},
         {"role": "user", "parts": [
           {"functionResponse": {"name": "tide", "response": {"output": "14:02"}}},
           {"functionResponse": {"id": "call-9", "name": "tide", "response": {"error": "closed"}}},
           {"text": "Thanks"}]}],
       "safetySettings": [{"category": "HARM_CATEGORY_HATE_SPEECH", "threshold": "BLOCK_NONE"}],
       "generationConfig": {"maxOutputTokens": 300, "temperature": 0.5, "candidateCount": 1,
                            "thinkingConfig": {"thinkingBudget": 128, "includeThoughts": true, "thinkingLevel": "LOW"}}}
      """
    Then the call lowtide serve makes of the Gemini body is
      """
      {"model": "gemini-2.5-flash",
       "system": "Be brief.\n\nBe kind.",
       "messages": [
         {"role": "user", "content": [
           {"type": "text", "text": "Look:"},
           {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}},
           {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBE"}}]},
         {"role": "assistant", "content": [
           {"type": "tool_use", "id": "gemini-call-0-tide", "name": "tide", "input": {"port": "Brest"}},
           {"type": "tool_use", "id": "call-9", "name": "tide", "input": {"port": "Oslo"}}]},
         {"role": "user", "content": [
           {"type": "tool_result", "tool_use_id": "gemini-call-0-tide", "content": "14:02"},
           {"type": "tool_result", "tool_use_id": "call-9", "content": "closed", "is_error": true},
           {"type": "text", "text": "Thanks"}]}],
       "max_tokens": 300, "temperature": 0.5,
       "provider_options": {"gemini": {"thinking_budget": 128, "include_thoughts": true}},
       "extra_params": {"generationConfig": {"thinkingConfig": {"thinkingLevel": "LOW"}},
                        "safetySettings": [{"category": "HARM_CATEGORY_HATE_SPEECH", "threshold": "BLOCK_NONE"}]}}
      """
    And the served Gemini call is streamed

  Scenario: Function declarations in Gemini's own schema dialect become JSON schemas, and a response of any shape text
    When lowtide serve reads this Gemini body for models/gemini-2.5-flash:generateContent
      """
      {"contents": [
         {"role": "user", "parts": [{"text": "Tide?"}]},
         {"role": "model", "parts": [{"functionCall": {"name": "tide"}}]},
         {"role": "function", "parts": [{"functionResponse": {"name": "tide", "response": {"height_m": 4.2}}}]}],
       "tools": [{"functionDeclarations": [
         {"name": "tide", "description": "The tide.",
          "parameters": {"type": "OBJECT", "propertyOrdering": ["port"],
                         "properties": {"port": {"type": "STRING", "nullable": true},
                                        "days": {"type": "ARRAY", "items": {"type": "INTEGER"}},
                                        "height": {"anyOf": [{"type": "NUMBER"}, {"type": "STRING"}]}},
                         "required": ["days"]}},
         {"name": "moon"}]}],
       "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["moon", "tide"]}}}
      """
    Then the call lowtide serve makes of the Gemini body is
      """
      {"model": "gemini-2.5-flash",
       "messages": [
         {"role": "user", "content": [{"type": "text", "text": "Tide?"}]},
         {"role": "assistant", "content": [{"type": "tool_use", "id": "gemini-call-0-tide", "name": "tide", "input": {}}]},
         {"role": "user", "content": [
           {"type": "tool_result", "tool_use_id": "gemini-call-0-tide", "content": "{\"height_m\":4.2}"}]}],
       "tools": [
         {"name": "tide", "description": "The tide.",
          "input_schema": {"type": "object",
                           "properties": {"port": {"type": ["string", "null"]},
                                          "days": {"type": "array", "items": {"type": "integer"}},
                                          "height": {"anyOf": [{"type": "number"}, {"type": "string"}]}},
                           "required": ["days"]}},
         {"name": "moon", "input_schema": {"type": "object"}}],
       "tool_choice": {"type": "any"}}
      """
    And the served Gemini call is not streamed

  Scenario Outline: The function-calling modes in the Messages API's words
    When lowtide serve reads a Gemini body with the function tide and the function-calling config <config>
    Then the Gemini call's tool_choice is <choice>

    Examples:
      | config                                            | choice                           |
      | {"mode": "AUTO"}                                  | {"type": "auto"}                 |
      | {"mode": "NONE"}                                  | {"type": "none"}                 |
      | {"mode": "ANY"}                                   | {"type": "any"}                  |
      | {"mode": "ANY", "allowedFunctionNames": ["tide"]} | {"type": "tool", "name": "tide"} |
      | {}                                                | {"type": "auto"}                 |

  Scenario Outline: A body lowtide serve cannot carry is refused in the API's words
    When lowtide serve reads this Gemini body for models/gemini-2.5-flash:generateContent
      """
      <body>
      """
    Then the Gemini body is refused with 400 saying "<words>"

    Examples:
      | body                                                                                     | words                                        |
      | {"contents": [{"parts": [{"text": 7}]}]}                                                 | Invalid value at 'contents[0].parts[0].text' |
      | {"contents": [{"parts": [{"inlineData": {"mimeType": "image/png"}}]}]}                   | must give a mimeType and base64 data         |
      | {"contents": [{"parts": [{"functionCall": {"args": {}}}]}]}                              | a function's name is required                |
      | {"contents": [{"parts": [{}]}]}                                                          | cannot send a part holding nothing           |
      | {"contents": "Hello"}                                                                    | Invalid value at 'contents': expected a list |
      | {"contents": 5}                                                                          | Invalid value at 'contents': expected a list |
      | {"contents": []}                                                                         | contents is not specified                    |
      | {"contents": [{"parts": [{"text": "x"}]}], "safetySettings": 5}                          | Invalid value at 'safetySettings': expected a list |
      | {"contents": [{"parts": [{"text": "x"}]}], "safetySettings": [5]}                        | Invalid value at 'safetySettings[0]': expected an object |
      | {"contents": [{"parts": [{"text": "x"}]}], "generationConfig": {"responseMimeType": "text/yaml"}} | allowed mimetypes are text/plain, application/json, application/xml, application/yaml, text/x.enum, got text/yaml |
      | {"contents": [{"parts": [{"text": "x"}]}], "tools": {"functionDeclarations": []}}        | Invalid value at 'tools'                     |
      | {"contents": [{"parts": [{"text": "x"}]}], "generationConfig": {"maxOutputTokens": 0}}   | it must be at least 1                        |
      | {"contents": [{"parts": [{"text": "x"}]}], "generationConfig": {"topP": "high"}}         | expected a number                            |
      | {"contents": [{"parts": [{"text": "x"}]}], "generationConfig": {"stopSequences": "END"}} | expected a list                              |
      | {"contents": [{"parts": [{"text": "x"}]}], "systemInstruction": "Be brief."}             | Invalid value at 'systemInstruction'         |

  Scenario: An answer holding thoughts, text, function calls and a part lowtide keeps whole, written as Gemini's
    Given a Gemini answer of the model holding a thought, a text, two function calls and an executable code part
    When lowtide serve writes it as Gemini's GenerateContentResponse
    Then the written Gemini answer is
      """
      {"candidates": [{"content": {"role": "model", "parts": [
          {"text": "The tables.", "thought": true, "thoughtSignature": "c2ln"},
          {"text": "High tide at 14:02."},
          {"functionCall": {"id": "call-1", "name": "tide", "args": {"port": "Brest"}}},
          {"functionCall": {"name": "tide", "args": {"port": "Oslo"}}},
          {"executableCode": {"language": "PYTHON", "code": "print(1)"}}]},
        "finishReason": "STOP", "index": 0}],
       "usageMetadata": {"promptTokenCount": 14, "candidatesTokenCount": 5, "totalTokenCount": 19,
                         "cachedContentTokenCount": 4},
       "modelVersion": "gemini-2.5-flash", "responseId": "resp-1"}
      """
    And streamed, it is one server-sent event holding that answer

  Scenario Outline: Stop reasons in Gemini's words
    Given a Gemini answer of the model that stopped for "<stop>"
    When lowtide serve writes it as Gemini's GenerateContentResponse
    Then the written Gemini answer's finish reason is "<finish>"

    Examples:
      | stop          | finish     |
      | end_turn      | STOP       |
      | stop_sequence | STOP       |
      | max_tokens    | MAX_TOKENS |
      | SAFETY        | SAFETY     |
      | refusal       | OTHER      |

  Scenario Outline: lowtide's errors in Google's status codes and names
    When lowtide serve answers the Gemini SDK with the error <error>
    Then the Gemini error is <status> "<name>", in Google's error shape
    And as a stream's event, it is that error body

    Examples:
      | error                                 | status | name                |
      | ConfigurationError                    | 400    | INVALID_ARGUMENT    |
      | StructuredOutputError                 | 400    | INVALID_ARGUMENT    |
      | BudgetExceededError                   | 429    | RESOURCE_EXHAUSTED  |
      | RateLimitError 429 RESOURCE_EXHAUSTED | 429    | RESOURCE_EXHAUSTED  |
      | APIError 503 -                        | 503    | UNAVAILABLE         |
      | APIError 400 FAILED_PRECONDITION      | 400    | FAILED_PRECONDITION |
      | APIError 418 -                        | 418    | UNKNOWN             |
      | APIConnectionError                    | 502    | UNAVAILABLE         |
      | InvalidRequestError - SAFETY          | 400    | INVALID_ARGUMENT    |
      | BatchRequestErrored PERMISSION_DENIED | 403    | PERMISSION_DENIED   |
      | BatchRequestErrored rejected          | 500    | INTERNAL            |
      | BatchRequestExpired                   | 504    | DEADLINE_EXCEEDED   |
      | BatchRequestCanceled                  | 499    | CANCELLED           |
      | InternalError                         | 500    | INTERNAL            |

  Scenario Outline: serve's own refusals in Google's status names
    When lowtide serve refuses a Gemini caller with its own <status> "<type>"
    Then the Gemini error is <status> "<name>", in Google's error shape

    Examples:
      | status | type                  | name             |
      | 401    | authentication_error  | UNAUTHENTICATED  |
      | 413    | request_too_large     | INVALID_ARGUMENT |
      | 500    | api_error             | INTERNAL         |
      | 502    | api_error             | UNAVAILABLE      |
      | 507    | api_error             | INTERNAL         |
      | 422    | invalid_request_error | INVALID_ARGUMENT |
