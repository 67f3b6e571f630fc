Feature: OpenAI's requests, answers, batch lines and errors, translated both ways
  As a developer whose actor runs on OpenAI
  I want every request sent as the Responses or Chat Completions API takes it, and every answer read back in lowtide's shape
  So that an OpenAI actor gives my agent the same ActorResponse, usage, cost and errors as any other actor, and
  anything OpenAI cannot do is refused before it is sent

  Rule: A request becomes the body of the endpoint the actor's provider_options.openai.endpoint picks

    Scenario: A prompt with a system prompt goes to the Responses API by default, the system prompt as instructions
      Given an OpenAI request with:
        """
        system: You answer in one line.
        messages: [{role: user, content: "Is the harbour open?"}]
        max_tokens: 300
        temperature: 0.2
        top_p: 0.9
        metadata: {user_id: skipper-7}
        """
      When the request is encoded for OpenAI
      Then the request goes to "/v1/responses"
      And the OpenAI body is:
        """
        {"model": "gpt-5.4-mini", "input": [{"role": "user", "content": "Is the harbour open?"}],
         "max_output_tokens": 300, "instructions": "You answer in one line.", "temperature": 0.2, "top_p": 0.9,
         "metadata": {"user_id": "skipper-7"}}
        """

    Scenario: The same request goes to Chat Completions, the system prompt as a system message
      Given an OpenAI request with:
        """
        system: You answer in one line.
        messages: [{role: user, content: "Is the harbour open?"}, {role: assistant, content: Yes.}, {role: user, content: "Until when?"}]
        max_tokens: 300
        stop_sequences: ["\n\n", END]
        provider_options: {openai: {endpoint: chat_completions}}
        """
      When the request is encoded for OpenAI
      Then the request goes to "/v1/chat/completions"
      And the OpenAI body is:
        """
        {"model": "gpt-5.4-mini",
         "messages": [{"role": "system", "content": "You answer in one line."},
                      {"role": "user", "content": "Is the harbour open?"},
                      {"role": "assistant", "content": "Yes."},
                      {"role": "user", "content": "Until when?"}],
         "max_completion_tokens": 300, "stop": ["\n\n", "END"]}
        """

    Scenario: A system prompt of blocks is one text; Chat can send it as a developer message
      Given an OpenAI request with:
        """
        system: [{type: text, text: You are the harbour master., cache_control: {type: ephemeral}}, {type: text, text: Be brief.}]
        messages: [{role: user, content: Hello}]
        provider_options: {openai: {endpoint: chat_completions, system_role: developer}}
        """
      When the request is encoded for OpenAI
      Then the OpenAI body holds:
        | path        | value                                                                 |
        | messages[0] | {"role": "developer", "content": "You are the harbour master.\n\nBe brief."} |

    Scenario Outline: OpenAI's own settings go where each endpoint names them
      Given an OpenAI request with:
        """
        messages: [{role: user, content: Think about the tides}]
        provider_options:
          openai:
            endpoint: <endpoint>
            reasoning: {effort: low}
            service_tier: flex
            verbosity: high
            prompt_cache_key: tides-v1
            prompt_cache_retention: 24h
            store: false
            safety_identifier: user-42
        """
      When the request is encoded for OpenAI
      Then the OpenAI body holds:
        | path                   | value       |
        | <reasoning>            | "low"       |
        | <verbosity>            | "high"      |
        | service_tier           | "flex"      |
        | prompt_cache_key       | "tides-v1"  |
        | prompt_cache_retention | "24h"       |
        | store                  | false       |
        | safety_identifier      | "user-42"   |

      Examples:
        | endpoint         | reasoning        | verbosity      |
        | responses        | reasoning.effort | text.verbosity |
        | chat_completions | reasoning_effort | verbosity      |

    Scenario: A reasoning summary is asked of the Responses API
      Given an OpenAI request with:
        """
        messages: [{role: user, content: "Why do tides turn?"}]
        provider_options: {openai: {reasoning: {effort: high, summary: auto}}}
        """
      When the request is encoded for OpenAI
      Then the OpenAI body holds:
        | path      | value                               |
        | reasoning | {"effort": "high", "summary": "auto"} |

    Scenario: Further parameters pass through extra_params as given
      Given an OpenAI request with:
        """
        messages: [{role: user, content: Hello}]
        extra_params: {truncation: auto, user: harbour}
        """
      When the request is encoded for OpenAI
      Then the OpenAI body holds:
        | path       | value     |
        | truncation | "auto"    |
        | user       | "harbour" |

  Rule: Images, PDFs, tool calls and tool results travel in each endpoint's shapes

    Scenario: Images and PDFs become input_image and input_file parts for the Responses API
      Given an OpenAI request with:
        """
        messages:
          - role: user
            content:
              - {type: text, text: "What do these show?", cache_control: {type: ephemeral}}
              - {type: image, source: {type: base64, media_type: image/png, data: iVBORw0KGgo}}
              - {type: image, source: {type: url, url: "https://example.com/chart.png"}}
              - {type: image, source: {type: file, file_id: file-img1}}
              - {type: document, title: tides.pdf, source: {type: base64, media_type: application/pdf, data: JVBERi0x}}
              - {type: document, source: {type: base64, media_type: application/pdf, data: JVBERi0y}}
              - {type: document, title: Almanac, source: {type: base64, media_type: application/pdf, data: JVBERi0z}}
              - {type: document, source: {type: url, url: "https://example.com/almanac.pdf"}}
              - {type: document, source: {type: file, file_id: file-pdf1}}
              - {type: document, title: Notice, context: From the port authority, source: {type: text, media_type: text/plain, data: Quay 3 is closed.}}
              - {type: document, source: {type: text, media_type: text/plain, data: No title here.}}
        """
      When the request is encoded for OpenAI
      Then the OpenAI body holds:
        | path     | value |
        | input    | [{"role": "user", "content": [{"type": "input_text", "text": "What do these show?"}, {"type": "input_image", "detail": "auto", "image_url": "data:image/png;base64,iVBORw0KGgo"}, {"type": "input_image", "detail": "auto", "image_url": "https://example.com/chart.png"}, {"type": "input_image", "detail": "auto", "file_id": "file-img1"}, {"type": "input_file", "file_data": "data:application/pdf;base64,JVBERi0x", "filename": "tides.pdf"}, {"type": "input_file", "file_data": "data:application/pdf;base64,JVBERi0y", "filename": "document.pdf"}, {"type": "input_file", "file_data": "data:application/pdf;base64,JVBERi0z", "filename": "Almanac.pdf"}, {"type": "input_file", "file_url": "https://example.com/almanac.pdf"}, {"type": "input_file", "file_id": "file-pdf1"}, {"type": "input_text", "text": "From the port authority"}, {"type": "input_text", "text": "Notice\n\nQuay 3 is closed."}, {"type": "input_text", "text": "No title here."}]}] |

    Scenario: Images and PDFs become image_url and file parts for Chat Completions
      Given an OpenAI request with:
        """
        messages:
          - role: user
            content:
              - {type: text, text: "What do these show?"}
              - {type: image, source: {type: base64, media_type: image/jpeg, data: /9j/4AAQ}}
              - {type: document, title: tides.pdf, source: {type: base64, media_type: application/pdf, data: JVBERi0x}}
              - {type: document, source: {type: file, file_id: file-pdf1}}
        provider_options: {openai: {endpoint: chat_completions}}
        """
      When the request is encoded for OpenAI
      Then the OpenAI body holds:
        | path     | value |
        | messages | [{"role": "user", "content": [{"type": "text", "text": "What do these show?"}, {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/4AAQ"}}, {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERi0x", "filename": "tides.pdf"}}, {"type": "file", "file": {"file_id": "file-pdf1"}}]}] |

    Scenario: Tools, a forced tool, and a conversation with a tool call and its result, for the Responses API
      Given an OpenAI request with:
        """
        tools:
          - {name: record_tide, description: Record a tide measurement, input_schema: {type: object, properties: {port: {type: string}}, required: [port]}}
          - {name: ping, cache_control: {type: ephemeral}}
          - {name: strict_one, input_schema: {type: object, properties: {}, additionalProperties: false}, strict: true}
        tool_choice: {type: tool, name: record_tide, disable_parallel_tool_use: true}
        messages:
          - {role: user, content: Record the tide at Brest}
          - role: assistant
            content:
              - {type: thinking, thinking: The user wants a record., signature: sig}
              - {type: text, text: "Recording "}
              - {type: text, text: now.}
              - {type: tool_use, id: call_1, name: record_tide, input: {port: Brest}}
              - {type: tool_use, id: call_2, name: ping, input: {}}
          - role: user
            content:
              - {type: tool_result, tool_use_id: call_1, content: Recorded.}
              - {type: tool_result, tool_use_id: call_2, content: [{type: text, text: pong}, {type: image, source: {type: url, url: "https://example.com/p.png"}}, {type: document, source: {type: file, file_id: file-x}}, {type: document, source: {type: url, url: "https://example.com/x.pdf"}}, {type: document, source: {type: base64, media_type: application/pdf, data: JVBERi0z}}, {type: image, source: {type: file, file_id: file-y}}]}
              - {type: tool_result, tool_use_id: call_3}
              - {type: text, text: Thanks}
        """
      When the request is encoded for OpenAI
      Then the OpenAI body is:
        """
        {"model": "gpt-5.4-mini",
         "input": [
           {"role": "user", "content": "Record the tide at Brest"},
           {"role": "assistant", "content": "Recording now."},
           {"type": "function_call", "call_id": "call_1", "name": "record_tide", "arguments": "{\"port\":\"Brest\"}"},
           {"type": "function_call", "call_id": "call_2", "name": "ping", "arguments": "{}"},
           {"type": "function_call_output", "call_id": "call_1", "output": "Recorded."},
           {"type": "function_call_output", "call_id": "call_2", "output": [
             {"type": "input_text", "text": "pong"},
             {"type": "input_image", "detail": "auto", "image_url": "https://example.com/p.png"},
             {"type": "input_file", "file_id": "file-x"},
             {"type": "input_file", "file_url": "https://example.com/x.pdf"},
             {"type": "input_file", "file_data": "data:application/pdf;base64,JVBERi0z", "filename": "document.pdf"},
             {"type": "input_image", "detail": "auto", "file_id": "file-y"}]},
           {"type": "function_call_output", "call_id": "call_3", "output": ""},
           {"role": "user", "content": [{"type": "input_text", "text": "Thanks"}]}],
         "max_output_tokens": 1024,
         "tools": [
           {"type": "function", "name": "record_tide", "parameters": {"type": "object", "properties": {"port": {"type": "string"}}, "required": ["port"]}, "strict": false, "description": "Record a tide measurement"},
           {"type": "function", "name": "ping", "parameters": {"type": "object", "properties": {}}, "strict": false},
           {"type": "function", "name": "strict_one", "parameters": {"type": "object", "properties": {}, "additionalProperties": false}, "strict": true}],
         "tool_choice": {"type": "function", "name": "record_tide"},
         "parallel_tool_calls": false}
        """

    Scenario: The same for Chat Completions: calls on the assistant message, results as tool messages ahead of the user's text
      Given an OpenAI request with:
        """
        tools:
          - {name: record_tide, description: Record a tide measurement, input_schema: {type: object}}
          - {name: strict_one, input_schema: {type: object}, strict: true}
        tool_choice: {type: tool, name: record_tide}
        messages:
          - {role: user, content: Record the tide at Brest}
          - role: assistant
            content:
              - {type: tool_use, id: call_1, name: record_tide, input: {port: Brest}}
          - role: user
            content:
              - {type: text, text: "Thanks, and"}
              - {type: tool_result, tool_use_id: call_1, content: Recorded.}
              - {type: text, text: "what next?"}
          - role: assistant
            content: [{type: text, text: Done.}]
        provider_options: {openai: {endpoint: chat_completions}}
        """
      When the request is encoded for OpenAI
      Then the OpenAI body is:
        """
        {"model": "gpt-5.4-mini",
         "messages": [
           {"role": "user", "content": "Record the tide at Brest"},
           {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "record_tide", "arguments": "{\"port\":\"Brest\"}"}}]},
           {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "Recorded."}]},
           {"role": "user", "content": [{"type": "text", "text": "Thanks, and"}, {"type": "text", "text": "what next?"}]},
           {"role": "assistant", "content": "Done."}],
         "max_completion_tokens": 1024,
         "tools": [
           {"type": "function", "function": {"name": "record_tide", "parameters": {"type": "object"}, "description": "Record a tide measurement"}},
           {"type": "function", "function": {"name": "strict_one", "parameters": {"type": "object"}, "strict": true}}],
         "tool_choice": {"type": "function", "function": {"name": "record_tide"}}}
        """

    Scenario Outline: The Messages API's tool choices in each endpoint's words
      Given an OpenAI request with:
        """
        tools: [{name: record_tide}]
        tool_choice: {type: <choice>}
        messages: [{role: user, content: Record the tide}]
        provider_options: {openai: {endpoint: <endpoint>}}
        """
      When the request is encoded for OpenAI
      Then the OpenAI body holds:
        | path        | value      |
        | tool_choice | "<openai>" |

      Examples:
        | choice | endpoint         | openai   |
        | auto   | responses        | auto     |
        | any    | responses        | required |
        | none   | chat_completions | none     |
        | any    | chat_completions | required |

  Rule: Structured output asks for a strict JSON schema, and the answer is parsed into the model

    Scenario Outline: A response model becomes a strict JSON schema format
      Given an OpenAI request with:
        """
        messages: [{role: user, content: Record the tide at Brest}]
        provider_options: {openai: {endpoint: <endpoint>, verbosity: low}}
        """
      And the request asks for a TideRecord
      When the request is encoded for OpenAI
      Then the OpenAI body holds:
        | path     | value |
        | <format> | {"type": "json_schema", "name": "TideRecord", "schema": {"properties": {"port": {"title": "Port", "type": "string"}, "height_m": {"title": "Height M", "type": "number"}, "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "title": "Note"}}, "required": ["port", "height_m", "note"], "title": "TideRecord", "type": "object", "additionalProperties": false}, "strict": true} |

      Examples:
        | endpoint  | format      |
        | responses | text.format |

    Scenario: Chat Completions names the schema under response_format.json_schema
      Given an OpenAI request with:
        """
        messages: [{role: user, content: Record the tide at Brest}]
        provider_options: {openai: {endpoint: chat_completions}}
        """
      And the request asks for a TideRecord
      When the request is encoded for OpenAI
      Then the OpenAI body holds:
        | path                               | value        |
        | response_format.type               | "json_schema" |
        | response_format.json_schema.name   | "TideRecord" |
        | response_format.json_schema.strict | true         |

  Rule: What OpenAI cannot do is refused before anything is sent, naming the field

    Scenario Outline: A setting OpenAI has no place for is refused
      Given an OpenAI request saying "Hello" with <setting>
      When the request is encoded for OpenAI
      Then a ConfigurationError is raised
      And the error names the field "<field>"
      And the error message contains "<says>"

      Examples:
        | setting                                                                                   | field                                     | says                              |
        | {stop_sequences: [END, END]}                                                              | stop_sequences.1                          | given twice                       |
        | {stop_sequences: [a, b, c, d, e], provider_options: {openai: {endpoint: chat_completions}}} | stop_sequences                          | at most 4                         |
        | {top_k: 5}                                                                                | top_k                                     | OpenAI has no top_k               |
        | {thinking: {type: enabled, budget_tokens: 2000}}                                          | thinking                                  | provider_options.openai.reasoning |
        | {output_config: {effort: low}}                                                            | output_config                             | response_model                    |
        | {cache_control: {type: ephemeral}}                                                        | cache_control                             | prompt_cache_key                  |
        | {max_tokens: 10}                                                                          | max_tokens                                | at least 16                       |
        | {metadata: {attempt: 3}}                                                                  | metadata.attempt                          | strings only                      |
        | {extra_params: {max_output_tokens: 5}}                                                    | extra_params                              | max_output_tokens                 |
        | {extra_params: {stream: true}}                                                            | extra_params.stream                       | cannot set stream                 |
        | {extra_params: {n: 3}}                                                                    | extra_params.n                            | one answer a call                 |
        | {provider_options: {openai: {endpoint: completions}}}                                     | provider_options.openai.endpoint          | Invalid OpenAI setting            |
        | {provider_options: {openai: {reasoning: {effort: huge}}}}                                 | provider_options.openai.reasoning.effort  | Invalid OpenAI setting            |
        | {provider_options: {openai: {api_key: sk-oops-secret}}}                                   | provider_options.openai.api_key           | Extra inputs are not permitted    |
        | {provider_options: {openai: {endpoint: chat_completions, reasoning: {summary: auto}}}}    | provider_options.openai.reasoning.summary | no reasoning summaries            |
        | {tools: [{name: search, type: web_search_20250305}]}                                      | tools[0].type                             | only function tools               |
        | {tools: [{name: f, input_examples: []}]}                                                  | tools[0].input_examples                   | have no 'input_examples'          |
        | {tools: [{name: f, strict: maybe}]}                                                       | tools[0].strict                           | true or false                     |
        | {tools: [{name: f}], tool_choice: {type: tool}}                                           | tool_choice.name                          | must name the tool                |
        | {tools: [{name: f}], tool_choice: {type: sometimes}}                                      | tool_choice.type                          | not one of auto, any, tool, none  |
        | {system: [{type: image, source: {type: url, url: "https://x"}}]}                          | system[0].type                            | 'image' blocks in the system      |
        | {system: [{type: text}]}                                                                  | system[0].text                            | must be a string                  |

    Scenario: A secret misplaced among OpenAI's settings is never echoed
      Given an OpenAI request with:
        """
        messages: [{role: user, content: Hello}]
        provider_options: {openai: {prompt_cache_key: "", api_key: sk-oops-secret}}
        """
      When the request is encoded for OpenAI
      Then a ConfigurationError is raised
      And the error message does not contain "sk-oops-secret"

    Scenario Outline: A content block OpenAI cannot carry is refused, naming it
      Given an OpenAI request whose last message is a <role> message with the block <block>, sent to <endpoint>
      When the request is encoded for OpenAI
      Then a ConfigurationError is raised
      And the error names the field "<field>"
      And the error message contains "<says>"

      Examples:
        | role      | block                                                                                             | endpoint         | field                                    | says                                 |
        | user      | {"type": "document", "source": {"type": "text", "data": "x"}, "citations": {"enabled": true}}     | responses        | messages[0].content[0].citations         | OpenAI does not cite documents       |
        | user      | {"type": "document", "source": {"type": "content", "content": []}}                                | responses        | messages[0].content[0].source.type       | document sources of type 'content'   |
        | user      | {"type": "image", "source": {"type": "bytes"}}                                                    | responses        | messages[0].content[0].source.type       | image sources of type 'bytes'        |
        | user      | {"type": "image", "source": "https://x"}                                                          | responses        | messages[0].content[0].source            | must be an object                    |
        | user      | {"type": "image", "source": {"type": "url"}}                                                      | responses        | messages[0].content[0].source.url        | must be a string                     |
        | user      | {"type": "search_result", "source": "s", "title": "t", "content": []}                            | responses        | messages[0].content[0].type              | 'search_result' blocks in user       |
        | user      | {"type": "tool_use", "id": "x", "name": "f", "input": {}}                                         | responses        | messages[0].content[0].type              | 'tool_use' blocks in user messages   |
        | assistant | {"type": "image", "source": {"type": "url", "url": "https://x"}}                                  | responses        | messages[0].content[0].type              | 'image' blocks in assistant messages |
        | assistant | {"type": "tool_use", "id": "x", "name": "f", "input": [1]}                                        | responses        | messages[0].content[0]                   | a JSON object                        |
        | user      | {"type": "tool_result", "tool_use_id": "x", "content": 7}                                         | responses        | messages[0].content[0].content           | text or a list of blocks             |
        | user      | {"type": "tool_result", "tool_use_id": "x", "content": ["loose text"]}                            | responses        | messages[0].content[0].content[0]        | a content block                      |
        | user      | {"type": "tool_result", "tool_use_id": "x", "content": [{"type": "search_result"}]}               | responses        | messages[0].content[0].content[0].type   | in tool results                      |
        | user      | {"type": "tool_result", "tool_use_id": "x", "content": [{"type": "image", "source": {"type": "url", "url": "https://x"}}]} | chat_completions | messages[0].content[0].content | only text in a tool result |
        | user      | {"type": "image", "source": {"type": "file", "file_id": "file-1"}}                                | chat_completions | messages[0].content[0].source            | images by URL only                   |
        | user      | {"type": "document", "source": {"type": "url", "url": "https://x/a.pdf"}}                         | chat_completions | messages[0].content[0].source            | cannot fetch a document by URL       |

    Scenario: The reasoning efforts and service tiers taken are exactly those the installed OpenAI SDK knows
      Then lowtide's OpenAI reasoning efforts and service tiers are the installed SDK's, value for value

    Scenario: The providers of OpenAI's shapes build and read their batches without loading the OpenAI SDK
      When a fresh Python imports the groq and together SDKs and lowtide's Groq and Together batch providers
      Then it has not imported the openai SDK

  Rule: An answer, from the live SDK or a batch line, is read into lowtide's ActorResponse

    Scenario: A Responses answer with reasoning, cited text, a refusal-free message and cached tokens
      Given the OpenAI answer:
        """
        {"id": "resp_1", "object": "response", "created_at": 1800000000, "status": "completed", "model": "gpt-5.4-mini-2026-03-17",
         "output": [
           {"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "Tides follow the moon."}], "encrypted_content": "enc"},
           {"id": "rs_2", "type": "reasoning", "summary": []},
           {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed", "content": [
             {"type": "output_text", "text": "High tide is at 14:02.", "annotations": [{"type": "url_citation", "url": "https://tides.example", "title": "Tides", "start_index": 0, "end_index": 9}]},
             {"type": "output_text", "text": " Low at 20:15.", "annotations": []}]},
           {"id": "ws_1", "type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "tides"}}],
         "parallel_tool_calls": true, "tool_choice": "auto", "tools": [], "service_tier": "default",
         "usage": {"input_tokens": 2000, "input_tokens_details": {"cached_tokens": 1024, "cache_write_tokens": 0},
                   "output_tokens": 300, "output_tokens_details": {"reasoning_tokens": 120}, "total_tokens": 2300}}
        """
      When the OpenAI answer is read as the live SDK's Response, with the request id "req_abc"
      Then the response has these fields:
        | field                             | value                                 |
        | text                              | High tide is at 14:02. Low at 20:15.  |
        | stop_reason                       | end_turn                              |
        | model                             | gpt-5.4-mini-2026-03-17               |
        | provider                          | openai                                |
        | mode                              | live                                  |
        | ids.message_id                    | resp_1                                |
        | ids.request_id                    | req_abc                               |
        | usage.input_tokens                | 976                                   |
        | usage.cache_read_input_tokens     | 1024                                  |
        | usage.cache_creation_input_tokens | 0                                     |
        | usage.output_tokens               | 300                                   |
        | cost.pricing                      | live                                  |
        | thinking                          | Tides follow the moon.                |
      And the response content holds the block types "thinking, reasoning, text, text, web_search_call"
      And the first text block cites "https://tides.example"
      And the cost is what the tokens cost at these rates, in dollars per million tokens:
        | input | output | cache write | cache read |
        | 0.75  | 4.50   | 0.75        | 0.075      |

    Scenario Outline: Why a Responses answer stopped, in lowtide's words
      Given a Responses answer with status "<status>", incomplete reason "<reason>" and the output <output>
      When the OpenAI answer is read from a batch output line
      Then the response has these fields:
        | field       | value    |
        | stop_reason | <stop>   |
        | text        | <text>   |

      Examples:
        | status      | reason            | output                                                                                                                            | stop       | text   |
        | completed   |                   | [{"type": "function_call", "id": "fc_1", "call_id": "call_9", "name": "record", "arguments": "{\"port\": \"Brest\"}"}]           | tool_use   |        |
        | completed   |                   | [{"type": "message", "id": "m", "role": "assistant", "status": "completed", "content": [{"type": "refusal", "refusal": "No."}]}] | refusal    |        |
        | incomplete  | max_output_tokens | [{"type": "message", "id": "m", "role": "assistant", "status": "incomplete", "content": [{"type": "output_text", "text": "Hig", "annotations": []}]}] | max_tokens | Hig |
        | incomplete  | content_filter    | []                                                                                                                                | refusal    |        |
        | incomplete  | max_messages      | []                                                                                                                                | max_messages |      |
        | in_progress |                   | []                                                                                                                                | in_progress |       |

    Scenario: A function call becomes a tool call named by its call id; arguments cut short keep the call whole
      Given a Responses answer with status "incomplete", incomplete reason "max_output_tokens" and the output [{"type": "function_call", "id": "fc_1", "call_id": "call_9", "name": "record", "arguments": "{\"port\": \"Brest\"}"}, {"type": "function_call", "id": "fc_2", "call_id": "call_10", "name": "record", "arguments": "{\"port\": \"Br"}]
      When the OpenAI answer is read from a batch output line
      Then the response's tool calls are "call_9 record {'port': 'Brest'}"
      And the response content holds the block types "tool_use, function_call"

    Scenario: A Chat Completions answer with cited text, tool calls and cached tokens
      Given the OpenAI answer:
        """
        {"id": "chatcmpl-1", "object": "chat.completion", "created": 1800000000, "model": "gpt-4.1-mini-2025-04-14",
         "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": "Recording.",
           "annotations": [{"type": "url_citation", "url_citation": {"url": "https://tides.example", "title": "T", "start_index": 0, "end_index": 3}}],
           "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "record", "arguments": "{\"port\": \"Brest\"}"}},
                          {"id": "call_2", "type": "custom", "custom": {"name": "grammar", "input": "x"}}]}}],
         "usage": {"prompt_tokens": 1500, "completion_tokens": 40, "total_tokens": 1540,
                   "prompt_tokens_details": {"cached_tokens": 1280}, "completion_tokens_details": {"reasoning_tokens": 0}}}
        """
      When the OpenAI answer is read as the live SDK's ChatCompletion, with the request id "req_chat"
      Then the response has these fields:
        | field                         | value                   |
        | text                          | Recording.              |
        | stop_reason                   | tool_use                |
        | model                         | gpt-4.1-mini-2025-04-14 |
        | ids.message_id                | chatcmpl-1              |
        | usage.input_tokens            | 220                     |
        | usage.cache_read_input_tokens | 1280                    |
        | usage.output_tokens           | 40                      |
      And the response's tool calls are "call_1 record {'port': 'Brest'}"
      And the response content holds the block types "text, tool_use, custom"
      And the cost is what the tokens cost at these rates, in dollars per million tokens:
        | input | output | cache write | cache read |
        | 0.40  | 1.60   | 0.40        | 0.10       |

    Scenario Outline: Why a Chat Completions answer stopped, in lowtide's words
      Given a Chat Completions answer that finished with "<finish>", saying <content> and refusing <refusal>
      When the OpenAI answer is read from a batch output line
      Then the response has these fields:
        | field       | value  |
        | stop_reason | <stop> |
        | text        | <text> |

      Examples:
        | finish         | content   | refusal     | stop       | text  |
        | stop           | "Calm."   | null        | end_turn   | Calm. |
        | length         | "Cal"     | null        | max_tokens | Cal   |
        | stop           | null      | "I can't."  | refusal    |       |
        | content_filter | null      | null        | refusal    |       |
        | function_call  | null      | null        | tool_use   |       |

    Scenario: A Chat Completions answer without choices has no text and no stop reason
      Given the OpenAI answer:
        """
        {"id": "chatcmpl-2", "object": "chat.completion", "created": 1800000000, "model": "gpt-4o-mini", "choices": []}
        """
      When the OpenAI answer is read from a batch output line
      Then the response has these fields:
        | field       | value |
        | text        |       |
        | stop_reason |       |
        | usage.input_tokens | 0 |

    Scenario Outline: A live answer from the priority or flex tier is priced at that tier; a batch answer at batch prices
      Given a Responses answer from the "<tier>" tier for 10000 input tokens, 2000 of them cached, and 1000 output tokens
      When the OpenAI answer is read <how>
      Then the response has these fields:
        | field        | value     |
        | cost.pricing | <pricing> |
      And the cost is what the tokens cost at these rates, in dollars per million tokens:
        | input   | output   | cache write | cache read |
        | <input> | <output> | 0           | <cached>   |

      Examples:
        | tier     | how                                                   | pricing | input | output | cached |
        | default  | as the live SDK's Response, with the request id "r1"  | live    | 0.40  | 1.60   | 0.10   |
        | priority | as the live SDK's Response, with the request id "r1"  | live    | 0.70  | 2.80   | 0.175  |
        | flex     | as the live SDK's Response, with the request id "r1"  | live    | 0.40  | 1.60   | 0.10   |
        | default  | from a batch output line                              | batch   | 0.20  | 0.80   | 0.10   |

    Scenario: An answer parsed into the response model; one that does not fit keeps its raw text and response
      Given a Responses answer whose text is {"port": "Brest", "height_m": 4.2, "note": null}
      When the OpenAI answer is read as the live SDK's Response for a TideRecord
      Then the parsed answer is a TideRecord for "Brest"
      Given a Responses answer whose text is {"port": "Brest"}
      When the OpenAI answer is read as the live SDK's Response for a TideRecord
      Then a StructuredOutputError is raised
      And the error message contains "The answer does not fit TideRecord"

    Scenario Outline: A live answer whose status is failed raises the error its code stands for
      Given a Responses answer that failed with the code "<code>" and the message "<message>"
      When the OpenAI answer is read as the live SDK's Response, with the request id "req_f"
      Then a <error> is raised
      And the error message contains "<message>"
      And the error is <retryable>

      Examples:
        | code                | message                    | error               | retryable     |
        | rate_limit_exceeded | Slow down.                 | RateLimitError      | retryable     |
        | server_error        | Something broke.           | ServerError         | retryable     |
        | invalid_prompt      | The prompt was flagged.    | InvalidRequestError | not retryable |

  Rule: A batch output or error line becomes its request's outcome

    Scenario: A succeeded line is an answer priced at batch rates, with the line's own request id
      Given the OpenAI batch line:
        """
        {"id": "batch_req_1", "custom_id": "tide-1",
         "response": {"status_code": 200, "request_id": "req_line_1",
                      "body": {"id": "resp_9", "object": "response", "created_at": 1800000000, "status": "completed", "model": "gpt-5.4-mini",
                               "output": [{"id": "m", "type": "message", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": "Calm seas.", "annotations": []}]}],
                               "usage": {"input_tokens": 50, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0}, "output_tokens": 4, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 54}}},
         "error": null}
        """
      When the line is read as an outcome of the batch "batch_abc"
      Then the outcome has these fields:
        | field          | value      |
        | text           | Calm seas. |
        | mode           | batch      |
        | cost.pricing   | batch      |
        | ids.batch_id   | batch_abc  |
        | ids.custom_id  | tide-1     |
        | ids.request_id | req_line_1 |
        | ids.message_id | resp_9     |
      And the outcome's stored form reads back as the same response

    Scenario Outline: A line that did not succeed is that request's own error
      Given the OpenAI batch line:
        """
        {"id": "batch_req_2", "custom_id": "tide-2", "response": <response>, "error": <error>}
        """
      When the line is read as an outcome of the batch "batch_abc"
      Then the outcome is a <class> of the type "<type>", <retryable>

      Examples:
        | response                                                                                                                                  | error                                                       | class                | type                | retryable     |
        | null                                                                                                                                      | {"code": "batch_expired", "message": "Not run in time."}    | BatchRequestExpired  |                     | retryable     |
        | null                                                                                                                                      | {"code": "batch_cancelled", "message": "Cancelled."}        | BatchRequestCanceled |                     | not retryable |
        | {"status_code": 400, "request_id": "r", "body": {"error": {"message": "Bad value.", "type": "invalid_request_error", "param": "input", "code": "invalid_value"}}} | null | BatchRequestErrored | invalid_value | not retryable |
        | {"status_code": 429, "request_id": "r", "body": {"error": {"message": "Slow down.", "type": "requests", "param": null, "code": "rate_limit_exceeded"}}}        | null | BatchRequestErrored | rate_limit_exceeded | retryable |
        | {"status_code": 429, "request_id": "r", "body": {"error": {"message": "No quota.", "type": "insufficient_quota", "param": null, "code": "insufficient_quota"}}}  | null | BatchRequestErrored | insufficient_quota  | not retryable |
        | {"status_code": 500, "request_id": "r", "body": {"error": {"message": "Oops.", "type": "server_error", "param": null, "code": null}}}                            | null | BatchRequestErrored | server_error        | retryable |
        | {"status_code": 502, "request_id": "r", "body": {}}                                                                                                              | null | BatchRequestErrored | http_502            | retryable |
        | {"status_code": 200, "request_id": "r", "body": {"id": "resp_f", "object": "response", "status": "failed", "error": {"code": "server_error", "message": "Failed."}, "output": []}} | null | BatchRequestErrored | server_error | retryable |
        | {"status_code": 200, "request_id": "r", "body": {"id": "resp_f", "object": "response", "status": "failed", "error": null, "output": []}}                        | null | BatchRequestErrored | server_error        | retryable |
        | null                                                                                                                                      | {"code": "timeout", "message": "Took too long."}            | BatchRequestErrored  | timeout             | retryable     |
        | null                                                                                                                                      | null                                                        | BatchRequestUnreadable |                   | not retryable |

    Scenario: An errored outcome comes back from the ledger as it was, OpenAI's verdict on retrying included
      Given the OpenAI batch line:
        """
        {"id": "batch_req_3", "custom_id": "tide-3", "response": {"status_code": 500, "request_id": "r", "body": {"error": {"message": "Oops.", "type": "server_error", "param": null, "code": null}}}, "error": null}
        """
      When the line is read as an outcome of the batch "batch_abc"
      Then the outcome stored as the ledger stores errors comes back retryable, with the type "server_error"

    Scenario: A line's answer is parsed into the response model, or kept with its raw text when it does not fit
      Given the OpenAI batch line answering "tide-4" with the text {"port": "Brest", "height_m": 4.2, "note": "spring tide"}
      When the line is read as an outcome of the batch "batch_abc" for a TideRecord
      Then the parsed outcome is a TideRecord for "Brest"
      Given the OpenAI batch line answering "tide-5" with the text not JSON at all
      When the line is read as an outcome of the batch "batch_abc" for a TideRecord
      Then the outcome is a StructuredOutputError keeping the text "not JSON at all"
      Given the OpenAI batch line:
        """
        {"id": "batch_req_7", "custom_id": "tide-7", "response": null, "error": {"code": "batch_expired", "message": "Not run in time."}}
        """
      When the line is read as an outcome of the batch "batch_abc" for a TideRecord
      Then the outcome is a BatchRequestExpired of the type "", retryable

    Scenario: A request becomes a batch input line for its endpoint
      Given an OpenAI request with:
        """
        messages: [{role: user, content: Hello}]
        provider_options: {openai: {endpoint: chat_completions}}
        """
      When the request is encoded for OpenAI as the batch input line "tide-6"
      Then the batch input line is:
        """
        {"custom_id": "tide-6", "method": "POST", "url": "/v1/chat/completions",
         "body": {"model": "gpt-5.4-mini", "messages": [{"role": "user", "content": "Hello"}], "max_completion_tokens": 1024}}
        """

  Rule: Every error of the SDK becomes lowtide's error of the same meaning

    Scenario Outline: An HTTP error the SDK raised keeps status, request id, OpenAI's code and the message
      Given the OpenAI API answers every call with status <status>, the headers <headers> and the body <body>
      When the OpenAI provider is asked "Hello"
      Then a <error> is raised
      And the API error has status <status>, request id "req_err", error type "<type>" and says "<says>"
      And the error is <retryable>
      And the error message does not contain the OpenAI key

      Examples:
        | status | headers                      | body                                                                                                                           | error                 | type                   | says                    | retryable     |
        | 400    | {}                           | {"error": {"message": "Invalid value for 'input'.", "type": "invalid_request_error", "param": "input", "code": "invalid_value"}} | InvalidRequestError   | invalid_value          | Invalid value           | not retryable |
        | 401    | {}                           | {"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}} | AuthenticationError   | invalid_api_key        | Incorrect API key       | not retryable |
        | 403    | {}                           | {"error": {"message": "Country not supported.", "type": "invalid_request_error", "param": null, "code": "unsupported_country_region_territory"}} | PermissionDeniedError | unsupported_country_region_territory | Country | not retryable |
        | 404    | {}                           | {"error": {"message": "The model does not exist.", "type": "invalid_request_error", "param": null, "code": "model_not_found"}}   | NotFoundError         | model_not_found        | does not exist          | not retryable |
        | 409    | {}                           | {"error": {"message": "Conflict.", "type": "invalid_request_error", "param": null, "code": null}}                              | InvalidRequestError   | invalid_request_error  | Conflict.               | not retryable |
        | 422    | {}                           | {"error": {"message": "Unprocessable.", "type": "invalid_request_error", "param": null, "code": null}}                         | InvalidRequestError   | invalid_request_error  | Unprocessable.          | not retryable |
        | 429    | {"retry-after": "7"}         | {"error": {"message": "Rate limit reached.", "type": "requests", "param": null, "code": "rate_limit_exceeded"}}                  | RateLimitError        | rate_limit_exceeded    | Rate limit reached      | retryable     |
        | 429    | {}                           | {"error": {"message": "You exceeded your current quota.", "type": "insufficient_quota", "param": null, "code": "insufficient_quota"}} | PermissionDeniedError | insufficient_quota | exceeded your current quota | not retryable |
        | 500    | {}                           | {"error": {"message": "The server had an error.", "type": "server_error", "param": null, "code": null}}                         | ServerError           | server_error           | The server had an error | retryable     |
        | 503    | {}                           | "upstream unavailable"                                                                                                        | ServerError           |                        | Error code: 503         | retryable     |

    Scenario Outline: The wait a 429 asks for is kept, in milliseconds or seconds
      Given the OpenAI API answers every call with status 429, the headers <headers> and the body {"error": {"message": "Slow down.", "type": "requests", "param": null, "code": "rate_limit_exceeded"}}
      When the OpenAI provider is asked "Hello"
      Then a RateLimitError is raised
      And the rate limit error asks for a wait of <wait>

      Examples:
        | headers                                         | wait         |
        | {"retry-after-ms": "1500", "retry-after": "9"}  | 1.5 seconds  |
        | {"retry-after": "9"}                            | 9 seconds    |
        | {"retry-after": "soon"}                         | no time      |
        | {"retry-after": "-3"}                           | no time      |

    Scenario Outline: No answer at all is a connection error, or a timeout
      Given the OpenAI API cannot be reached: <failure>
      When the OpenAI provider is asked "Hello"
      Then a <error> is raised
      And the error is retryable

      Examples:
        | failure      | error              |
        | ConnectError | APIConnectionError |
        | ReadTimeout  | APITimeoutError    |

    Scenario Outline: Other failures inside the OpenAI client are lowtide errors too
      When the OpenAI error translation meets <failure>
      Then a <error> is raised
      And the error message contains "<says>"

      Examples:
        | failure                              | error              | says                         |
        | a results line cut short             | APIConnectionError | broke off mid-line           |
        | a connection broken mid-body         | APIConnectionError | ReadError                    |
        | an answer the SDK could not validate | APIError           | APIResponseValidationError   |

  Rule: OpenAI's usage is priced through genai-prices' own OpenAI extractor

    Scenario Outline: Every OpenAI usage is priced exactly as genai-prices prices it, below and above the long-context tier
      When the OpenAI usage <usage> of "<model>" is priced in <mode> mode
      Then the price equals genai-prices' own calculation for that OpenAI usage, model and mode

      Examples:
        | usage                                                                                                                  | model        | mode  |
        | {"input_tokens": 1200, "output_tokens": 300, "input_tokens_details": {"cached_tokens": 256, "cache_write_tokens": 0}} | gpt-5.4-mini | live  |
        | {"input_tokens": 1200, "output_tokens": 300, "input_tokens_details": {"cached_tokens": 256, "cache_write_tokens": 0}} | gpt-5.4-mini | batch |
        | {"prompt_tokens": 1200, "completion_tokens": 300, "prompt_tokens_details": {"cached_tokens": 1024}}                     | gpt-4o-mini  | live  |
        | {"prompt_tokens": 1200, "completion_tokens": 300, "prompt_tokens_details": null, "completion_tokens_details": null}     | gpt-4.1      | batch |
        | {"input_tokens": 300000, "output_tokens": 900, "input_tokens_details": {"cached_tokens": 100000, "cache_write_tokens": 0}} | gpt-5.5    | live  |
        | {"input_tokens": 5000, "output_tokens": 10, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 4000}}  | gpt-6-luna   | live  |

    Scenario Outline: Usage lowtide cannot read, or a model genai-prices does not know, has no cost, and says so in the log
      When a usage {"input_tokens": 10, "output_tokens": 5} of "<model>" reported by the provider "<provider>" is priced in live mode
      Then there is no cost, and the log says "<says>"

      Examples:
        | model         | provider | says                      |
        | gpt-5.4-mini  | tidepool | No usage shape known      |
        | gpt-unknown-9 | openai   | No price is known for model |
