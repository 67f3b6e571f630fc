Feature: How lowtide serve reads OpenAI request bodies and writes OpenAI answers
  As a developer pointing an OpenAI SDK at lowtide serve
  I want every part of my request carried to the model, and answers and errors in the shapes my SDK knows
  So that my program cannot tell lowtide serve from OpenAI, except by the price

  Scenario: A chat body's system prompts, media, tool calls and tool results become the actor's call
    When lowtide serve reads this body for /v1/chat/completions
      """
      {"model": "gpt-5.4-mini",
       "messages": [
         {"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
         {"role": "developer", "content": "Be kind."},
         {"role": "user", "content": [
           {"type": "text", "text": "Look:"},
           {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
           {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}},
           {"type": "file", "file": {"file_id": "file-1"}},
           {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBE", "filename": "a.pdf"}}]},
         {"role": "assistant", "content": "Let me check.",
          "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "tide", "arguments": "{\"port\": \"Brest\"}"}}]},
         {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "14:02"}]},
         {"role": "user", "content": "Thanks"}],
       "stop": "END", "reasoning_effort": "low", "verbosity": "low", "seed": 7, "service_tier": "flex",
       "max_completion_tokens": 300, "temperature": 0.5, "metadata": {"run": "a"}, "stream": true,
       "stream_options": {"include_usage": true}}
      """
    Then the call lowtide serve makes is
      """
      {"model": "gpt-5.4-mini",
       "system": "Be brief.\n\nBe kind.",
       "messages": [
         {"role": "user", "content": [
           {"type": "text", "text": "Look:"},
           {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
           {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}},
           {"type": "document", "source": {"type": "file", "file_id": "file-1"}},
           {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBE"}}]},
         {"role": "assistant", "content": [
           {"type": "text", "text": "Let me check."},
           {"type": "tool_use", "id": "call_1", "name": "tide", "input": {"port": "Brest"}}]},
         {"role": "user", "content": [
           {"type": "tool_result", "tool_use_id": "call_1", "content": "14:02"},
           {"type": "text", "text": "Thanks"}]}],
       "max_tokens": 300, "stop_sequences": ["END"], "temperature": 0.5, "metadata": {"run": "a"},
       "provider_options": {"openai": {"endpoint": "chat_completions", "service_tier": "flex",
                                       "reasoning": {"effort": "low"}, "verbosity": "low"}},
       "extra_params": {"seed": 7}}
      """
    And the served call is streamed, with its usage

  Scenario Outline: Tool choices in the Messages API's words
    When lowtide serve reads this body for <path>
      """
      {"model": "gpt-5.4-mini", <conversation>, <choice>}
      """
    Then the call's tool_choice is <named>

    Examples:
      | path                 | conversation                                  | choice                                                                         | named                                                            |
      | /v1/chat/completions | "messages": [{"role": "user", "content": "Hi"}] | "tool_choice": "required"                                                      | {"type": "any"}                                                  |
      | /v1/chat/completions | "messages": [{"role": "user", "content": "Hi"}] | "tool_choice": "none"                                                          | {"type": "none"}                                                 |
      | /v1/chat/completions | "messages": [{"role": "user", "content": "Hi"}] | "tool_choice": {"type": "function", "function": {"name": "f"}}                 | {"type": "tool", "name": "f"}                                    |
      | /v1/chat/completions | "messages": [{"role": "user", "content": "Hi"}] | "parallel_tool_calls": false                                                   | {"type": "auto", "disable_parallel_tool_use": true}              |
      | /v1/responses        | "input": "Hi"                                 | "tool_choice": {"type": "function", "name": "f"}, "parallel_tool_calls": false | {"type": "tool", "name": "f", "disable_parallel_tool_use": true} |

  Scenario: A Responses body's items, media, function calls and outputs become the actor's call
    When lowtide serve reads this body for /v1/responses
      """
      {"model": "gpt-5.4-mini", "instructions": "Be brief.",
       "input": [
         {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Be kind."}]},
         {"role": "user", "content": [
           {"type": "input_text", "text": "Look:"},
           {"type": "input_image", "image_url": "https://example.com/a.png", "detail": "auto"},
           {"type": "input_image", "file_id": "file-2"},
           {"type": "input_file", "file_id": "file-1"},
           {"type": "input_file", "file_url": "https://example.com/a.pdf"},
           {"type": "input_file", "file_data": "data:application/pdf;base64,JVBE", "filename": "a.pdf"}]},
         {"role": "assistant", "content": [{"type": "output_text", "text": "Checking."}]},
         {"type": "reasoning", "id": "rs_1", "summary": []},
         {"type": "function_call", "call_id": "call_1", "name": "tide", "arguments": "{}"},
         {"type": "function_call_output", "call_id": "call_1", "output": [{"type": "input_text", "text": "14:02"}]},
         {"type": "function_call_output", "call_id": "call_2", "output": "15:00"}],
       "tools": [{"type": "function", "name": "tide", "strict": true},
                 {"type": "function", "name": "moon", "description": "The moon.", "parameters": {"type": "object", "properties": {}}}],
       "text": {"format": {"type": "json_object"}}, "reasoning": {"effort": "low"}, "store": false,
       "max_output_tokens": 64, "top_p": 0.9}
      """
    Then the call lowtide serve makes is
      """
      {"model": "gpt-5.4-mini",
       "system": "Be brief.\n\nBe kind.",
       "messages": [
         {"role": "user", "content": [
           {"type": "text", "text": "Look:"},
           {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
           {"type": "image", "source": {"type": "file", "file_id": "file-2"}},
           {"type": "document", "source": {"type": "file", "file_id": "file-1"}},
           {"type": "document", "source": {"type": "url", "url": "https://example.com/a.pdf"}},
           {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBE"}}]},
         {"role": "assistant", "content": [
           {"type": "text", "text": "Checking."},
           {"type": "tool_use", "id": "call_1", "name": "tide", "input": {}}]},
         {"role": "user", "content": [
           {"type": "tool_result", "tool_use_id": "call_1", "content": [{"type": "text", "text": "14:02"}]},
           {"type": "tool_result", "tool_use_id": "call_2", "content": "15:00"}]}],
       "tools": [{"name": "tide", "input_schema": {"type": "object"}, "strict": true},
                 {"name": "moon", "description": "The moon.", "input_schema": {"type": "object", "properties": {}}}],
       "max_tokens": 64, "top_p": 0.9,
       "provider_options": {"openai": {"endpoint": "responses", "store": false}},
       "extra_params": {"text": {"format": {"type": "json_object"}}, "reasoning": {"effort": "low"}}}
      """
    And the served call is not streamed

  Scenario Outline: A body OpenAI would refuse is refused by name
    When lowtide serve reads this body for <path>
      """
      <body>
      """
    Then it is refused with 400 naming "<param>"

    Examples:
      | path                 | body                                                                                                        | param                          |
      | /v1/chat/completions | ["not", "an", "object"]                                                                                     | body                           |
      | /v1/chat/completions | {"model": "m", "messages": [{"role": "user", "content": "Hi"}], "stream": "yes"}                            | stream                         |
      | /v1/chat/completions | {"model": "m", "messages": ["Hi"]}                                                                          | messages[0]                    |
      | /v1/chat/completions | {"model": "m", "messages": [{"role": "user", "content": []}]}                                               | messages[0].content            |
      | /v1/chat/completions | {"model": "m", "messages": [{"role": "user", "content": [{"type": "input_audio"}]}]}                        | messages[0].content[0].type    |
      | /v1/chat/completions | {"model": "m", "messages": [{"role": "user", "content": [{"type": "file", "file": {"file_data": "abc"}}]}]}  | messages[0].content[0]         |
      | /v1/chat/completions | {"model": "m", "messages": [{"role": "user", "content": [{"type": "text", "text": 5}]}]}                    | messages[0].content[0].text    |
      | /v1/chat/completions | {"model": "m", "messages": [{"role": "system", "content": [{"type": "image_url"}]}]}                        | messages[0].content            |
      | /v1/chat/completions | {"model": "m", "messages": [{"role": "system", "content": "Only a system prompt"}]}                         | messages                       |
      | /v1/chat/completions | {"model": "m", "messages": [{"role": "tool", "content": "14:02"}]}                                          | messages[0].tool_call_id       |
      | /v1/chat/completions | {"model": "m", "messages": [{"role": "assistant", "tool_calls": [{"function": {"name": "f"}}]}]}            | messages[0].tool_calls[0]      |
      | /v1/chat/completions | {"model": "m", "messages": [{"role": "user", "content": "Hi"}], "tools": {"type": "function"}}             | tools                          |
      | /v1/chat/completions | {"model": "m", "messages": [{"role": "user", "content": "Hi"}], "tool_choice": 5}                          | tool_choice                    |
      | /v1/chat/completions | {"model": "m", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": true}                        | max_tokens                     |
      | /v1/responses        | {"model": "m", "input": [{"role": "user", "content": [{"type": "input_image"}]}]}                          | input[0].content[0].image_url  |
      | /v1/responses        | {"model": "m", "input": [{"role": "user", "content": 5}]}                                                   | input[0].content               |
      | /v1/responses        | {"model": "m", "input": [{"role": "user", "content": [{"type": "input_audio"}]}]}                          | input[0].content[0].type       |
      | /v1/responses        | {"model": "m", "input": "Hi", "tools": [{"type": "web_search"}]}                                            | tools[0].type                  |
      | /v1/responses        | {"model": "m", "input": "Hi", "tool_choice": {"type": "function"}}                                          | tool_choice.name               |
      | /v1/responses        | {"model": "m", "input": [{"type": "function_call_output", "output": "x"}]}                                  | input[0].call_id               |
      | /v1/responses        | {"model": "m", "input": [{"role": "system", "content": "Be brief."}]}                                       | messages                       |

  Scenario: An answer with reasoning, text, a tool call, a refusal and a block kept whole, as a Response
    Given an answer of the model holding thinking, two texts, a tool call, a refusal and a web search call
    When lowtide serve writes it as a Response
    Then the Response's output items are reasoning, message, function_call, message, web_search_call
    And the Response's first message says both texts as one output_text
    When lowtide serve writes it as a ChatCompletion
    Then the ChatCompletion's message has both texts, the refusal and one tool call, finish reason "tool_calls"

  Scenario Outline: Stop reasons as finish reasons and statuses
    Given an answer of the model with the stop reason "<stop>"
    Then as a ChatCompletion its finish reason is "<finish>"
    And as a Response its status is "<status>"

    Examples:
      | stop          | finish         | status     |
      | end_turn      | stop           | completed  |
      | stop_sequence | stop           | completed  |
      | max_tokens    | length         | incomplete |
      | refusal       | content_filter | completed  |

  Scenario Outline: lowtide's errors in OpenAI's terms
    When the OpenAI wire refuses <error>
    Then the refusal is status <status>, type "<type>", code "<code>", retry "<retry>"

    Examples:
      | error                                     | status | type                  | code               | retry |
      | a configuration error on "tools[0].name"  | 400    | invalid_request_error | none               | yes   |
      | a structured output error                 | 400    | invalid_request_error | none               | yes   |
      | a spent budget                            | 429    | insufficient_quota    | insufficient_quota | no    |
      | an API error 429 "rate_limit_exceeded"    | 429    | rate_limit_exceeded   | rate_limit_exceeded | yes  |
      | an API error 400 "invalid_value"          | 400    | invalid_request_error | invalid_value      | no    |
      | an API error 503 "server_is_overloaded"   | 503    | server_error          | server_is_overloaded | yes |
      | a batch request errored "server_error"    | 500    | server_error          | server_error       | yes   |
      | a batch that outlived its wait            | 504    | server_error          | timeout            | yes   |
      | a batch request canceled                  | 500    | server_error          | cancelled          | yes   |
      | a ledger error                            | 500    | server_error          | none               | yes   |

  Scenario: An actor whose provider speaks no API lowtide serves cannot be served
    When lowtide serve is built for an actor of a provider that serves no wire
    Then building it fails with a configuration error saying "its provider speaks no API lowtide serves"

  Scenario: lowtide serve will not start without a client key
    When lowtide serve is built for an OpenAI actor with no client key
    Then building it fails saying "needs a client key"
