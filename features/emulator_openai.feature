Feature: The emulator serves OpenAI too: Files, Batches, Responses, Chat Completions and Embeddings
  As a developer of lowtide (or of any program using the official openai SDK)
  I want the emulator to answer the OpenAI API as faithfully as it answers Anthropic's, from the same app and port
  So that OpenAI batch and live calls can be tested offline, on a clock the tests control, with faults on demand

  Every answer below is read by the unmodified openai SDK and checked again by the SDK's own types, strictly.

  Rule: Calls are authenticated by bearer key, and errors come in OpenAI's shape

    Scenario: A call without a bearer key is refused with 401
      Given the OpenAI emulator runs on a manual clock
      When I send the OpenAI emulator a raw "POST" to "/v1/responses" without a key
      Then the OpenAI emulator raw answer is 401 with type "invalid_request_error" and code "-"
      And the OpenAI emulator raw error message mentions "You didn't provide an API key"

    Scenario: An emulator restricted to some keys refuses the others, without echoing them
      Given the OpenAI emulator runs on a manual clock and accepts only the API key "sk-good-key-0001"
      When I ask the OpenAI emulator's Responses API "Hello" with the API key "sk-wrong-key-123456789"
      Then the OpenAI emulator call fails with AuthenticationError, status 401, type "invalid_request_error" and code "invalid_api_key"
      And the OpenAI emulator error message mentions "sk-***************6789"
      And the OpenAI emulator error message does not mention "sk-wrong-key-123456789"
      When I ask the OpenAI emulator's Responses API "Hello" with the API key "sk-good-key-0001"
      Then the OpenAI emulator answer is a completed response

    Scenario Outline: Unknown paths, wrong methods, broken and oversized bodies answer in OpenAI's shape
      Given the OpenAI emulator runs on a manual clock with bodies limited to 2000 bytes
      When I send the OpenAI emulator a raw "<method>" to "<path>" with the body "<body>"
      Then the OpenAI emulator raw answer is <status> with type "<type>" and code "-"
      And the OpenAI emulator raw error message mentions "<mention>"

      Examples:
        | method | path                 | body     | status | type                  | mention                       |
        | GET    | /v1/nothing          | -        | 404    | invalid_request_error | Invalid URL (GET /v1/nothing) |
        | GET    | /v1/responses        | -        | 405    | invalid_request_error | Invalid method for URL        |
        | POST   | /v1/responses        | not json | 400    | invalid_request_error | Invalid JSON body             |
        | POST   | /v1/chat/completions | [1]      | 400    | invalid_request_error | must be a JSON object         |
        | POST   | /v1/responses        | big      | 413    | invalid_request_error | maximum allowed number        |
        | DELETE | /v1/files            | -        | 405    | invalid_request_error | Invalid method for URL        |
        | GET    | /v1/files/x/y/z      | -        | 404    | invalid_request_error | Invalid URL                   |
        | POST   | /v1/files            | garbage  | 400    | invalid_request_error | Missing boundary in multipart |

    Scenario: An unexpected failure inside the emulator answers 500 in OpenAI's shape
      Given the OpenAI emulator runs on a clock that has stopped working
      When I send the OpenAI emulator a raw "POST" to "/v1/responses" that fails inside the emulator
      Then the OpenAI emulator raw answer is 500 with type "server_error" and code "-"

    Scenario: On /v1/files, Anthropic callers get Anthropic's answer and OpenAI callers OpenAI's
      Given the OpenAI emulator runs on a manual clock
      When I send the OpenAI emulator a raw "GET" to "/v1/files" as an Anthropic client
      Then the OpenAI emulator raw answer is Anthropic's list of 0 files
      When I send the OpenAI emulator a raw "GET" to "/v1/files" as an OpenAI client
      Then the OpenAI emulator raw answer is a list of 0 files

  Rule: Responses and Chat Completions requests are validated as OpenAI validates them

    Scenario Outline: An invalid Responses request is refused with OpenAI's error
      Given the OpenAI emulator runs on a manual clock
      When I send the OpenAI emulator's Responses API the body changed by <change>
      Then the OpenAI emulator call fails with <exception>, status <status>, type "invalid_request_error" and code "<code>"
      And the OpenAI emulator error names the parameter "<param>"

      Examples:
        | change                                                                             | exception       | status | code                       | param                      |
        | {"model": "claude-sonnet-4-5"}                                                     | NotFoundError   | 404    | model_not_found            | model                      |
        | {"model": null}                                                                    | BadRequestError | 400    | missing_required_parameter | model                      |
        | {"model": 4}                                                                       | BadRequestError | 400    | invalid_type               | model                      |
        | {"max_output_tokens": true}                                                        | BadRequestError | 400    | invalid_type               | max_output_tokens          |
        | {"tools": [null]}                                                                  | BadRequestError | 400    | invalid_type               | tools[0]                   |
        | {"input": null}                                                                    | BadRequestError | 400    | missing_required_parameter | input                      |
        | {"frobnicate": 1}                                                                  | BadRequestError | 400    | unknown_parameter          | frobnicate                 |
        | {"input": 5}                                                                       | BadRequestError | 400    | invalid_type               | input                      |
        | {"input": [{"role": "robot", "content": "x"}]}                                     | BadRequestError | 400    | invalid_value              | input[0].role              |
        | {"input": [{"role": "user"}]}                                                      | BadRequestError | 400    | missing_required_parameter | input[0].content           |
        | {"input": [{"type": "item_reference", "id": "x"}]}                                 | BadRequestError | 400    | invalid_value              | input[0].type              |
        | {"input": [{"role": "user", "content": [{"type": "input_audio"}]}]}                | BadRequestError | 400    | invalid_value              | input[0].content[0].type   |
        | {"input": [{"role": "user", "content": [{"type": "input_text"}]}]}                 | BadRequestError | 400    | missing_required_parameter | input[0].content[0].text   |
        | {"input": [{"role": "user", "content": 7}]}                                        | BadRequestError | 400    | invalid_type               | input[0].content           |
        | {"input": [{"role": "user", "content": [{"type": "input_image"}]}]}                | BadRequestError | 400    | missing_required_parameter | input[0].content[0].image_url |
        | {"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "ftp://x"}]}]} | BadRequestError | 400 | invalid_value | input[0].content[0].image_url |
        | {"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "data:image/bmp;base64,AAAA"}]}]} | BadRequestError | 400 | invalid_value | input[0].content[0].image_url |
        | {"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "data:image/png;base64,bm90IGFuIGltYWdl"}]}]} | BadRequestError | 400 | invalid_image_format | input[0].content[0].image_url |
        | {"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "data:image/png;base64,%%%"}]}]} | BadRequestError | 400 | invalid_image_format | input[0].content[0].image_url |
        | {"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "https://example.com/a.png", "detail": "huge"}]}]} | BadRequestError | 400 | invalid_value | input[0].content[0].detail |
        | {"input": [{"role": "user", "content": [{"type": "input_image", "file_id": "file-nope"}]}]} | NotFoundError | 404 | -                       | input[0].content[0].file_id |
        | {"input": [{"role": "user", "content": [{"type": "input_file"}]}]}                 | BadRequestError | 400    | missing_required_parameter | input[0].content[0]        |
        | {"input": [{"role": "user", "content": [{"type": "input_file", "file_data": "plain"}]}]} | BadRequestError | 400 | invalid_value          | input[0].content[0].file_data |
        | {"input": [{"role": "user", "content": [{"type": "input_file", "file_data": "data:application/octet-stream;base64,//79"}]}]} | BadRequestError | 400 | unsupported_file | input[0].content[0].file_data |
        | {"input": [{"role": "user", "content": [{"type": "input_file", "file_id": "file-nope"}]}]} | NotFoundError | 404 | -                        | input[0].content[0].file_id |
        | {"max_output_tokens": 8}                                                           | BadRequestError | 400    | integer_below_min_value    | max_output_tokens          |
        | {"max_output_tokens": "many"}                                                      | BadRequestError | 400    | invalid_type               | max_output_tokens          |
        | {"temperature": 3}                                                                 | BadRequestError | 400    | decimal_above_max_value    | temperature                |
        | {"top_p": -1}                                                                      | BadRequestError | 400    | decimal_below_min_value    | top_p                      |
        | {"temperature": "hot"}                                                             | BadRequestError | 400    | invalid_type               | temperature                |
        | {"instructions": 5}                                                                | BadRequestError | 400    | invalid_type               | instructions               |
        | {"tools": {"a": 1}}                                                                | BadRequestError | 400    | invalid_type               | tools                      |
        | {"tools": [{"type": "function", "parameters": {}}]}                                | BadRequestError | 400    | missing_required_parameter | tools[0].name              |
        | {"tools": [{"type": "function", "name": "bad name"}]}                              | BadRequestError | 400    | invalid_value              | tools[0].name              |
        | {"tools": [{"type": "function", "name": "f"}, {"type": "function", "name": "f"}]}  | BadRequestError | 400    | invalid_value              | tools                      |
        | {"tools": [{"type": "function", "name": "f", "parameters": []}]}                   | BadRequestError | 400    | invalid_type               | tools[0].parameters        |
        | {"tool_choice": "sometimes"}                                                       | BadRequestError | 400    | invalid_value              | tool_choice                |
        | {"tool_choice": "required"}                                                        | BadRequestError | 400    | invalid_value              | tool_choice                |
        | {"tool_choice": {"type": "function", "name": "nowhere"}}                           | BadRequestError | 400    | invalid_value              | tool_choice                |
        | {"text": {"format": {"type": "xml"}}}                                              | BadRequestError | 400    | invalid_value              | text.format.type           |
        | {"text": {"format": {"type": "json_schema", "schema": {}}}}                        | BadRequestError | 400    | missing_required_parameter | text.format.name           |
        | {"text": {"format": {"type": "json_schema", "name": "x"}}}                         | BadRequestError | 400    | missing_required_parameter | text.format.schema         |
        | {"text": {"verbosity": "loud"}}                                                    | BadRequestError | 400    | invalid_value              | text.verbosity             |
        | {"text": {"colour": "red"}}                                                        | BadRequestError | 400    | unknown_parameter          | text.colour                |
        | {"metadata": {"k01": "v", "k02": "v", "k03": "v", "k04": "v", "k05": "v", "k06": "v", "k07": "v", "k08": "v", "k09": "v", "k10": "v", "k11": "v", "k12": "v", "k13": "v", "k14": "v", "k15": "v", "k16": "v", "k17": "v"}} | BadRequestError | 400 | object_above_max_properties | metadata |
        | {"metadata": {"k": 5}}                                                             | BadRequestError | 400    | invalid_type               | metadata.k                 |
        | {"stream": "yes"}                                                                  | BadRequestError | 400    | invalid_type               | stream                     |
        | {"store": 1}                                                                       | BadRequestError | 400    | invalid_type               | store                      |
        | {"prompt_cache_retention": "forever"}                                              | BadRequestError | 400    | invalid_value              | prompt_cache_retention     |
        | {"previous_response_id": "resp_123"}                                               | BadRequestError | 400    | previous_response_not_found | previous_response_id      |

    Scenario Outline: An invalid Chat Completions request is refused with OpenAI's error
      Given the OpenAI emulator runs on a manual clock
      When I send the OpenAI emulator's Chat Completions API the body changed by <change>
      Then the OpenAI emulator call fails with <exception>, status <status>, type "invalid_request_error" and code "<code>"
      And the OpenAI emulator error names the parameter "<param>"

      Examples:
        | change                                                                                    | exception       | status | code                       | param                         |
        | {"model": "text-embedding-3-small"}                                                       | NotFoundError   | 404    | model_not_found            | model                         |
        | {"messages": []}                                                                          | BadRequestError | 400    | empty_array                | messages                      |
        | {"messages": "hi"}                                                                        | BadRequestError | 400    | invalid_type               | messages                      |
        | {"messages": [{"role": "robot", "content": "x"}]}                                         | BadRequestError | 400    | invalid_value              | messages[0].role              |
        | {"messages": [{"role": "user"}]}                                                          | BadRequestError | 400    | missing_required_parameter | messages[0].content           |
        | {"messages": [{"role": "user", "content": 3}]}                                            | BadRequestError | 400    | invalid_type               | messages[0].content           |
        | {"messages": [{"role": "user", "content": [{"type": "input_audio"}]}]}                    | BadRequestError | 400    | invalid_value              | messages[0].content[0].type   |
        | {"messages": [{"role": "user", "content": [{"type": "text"}]}]}                           | BadRequestError | 400    | missing_required_parameter | messages[0].content[0].text   |
        | {"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}                      | BadRequestError | 400    | missing_required_parameter | messages[0].content[0].image_url |
        | {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]}     | BadRequestError | 400    | missing_required_parameter | messages[0].content[0].image_url.url |
        | {"messages": [{"role": "user", "content": [{"type": "file", "file": {"file_id": "file-x"}}]}]} | NotFoundError | 404  | -                          | messages[0].content[0].file.file_id |
        | {"frobnicate": true}                                                                      | BadRequestError | 400    | unknown_parameter          | frobnicate                    |
        | {"max_tokens": 0}                                                                         | BadRequestError | 400    | integer_below_min_value    | max_tokens                    |
        | {"max_completion_tokens": 1.5}                                                            | BadRequestError | 400    | invalid_type               | max_completion_tokens         |
        | {"n": 200}                                                                                | BadRequestError | 400    | integer_above_max_value    | n                             |
        | {"stop": ["a", "b", "c", "d", "e"]}                                                       | BadRequestError | 400    | array_above_max_length     | stop                          |
        | {"stop": 5}                                                                               | BadRequestError | 400    | invalid_type               | stop                          |
        | {"presence_penalty": 3}                                                                   | BadRequestError | 400    | decimal_above_max_value    | presence_penalty              |
        | {"stream_options": {"include_usage": true}}                                               | BadRequestError | 400    | invalid_value              | stream_options                |
        | {"response_format": {"type": "yaml"}}                                                     | BadRequestError | 400    | invalid_value              | response_format.type          |
        | {"response_format": {"type": "json_schema"}}                                              | BadRequestError | 400    | missing_required_parameter | response_format.json_schema   |
        | {"response_format": {"type": "json_schema", "json_schema": {"schema": {}}}}               | BadRequestError | 400    | missing_required_parameter | response_format.json_schema.name |
        | {"tools": "all"}                                                                          | BadRequestError | 400    | invalid_type               | tools                         |
        | {"tools": [{"type": "function"}]}                                                         | BadRequestError | 400    | missing_required_parameter | tools[0].function             |
        | {"tool_choice": "required"}                                                               | BadRequestError | 400    | -                          | tool_choice                   |
        | {"tool_choice": "maybe"}                                                                  | BadRequestError | 400    | invalid_value              | tool_choice                   |
        | {"tools": [{"type": "function", "function": {"name": "f"}}], "tool_choice": {"type": "function", "function": {"name": "g"}}} | BadRequestError | 400 | - | tool_choice  |
        | {"prompt_cache_retention": "1y"}                                                          | BadRequestError | 400    | invalid_value              | prompt_cache_retention        |

    Scenario: A marker in the user text fails a live call with its error type's status
      Given the OpenAI emulator runs on a manual clock
      When I ask the OpenAI emulator's Responses API "Hello [[emulator:errored:rate_limit_error]]"
      Then the OpenAI emulator call fails with RateLimitError, status 429, type "requests" and code "rate_limit_exceeded"
      When I ask the OpenAI emulator's Chat Completions API "Hello [[emulator:errored:overloaded_error]]"
      Then the OpenAI emulator call fails with InternalServerError, status 529, type "server_error" and code "-"
      When I ask the OpenAI emulator's Responses API "Hello [[emulator:expired]] [[emulator:missing]]"
      Then the OpenAI emulator answer is a completed response

  Rule: Responses and Chat Completions answer deterministically, with usage, tools and structured output

    Scenario: The same question gets the same answer on both APIs, with its usage
      Given the OpenAI emulator runs on a manual clock
      When I ask the OpenAI emulator's Responses API "What is the tide?"
      Then the OpenAI emulator answer is a completed response saying "Emulated reply to \"What is the tide?\": "
      And the OpenAI emulator answer used 5 input tokens, 0 of them cached
      When I ask the OpenAI emulator's Responses API "What is the tide?" again
      Then the OpenAI emulator answer says the same as before
      When I ask the OpenAI emulator's Chat Completions API "What is the tide?"
      Then the OpenAI emulator answer is a chat completion saying "Emulated reply to \"What is the tide?\": " and stopping for "stop"
      And the OpenAI emulator answer used 5 input tokens, 0 of them cached
      When I ask the OpenAI emulator's Responses API the body changed by {"input": [], "instructions": "Say hi"}
      Then the OpenAI emulator answer is a completed response saying "Emulated reply to \"\": "
      And the OpenAI emulator answer used 2 input tokens, 0 of them cached

    Scenario: Instructions, system and developer messages are read and counted
      Given the OpenAI emulator runs on a manual clock
      When I ask the OpenAI emulator's Responses API the body changed by {"instructions": "Be brief and kind.", "input": [{"role": "system", "content": "Answer in French."}, {"role": "developer", "content": [{"type": "input_text", "text": "No emoji."}]}, {"role": "user", "content": "Salut"}, {"role": "assistant", "content": [{"type": "output_text", "text": "Bonjour"}]}, {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}, {"type": "function_call_output", "call_id": "c1", "output": "done"}, {"type": "reasoning", "summary": []}, {"role": "user", "content": "Quelle marée ?"}], "tools": [{"type": "web_search"}], "tool_choice": {"type": "web_search_preview"}}
      Then the OpenAI emulator answer is a completed response saying "Emulated reply to \"Quelle marée ?\": "
      And the OpenAI emulator answer used 22 input tokens, 0 of them cached
      When I ask the OpenAI emulator's Chat Completions API the body changed by {"messages": [{"role": "system", "content": "Answer in French."}, {"role": "developer", "content": [{"type": "text", "text": "No emoji."}]}, {"role": "user", "content": "Salut"}, {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": "c1", "content": "done"}, {"role": "user", "content": [{"type": "text", "text": "Quelle marée ?"}]}], "n": 2, "stop": "zzz", "seed": 3, "temperature": 0.5, "tools": [{"type": "custom", "custom": {"name": "grammar"}}]}
      Then the OpenAI emulator answer is a chat completion saying "Emulated reply to \"Quelle marée ?\": " and stopping for "stop"
      And the OpenAI emulator chat completion has 2 identical choices

    Scenario: Output is cut at max_output_tokens or max_tokens
      Given the OpenAI emulator runs on a manual clock
      When I ask the OpenAI emulator's Responses API the body changed by {"max_output_tokens": 16, "input": "Tell me everything about the tides of the North Sea and the moon, please, at length"}
      Then the OpenAI emulator answer is an incomplete response, cut at 16 output tokens
      When I ask the OpenAI emulator's Chat Completions API the body changed by {"max_tokens": 2}
      Then the OpenAI emulator answer is a chat completion stopping for "length" after 2 output tokens
      When I ask the OpenAI emulator's Chat Completions API the body changed by {"stop": ["reply"]}
      Then the OpenAI emulator answer is a chat completion saying "Emulated " and stopping for "stop"

    Scenario: Structured output is JSON valid for the schema, parsed by the SDK into the model
      Given the OpenAI emulator runs on a manual clock
      When I ask the OpenAI emulator's Responses API to parse "Plan the voyage" into a Voyage
      Then the OpenAI emulator parsed answer is a valid Voyage
      When I ask the OpenAI emulator's Chat Completions API to parse "Plan the voyage" into a Voyage
      Then the OpenAI emulator parsed answer is a valid Voyage
      When I ask the OpenAI emulator's Responses API the body changed by {"text": {"format": {"type": "json_object"}}}
      Then the OpenAI emulator answer text is a JSON object with the key "answer"
      When I ask the OpenAI emulator's Chat Completions API the body changed by {"response_format": {"type": "json_object"}}
      Then the OpenAI emulator answer text is a JSON object with the key "answer"
      When I ask the OpenAI emulator's Chat Completions API the body changed by {"response_format": {"type": "text"}}
      Then the OpenAI emulator answer is a chat completion saying "Emulated reply" and stopping for "stop"

    Scenario: A function is called when the prompt asks for it (by marker or by name), or when the tool choice forces it
      Given the OpenAI emulator runs on a manual clock
      When I ask the OpenAI emulator's Responses API "Tides at Brest? [[emulator:tool:lookup_tide]]" with the tool lookup_tide
      Then the OpenAI emulator response calls lookup_tide with valid arguments
      When I ask the OpenAI emulator's Responses API "Is the sea calm at Brest?" with the tool lookup_tide
      Then the OpenAI emulator answer is a completed response saying "Emulated reply"
      When I ask the OpenAI emulator's Responses API "Tides at Brest?" with the tool lookup_tide
      Then the OpenAI emulator response calls lookup_tide with valid arguments
      When I ask the OpenAI emulator's Responses API "Tides at Brest?" with the tool lookup_tide and the tool choice "required"
      Then the OpenAI emulator response calls lookup_tide with valid arguments
      When I ask the OpenAI emulator's Responses API "Tides at Brest?" with the tool lookup_tide and the tool choice "lookup_tide"
      Then the OpenAI emulator response calls lookup_tide with valid arguments
      When I ask the OpenAI emulator's Responses API "Tides at Brest? [[emulator:tool:lookup_tide]]" with the tool lookup_tide and the tool choice "none"
      Then the OpenAI emulator answer is a completed response saying "Emulated reply"
      When I ask the OpenAI emulator's Chat Completions API "Tides at Brest?" with the tool lookup_tide and the tool choice "lookup_tide"
      Then the OpenAI emulator chat completion calls lookup_tide with valid arguments
      When I ask the OpenAI emulator's Chat Completions API "Tides at Brest? [[emulator:tool:lookup_tide]]" with the tool lookup_tide and the tool choice "auto"
      Then the OpenAI emulator chat completion calls lookup_tide with valid arguments

    Scenario: Images and PDFs are accepted, inline or uploaded, and counted
      Given the OpenAI emulator runs on a manual clock
      And the OpenAI emulator holds the upload "chart.png" for "vision" holding a 1024x1024 PNG image
      And the OpenAI emulator holds the upload "guide.pdf" for "user_data" holding a 2-page PDF
      When I ask the OpenAI emulator's Responses API "What is this?" with these parts:
        | part                      | tokens |
        | image 512x512 low detail  | 85     |
        | image 512x512             | 255    |
        | image 4096x1024           | 765    |
        | image 100x3000 gif        | 765    |
        | image 640x480 jpeg        | 425    |
        | image 640x480 webp        | 425    |
        | image url                 | 765    |
        | uploaded image chart.png  | 765    |
        | pdf of 1 page             | 769    |
        | uploaded pdf guide.pdf    | 1538   |
        | pdf url                   | 765    |
        | text file                 | 3      |
      Then the OpenAI emulator answer is a completed response saying "Emulated reply to \"What is this?\""
      And the OpenAI emulator answer used the tokens of its parts and 4 more
      When I ask the OpenAI emulator's Chat Completions API "What is this?" with these parts:
        | part                      | tokens |
        | image 512x512 high detail | 255    |
        | pdf of 1 page             | 769    |
        | uploaded pdf guide.pdf    | 1538   |
      Then the OpenAI emulator answer used the tokens of its parts and 4 more

    Scenario: A long prompt is cached in steps of 128 tokens, for 5 minutes or 24 hours
      Given the OpenAI emulator runs on a manual clock
      When I ask the OpenAI emulator's Responses API a 2000-token question "tides"
      Then the OpenAI emulator answer used 2001 input tokens, 0 of them cached
      When I ask the OpenAI emulator's Chat Completions API a 2000-token question "tides"
      Then the OpenAI emulator answer used 2001 input tokens, 1920 of them cached
      When the OpenAI emulator clock advances 301 seconds
      And I ask the OpenAI emulator's Responses API a 2000-token question "tides"
      Then the OpenAI emulator answer used 2001 input tokens, 0 of them cached
      When I ask the OpenAI emulator's Chat Completions API a 2000-token question "moons" kept for 24h
      Then the OpenAI emulator answer used 2002 input tokens, 0 of them cached
      When the OpenAI emulator clock advances 3600 seconds
      And I ask the OpenAI emulator's Chat Completions API a 2000-token question "moons" kept for 24h
      Then the OpenAI emulator answer used 2002 input tokens, 1920 of them cached
      When I ask the OpenAI emulator's Responses API a 500-token question "short"
      And I ask the OpenAI emulator's Responses API a 500-token question "short"
      Then the OpenAI emulator answer used 501 input tokens, 0 of them cached

  Rule: Streams are what the SDK's streaming helpers read, ended as OpenAI ends them

    Scenario Outline: A streamed Responses answer rebuilds exactly the non-streamed one
      Given the OpenAI emulator runs on a manual clock
      When I ask the OpenAI emulator's Responses API <question> with <tools>, streamed and not
      Then the OpenAI emulator streamed response is the non-streamed one
      And the OpenAI emulator stream's events are in OpenAI's order, ending with "<last>"

      Examples:
        | question                                                  | tools             | last                |
        | "What is the tide?"                                       | no tools          | response.completed  |
        | "Tides? [[emulator:tool:lookup_tide]]"                    | the tool lookup_tide | response.completed |
        | "Tell me about the tides of the North Sea at great length" | at most 16 tokens | response.incomplete |

    Scenario Outline: A streamed chat completion rebuilds the non-streamed one, and ends with [DONE]
      Given the OpenAI emulator runs on a manual clock
      When I ask the OpenAI emulator's Chat Completions API <question> with <tools>, streamed and not
      Then the OpenAI emulator streamed completion is the non-streamed one
      And the OpenAI emulator chat stream ends with a usage chunk and "data: [DONE]"

      Examples:
        | question                               | tools                |
        | "What is the tide?"                    | no tools             |
        | "Tides? [[emulator:tool:lookup_tide]]" | the tool lookup_tide |

  Rule: Embeddings are deterministic unit vectors

    Scenario: Embeddings come as floats or base64, of the model's size or the size asked for
      Given the OpenAI emulator runs on a manual clock
      When I ask the OpenAI emulator for embeddings of "tide" and "moon" with {"model": "text-embedding-3-small", "encoding_format": "base64"}
      Then the OpenAI emulator gives 2 unit vectors of 1536 numbers, 2 tokens
      When I ask the OpenAI emulator for embeddings of "tide" and "moon" with {"model": "text-embedding-3-small", "encoding_format": "float"}
      Then the OpenAI emulator gives the same vectors as before
      When I ask the OpenAI emulator for embeddings of "tide" with {"model": "text-embedding-3-large", "dimensions": 256}
      Then the OpenAI emulator gives 1 unit vectors of 256 numbers, 1 tokens
      When I ask the OpenAI emulator for embeddings of "tide" with {"model": "text-embedding-3-large"}
      Then the OpenAI emulator gives 1 unit vectors of 3072 numbers, 1 tokens
      When I ask the OpenAI emulator for embeddings of tokens [1, 2, 3] with {"model": "text-embedding-3-small"}
      Then the OpenAI emulator gives 1 unit vectors of 1536 numbers, 2 tokens

    Scenario Outline: Invalid embedding requests are refused
      Given the OpenAI emulator runs on a manual clock
      When I send the OpenAI emulator's Embeddings API the body <body>
      Then the OpenAI emulator call fails with <exception>, status <status>, type "invalid_request_error" and code "<code>"

      Examples:
        | body                                                                         | exception       | status | code                       |
        | {"model": "gpt-4o", "input": "x"}                                            | NotFoundError   | 404    | model_not_found            |
        | {"model": "text-embedding-3-small"}                                          | BadRequestError | 400    | missing_required_parameter |
        | {"model": "text-embedding-3-small", "input": 5}                              | BadRequestError | 400    | invalid_type               |
        | {"model": "text-embedding-3-small", "input": []}                             | BadRequestError | 400    | invalid_value              |
        | {"model": "text-embedding-3-small", "input": [""]}                           | BadRequestError | 400    | invalid_value              |
        | {"model": "text-embedding-3-small", "input": [["a"]]}                        | BadRequestError | 400    | invalid_type               |
        | {"model": "text-embedding-3-small", "input": "x", "encoding_format": "hex"}  | BadRequestError | 400    | invalid_value              |
        | {"model": "text-embedding-ada-002", "input": "x", "dimensions": 8}           | BadRequestError | 400    | -                          |
        | {"model": "text-embedding-3-small", "input": "x", "dimensions": 4000}        | BadRequestError | 400    | -                          |
        | {"model": "text-embedding-3-small", "input": "x", "user": "u", "extra": 1}   | BadRequestError | 400    | unknown_parameter          |

  Rule: Files are uploaded, listed, read and deleted as at OpenAI

    Scenario: A file is uploaded, retrieved, read, and once deleted is gone
      Given the OpenAI emulator runs on a manual clock
      When I upload "notes.txt" holding "High water at noon." to the OpenAI emulator for "user_data"
      Then the OpenAI emulator file "notes.txt" is a processed "user_data" file of 19 bytes that never expires
      And the OpenAI emulator file "notes.txt" reads "High water at noon."
      When I delete the OpenAI emulator file "notes.txt"
      Then the OpenAI emulator says the file "notes.txt" was deleted
      And the OpenAI emulator file "notes.txt" is not found, nor its content, nor can it be deleted again

    Scenario Outline: Uploads OpenAI refuses are refused
      Given the OpenAI emulator runs on a manual clock
      When I upload "<name>" to the OpenAI emulator with the fields <fields>
      Then the OpenAI emulator call fails with <exception>, status <status>, type "invalid_request_error" and code "<code>"

      Examples:
        | name      | fields                                                                 | exception       | status | code                       |
        | in.txt    | {"purpose": "batch"}                                                   | BadRequestError | 400    | -                          |
        | in.jsonl  | {"purpose": "training"}                                                | BadRequestError | 400    | invalid_value              |
        | in.jsonl  | {}                                                                     | BadRequestError | 400    | missing_required_parameter |
        | -         | {"purpose": "batch"}                                                   | BadRequestError | 400    | missing_required_parameter |
        | in.jsonl  | {"purpose": "batch", "expires_after[anchor]": "last_use"}              | BadRequestError | 400    | invalid_value              |
        | in.jsonl  | {"purpose": "batch", "expires_after[anchor]": "created_at", "expires_after[seconds]": "60"} | BadRequestError | 400 | invalid_value |

    Scenario: Files larger than the limit are refused with 413
      Given the OpenAI emulator runs on a manual clock
      And the OpenAI emulator takes files of at most 10 bytes
      When I upload "big.txt" holding "more than ten bytes" to the OpenAI emulator for "user_data"
      Then the OpenAI emulator call fails with APIStatusError, status 413, type "invalid_request_error" and code "-"
      When I upload "big.txt" holding "more than ten bytes, and a content-length to say so before reading" to the OpenAI emulator for "user_data" in one declared body
      Then the OpenAI emulator raw answer is 413 with type "invalid_request_error" and code "-"

    Scenario: Uploaded files never expire unless their expires_after says, batch files included
      Given the OpenAI emulator runs on a manual clock
      When I upload "in.jsonl" holding "{}" to the OpenAI emulator for "batch"
      And I upload "short.txt" to the OpenAI emulator with the fields {"purpose": "user_data", "expires_after[anchor]": "created_at", "expires_after[seconds]": "3600"}
      And I upload "kept.txt" holding "kept" to the OpenAI emulator for "user_data"
      Then the OpenAI emulator file "in.jsonl" is a processed "batch" file of 2 bytes that never expires
      And the OpenAI emulator file "short.txt" expires 3600 seconds after its creation
      When the OpenAI emulator clock advances 3600 seconds
      Then the OpenAI emulator lists the files "kept.txt, in.jsonl"
      And the OpenAI emulator file "short.txt" is not found, nor its content, nor can it be deleted again

    Scenario: Listing files walks them newest first, or oldest first, by purpose, a page at a time
      Given the OpenAI emulator runs on a manual clock
      When I upload 5 files to the OpenAI emulator, one a second, "a.txt" to "e.txt", "c.txt" for "assistants" and the others for "user_data"
      Then the OpenAI emulator lists the files "e.txt, d.txt, c.txt, b.txt, a.txt"
      And the OpenAI emulator lists the files "e.txt, d.txt, c.txt, b.txt, a.txt" 2 at a time in 3 pages
      And the OpenAI emulator lists the files "a.txt, b.txt, c.txt, d.txt, e.txt" 2 at a time, oldest first
      And the OpenAI emulator lists the files "e.txt, d.txt, b.txt, a.txt" for "user_data"
      And the OpenAI emulator lists the files "b.txt, a.txt" after "c.txt"
      When I list the OpenAI emulator files with {"limit": 0}
      Then the OpenAI emulator call fails with BadRequestError, status 400, type "invalid_request_error" and code "invalid_value"
      When I list the OpenAI emulator files with {"limit": "many"}
      Then the OpenAI emulator call fails with BadRequestError, status 400, type "invalid_request_error" and code "invalid_type"
      When I list the OpenAI emulator files with {"order": "sideways"}
      Then the OpenAI emulator call fails with BadRequestError, status 400, type "invalid_request_error" and code "invalid_value"
      When I list the OpenAI emulator files with {"after": "file-nope"}
      Then the OpenAI emulator call fails with NotFoundError, status 404, type "invalid_request_error" and code "-"

  Rule: A batch goes through OpenAI's life cycle on the emulator clock

    Scenario Outline: A batch is validating, in progress, finalizing, then completed with its output file
      Given the OpenAI emulator runs on a manual clock with 100 processing seconds
      When I run an OpenAI emulator batch of 4 requests to "<endpoint>" with the metadata {"job": "nightly"}
      Then the OpenAI emulator batch is "validating" with 0 completed, 0 failed of 0
      When the OpenAI emulator clock advances 10 seconds
      Then the OpenAI emulator batch is "in_progress" with 0 completed, 0 failed of 4
      When the OpenAI emulator clock advances 40 seconds
      Then the OpenAI emulator batch is "in_progress" with 2 completed, 0 failed of 4
      When the OpenAI emulator clock advances 40 seconds
      Then the OpenAI emulator batch is "finalizing" with 4 completed, 0 failed of 4
      When the OpenAI emulator clock advances 10 seconds
      Then the OpenAI emulator batch is "completed" with 4 completed, 0 failed of 4
      And the OpenAI emulator batch's timestamps are created 0, in_progress 10, finalizing 90, completed 100, expires 86400
      And the OpenAI emulator batch keeps its metadata {"job": "nightly"} and the model "<model>"
      And the OpenAI emulator batch has an output file and no error file
      And the OpenAI emulator output file answers each of "r0, r1, r2, r3" as a <body>, in another order
      And the OpenAI emulator output file is a "batch_output" file named after the batch

      Examples:
        | endpoint             | model                  | body            |
        | /v1/responses        | gpt-4o-mini            | Response        |
        | /v1/chat/completions | gpt-4o-mini            | ChatCompletion  |
        | /v1/embeddings       | text-embedding-3-small | embedding list  |

    Scenario: Requests that fail go to the error file, with the status the endpoint would answer
      Given the OpenAI emulator runs on a manual clock
      And the OpenAI emulator ends request "armed" as errored with "overloaded_error" saying "Busy."
      And the OpenAI emulator ends request "late" as expired
      And the OpenAI emulator ends request "stopped" as canceled
      When I run an OpenAI emulator batch to "/v1/responses" of these requests:
        | custom_id | body                                                                                  |
        | ok        | {"model": "gpt-4o", "input": "Hello"}                                                 |
        | limited   | {"model": "gpt-4o", "input": "Hi [[emulator:errored:rate_limit_error]]"}              |
        | bad       | {"model": "gpt-4o", "input": "Hi", "temperature": 9}                                  |
        | marked    | {"model": "gpt-4o", "input": "Hi [[emulator:expired]]"}                               |
        | armed     | {"model": "gpt-4o", "input": "Hi"}                                                    |
        | late      | {"model": "gpt-4o", "input": "Hi"}                                                    |
        | stopped   | {"model": "gpt-4o", "input": "Hi"}                                                    |
        | streamed  | {"model": "gpt-4o", "input": "Hi", "stream": true}                                    |
      Then the OpenAI emulator batch is "completed" with 1 completed, 7 failed of 8
      And the OpenAI emulator batch has an output file and an error file
      And the OpenAI emulator output file answers each of "ok" as a Response, in another order
      And the OpenAI emulator error file holds these lines:
        | custom_id | status | type                  | code                    | message                                       |
        | limited   | 429    | requests              | rate_limit_exceeded     | Emulated rate_limit_error requested by a marker. |
        | bad       | 400    | invalid_request_error | decimal_above_max_value | Invalid 'temperature'                         |
        | marked    | -      | -                     | batch_expired           | could not be executed before the completion window expired |
        | armed     | 529    | server_error          | -                       | Busy.                                         |
        | late      | -      | -                     | batch_expired           | could not be executed                         |
        | stopped   | -      | -                     | batch_cancelled         | was not executed                              |
        | streamed  | 400    | invalid_request_error | invalid_value           | Invalid value                                 |

    Scenario: A batch whose requests all fail completes with only an error file
      Given the OpenAI emulator runs on a manual clock
      When I run an OpenAI emulator batch to "/v1/chat/completions" of these requests:
        | custom_id | body                                                                         |
        | a         | {"model": "gpt-4o", "messages": []}                                          |
        | b         | {"model": "gpt-4o", "messages": [{"role": "user", "content": "[[emulator:errored]]"}]} |
        | c         | {"model": "gpt-4o", "messages": [{"role": "user", "content": "Hi"}], "stream": true}   |
      Then the OpenAI emulator batch is "completed" with 0 completed, 3 failed of 3
      And the OpenAI emulator batch has an error file and no output file
      And the OpenAI emulator error file holds these lines:
        | custom_id | status | type                  | code        | message                                      |
        | a         | 400    | invalid_request_error | empty_array | Invalid 'messages': empty array              |
        | b         | 400    | invalid_request_error | -           | Emulated invalid_request_error requested by a marker. |
        | c         | 400    | invalid_request_error | invalid_value | Invalid value                              |

    Scenario: Requests can be made to go missing from both files, though counted as completed
      Given the OpenAI emulator runs on a manual clock
      And the OpenAI emulator loses request "r1"
      When I run an OpenAI emulator batch to "/v1/responses" of these requests:
        | custom_id | body                                                          |
        | r0        | {"model": "gpt-4o", "input": "Hello"}                         |
        | r1        | {"model": "gpt-4o", "input": "Hello"}                         |
        | r2        | {"model": "gpt-4o", "input": "Hello [[emulator:missing]]"}    |
        | r3        | {"model": "gpt-4o", "input": "Hello [[emulator:errored]]"}    |
      Then the OpenAI emulator batch is "completed" with 3 completed, 1 failed of 4
      And the OpenAI emulator output file answers each of "r0" as a Response, in another order
      And the OpenAI emulator error file holds these lines:
        | custom_id | status | type                  | code | message  |
        | r3        | 400    | invalid_request_error | -    | Emulated |

    Scenario Outline: An input file OpenAI refuses makes the batch fail, with the problems in errors.data
      Given the OpenAI emulator runs on a manual clock with 100 processing seconds
      When I run an OpenAI emulator batch to "/v1/responses" of the input lines <lines>
      Then the OpenAI emulator batch is "validating" with 0 completed, 0 failed of 0
      When the OpenAI emulator clock advances 10 seconds
      Then the OpenAI emulator batch is "failed" with 0 completed, 0 failed of 0
      And the OpenAI emulator batch failed 10 seconds after its creation with the error "<code>" on line <line> about "<param>"
      And the OpenAI emulator batch has no output file and no error file
      And the OpenAI emulator counted no request of the batch as created

      Examples:
        | lines                                                                                                                      | code                       | line | param      |
        | ["not json"]                                                                                                               | invalid_json_line          | 1    | -          |
        | ["[1, 2]"]                                                                                                                 | invalid_json_line          | 1    | -          |
        | [{"custom_id": "a", "method": "POST", "url": "/v1/responses"}]                                                             | missing_required_parameter | 1    | body       |
        | [{"custom_id": 7, "method": "POST", "url": "/v1/responses", "body": {"model": "gpt-4o"}}]                                   | invalid_type               | 1    | custom_id  |
        | [{"custom_id": "a", "method": "GET", "url": "/v1/responses", "body": {"model": "gpt-4o"}}]                                  | invalid_value              | 1    | method     |
        | [{"custom_id": "a", "method": "POST", "url": "/v1/chat/completions", "body": {"model": "gpt-4o"}}]                          | url_mismatch               | 1    | url        |
        | [{"custom_id": "a", "method": "POST", "url": "/v1/responses", "body": [1]}]                                                | invalid_type               | 1    | body       |
        | [{"custom_id": "a", "method": "POST", "url": "/v1/responses", "body": {"input": "x"}}]                                       | missing_required_parameter | 1    | body.model |
        | [{"custom_id": "a", "method": "POST", "url": "/v1/responses", "body": {"model": "gpt-4o"}}, "", {"custom_id": "a", "method": "POST", "url": "/v1/responses", "body": {"model": "gpt-4o"}}] | duplicate_custom_id | 3 | custom_id |
        | [{"custom_id": "a", "method": "POST", "url": "/v1/responses", "body": {"model": "gpt-4o"}}, {"custom_id": "b", "method": "POST", "url": "/v1/responses", "body": {"model": "gpt-4o-mini"}}] | model_mismatch | 2 | body.model |
        | []                                                                                                                         | empty_file                 | -    | -          |

    Scenario: At most 50,000 requests and 200 MB make a batch
      Given the OpenAI emulator runs on a manual clock
      When I run an OpenAI emulator batch of 50001 requests to "/v1/embeddings"
      Then the OpenAI emulator batch is "failed" with 0 completed, 0 failed of 0
      And the OpenAI emulator batch failed 0 seconds after its creation with the error "too_many_tasks" on line - about "-"
      When I run an OpenAI emulator batch to "/v1/responses" of 150 broken lines
      Then the OpenAI emulator batch lists the first 100 problems, from line 1 on
      Given the OpenAI emulator takes batch input files of at most 300 bytes
      When I run an OpenAI emulator batch of 3 requests to "/v1/responses"
      Then the OpenAI emulator batch failed 0 seconds after its creation with the error "file_too_large" on line - about "-"
      When I run an OpenAI emulator batch of 1 requests to "/v1/responses"
      Then the OpenAI emulator batch is "completed" with 1 completed, 0 failed of 1

    Scenario Outline: A batch create OpenAI refuses is refused at once, and stores nothing
      Given the OpenAI emulator runs on a manual clock
      And the OpenAI emulator holds the upload "in.jsonl" for "batch" holding 1 request to "/v1/responses"
      And the OpenAI emulator holds the upload "notes.jsonl" for "user_data" holding 1 request to "/v1/responses"
      When I create an OpenAI emulator batch with <body>
      Then the OpenAI emulator call fails with <exception>, status <status>, type "invalid_request_error" and code "<code>"
      And the OpenAI emulator error names the parameter "<param>"
      And the OpenAI emulator holds no batch

      Examples:
        | body                                                                                                  | exception       | status | code                        | param                        |
        | {"input_file_id": "file-nope", "endpoint": "/v1/responses", "completion_window": "24h"}               | NotFoundError   | 404    | -                           | input_file_id                |
        | {"input_file_id": "notes.jsonl", "endpoint": "/v1/responses", "completion_window": "24h"}             | BadRequestError | 400    | -                           | input_file_id                |
        | {"input_file_id": 5, "endpoint": "/v1/responses", "completion_window": "24h"}                         | BadRequestError | 400    | invalid_type                | input_file_id                |
        | {"input_file_id": "in.jsonl", "endpoint": "/v1/images/generations", "completion_window": "24h"}       | BadRequestError | 400    | invalid_value               | endpoint                     |
        | {"input_file_id": "in.jsonl", "endpoint": "/v1/responses", "completion_window": "48h"}                | BadRequestError | 400    | invalid_value               | completion_window            |
        | {"input_file_id": "in.jsonl", "endpoint": "/v1/responses"}                                            | BadRequestError | 400    | missing_required_parameter  | completion_window            |
        | {"input_file_id": "in.jsonl", "endpoint": "/v1/responses", "completion_window": "24h", "priority": 1} | BadRequestError | 400    | unknown_parameter           | priority                     |
        | {"input_file_id": "in.jsonl", "endpoint": "/v1/responses", "completion_window": "24h", "metadata": {"k": "<513 chars>"}} | BadRequestError | 400 | string_above_max_length | metadata.k |
        | {"input_file_id": "in.jsonl", "endpoint": "/v1/responses", "completion_window": "24h", "metadata": {"<65 chars>": "v"}} | BadRequestError | 400 | string_above_max_length | metadata.xxxxxxxx… |
        | {"input_file_id": "in.jsonl", "endpoint": "/v1/responses", "completion_window": "24h", "metadata": []} | BadRequestError | 400  | invalid_type                | metadata                     |
        | {"input_file_id": "in.jsonl", "endpoint": "/v1/responses", "completion_window": "24h", "output_expires_after": {"anchor": "now", "seconds": 3600}} | BadRequestError | 400 | invalid_value | output_expires_after.anchor |
        | {"input_file_id": "in.jsonl", "endpoint": "/v1/responses", "completion_window": "24h", "output_expires_after": {"anchor": "created_at", "seconds": 10}} | BadRequestError | 400 | invalid_value | output_expires_after.seconds |

    Scenario: A cancelled batch is cancelling, then cancelled, keeping the answers that were done
      Given the OpenAI emulator runs on a manual clock with 100 processing seconds and 30 cancel seconds
      When I run an OpenAI emulator batch of 8 requests to "/v1/responses"
      And the OpenAI emulator clock advances 50 seconds
      And I cancel the OpenAI emulator batch
      Then the OpenAI emulator batch is "cancelling" with 4 completed, 0 failed of 8
      When I cancel the OpenAI emulator batch
      Then the OpenAI emulator batch is "cancelling" with 4 completed, 0 failed of 8
      When the OpenAI emulator clock advances 30 seconds
      Then the OpenAI emulator batch is "cancelled" with 4 completed, 0 failed of 8
      And the OpenAI emulator batch's timestamps are created 0, in_progress 10, cancelling 50, cancelled 80, expires 86400
      And the OpenAI emulator batch has an output file and no error file
      And the OpenAI emulator output file answers each of "r0, r1, r2, r3" as a Response, in another order
      When I cancel the OpenAI emulator batch
      Then the OpenAI emulator call fails with BadRequestError, status 400, type "invalid_request_error" and code "-"
      And the OpenAI emulator error message mentions "Cannot cancel a batch with status 'cancelled'"

    Scenario: A batch cancelled while validating is cancelled with nothing done and no files
      Given the OpenAI emulator runs on a manual clock with 100 processing seconds
      When I run an OpenAI emulator batch of 2 requests to "/v1/responses"
      And I cancel the OpenAI emulator batch
      Then the OpenAI emulator batch is "cancelling" with 0 completed, 0 failed of 0
      When the OpenAI emulator clock advances 1 seconds
      Then the OpenAI emulator batch is "cancelled" with 0 completed, 0 failed of 0
      And the OpenAI emulator batch has no output file and no error file

    Scenario: A completed batch can no longer be cancelled
      Given the OpenAI emulator runs on a manual clock
      When I run an OpenAI emulator batch of 1 requests to "/v1/responses"
      And I cancel the OpenAI emulator batch
      Then the OpenAI emulator call fails with BadRequestError, status 400, type "invalid_request_error" and code "-"
      And the OpenAI emulator error message mentions "Cannot cancel a batch with status 'completed'"

    Scenario: A batch still processing after 24 hours expires, its unfinished requests in the error file
      Given the OpenAI emulator runs on a manual clock with 192000 processing seconds
      When I run an OpenAI emulator batch of 8 requests to "/v1/chat/completions"
      And the OpenAI emulator clock advances 86399 seconds
      Then the OpenAI emulator batch is "in_progress" with 3 completed, 0 failed of 8
      When the OpenAI emulator clock advances 1 seconds
      Then the OpenAI emulator batch is "expired" with 3 completed, 5 failed of 8
      And the OpenAI emulator batch's timestamps are created 0, in_progress 19200, expired 86400, expires 86400
      And the OpenAI emulator batch has an output file and an error file
      And the OpenAI emulator output file answers each of "r0, r1, r2" as a ChatCompletion, in another order
      And the OpenAI emulator error file holds these lines:
        | custom_id | status | type | code          | message                         |
        | r3        | -      | -    | batch_expired | before the completion window expired |
        | r4        | -      | -    | batch_expired | before the completion window expired |
        | r5        | -      | -    | batch_expired | before the completion window expired |
        | r6        | -      | -    | batch_expired | before the completion window expired |
        | r7        | -      | -    | batch_expired | before the completion window expired |

    Scenario: Listing batches walks them newest first, a page at a time
      Given the OpenAI emulator runs on a manual clock
      When I run 5 OpenAI emulator batches of 1 request each
      Then the OpenAI emulator lists its 5 batches newest first, 2 at a time, with has_more, first_id and last_id
      When I list the OpenAI emulator batches with {"limit": 101}
      Then the OpenAI emulator call fails with BadRequestError, status 400, type "invalid_request_error" and code "invalid_value"
      When I list the OpenAI emulator batches with {"limit": "few"}
      Then the OpenAI emulator call fails with BadRequestError, status 400, type "invalid_request_error" and code "invalid_type"
      When I list the OpenAI emulator batches with {"after": "batch_nope"}
      Then the OpenAI emulator call fails with NotFoundError, status 404, type "invalid_request_error" and code "-"
      When I retrieve the OpenAI emulator batch "batch_nope"
      Then the OpenAI emulator call fails with NotFoundError, status 404, type "invalid_request_error" and code "-"

    Scenario: Output files live as long as output_expires_after says, and can be deleted on their own
      Given the OpenAI emulator runs on a manual clock
      When I run an OpenAI emulator batch of 2 requests to "/v1/responses" with the output kept 3600 seconds
      Then the OpenAI emulator output file expires 3600 seconds after its creation
      When I delete the OpenAI emulator batch's input file
      And I delete the OpenAI emulator batch's output file
      Then the OpenAI emulator batch has an output file and no error file
      And the OpenAI emulator batch's output file is not found
      When I run an OpenAI emulator batch of 1 requests to "/v1/responses"
      And the OpenAI emulator clock advances 2592000 seconds
      Then the OpenAI emulator batch's output file is not found

  Rule: Faults are armed for the OpenAI routes as for the Anthropic ones, and creates are counted per custom id

    Scenario Outline: An armed fault fails the next call to its route with OpenAI's error for that status
      Given the OpenAI emulator runs on a manual clock
      And the OpenAI emulator fails the next "<route>" call with status <status> and retry-after 7
      When I call the OpenAI emulator route "<route>"
      Then the OpenAI emulator call fails with <exception>, status <status>, type "<type>" and code "<code>"
      And the OpenAI emulator error has the header "retry-after" set to "7"
      When I call the OpenAI emulator route "<route>"
      Then the OpenAI emulator call succeeded

      Examples:
        | route                          | status | exception           | type         | code                |
        | openai.files.create            | 429    | RateLimitError      | requests     | rate_limit_exceeded |
        | openai.files.retrieve          | 500    | InternalServerError | server_error | -                   |
        | openai.files.list              | 503    | InternalServerError | server_error | -                   |
        | openai.files.delete            | 404    | NotFoundError       | invalid_request_error | -          |
        | openai.files.content           | 409    | ConflictError       | invalid_request_error | -          |
        | openai.batches.create          | 429    | RateLimitError      | requests     | rate_limit_exceeded |
        | openai.batches.retrieve        | 500    | InternalServerError | server_error | -                   |
        | openai.batches.list            | 502    | InternalServerError | server_error | -                   |
        | openai.batches.cancel          | 504    | InternalServerError | server_error | -                   |
        | openai.responses.create        | 429    | RateLimitError      | requests     | rate_limit_exceeded |
        | openai.chat.completions.create | 503    | InternalServerError | server_error | -                   |
        | openai.embeddings.create       | 403    | PermissionDeniedError | invalid_request_error | unsupported_country_region_territory |
        | openai.responses.create        | 401    | AuthenticationError | invalid_request_error | invalid_api_key |
        | openai.responses.create        | 413    | APIStatusError      | invalid_request_error | -               |
        | openai.responses.create        | 418    | APIStatusError      | invalid_request_error | -               |
        | openai.responses.create        | 507    | InternalServerError | server_error | -                   |

    Scenario: A rate limit carries OpenAI's rate-limit headers, and the SDK's own retries get through
      Given the OpenAI emulator runs on a manual clock
      And the OpenAI emulator fails the next "openai.responses.create" call with status 429, 2 times, retry-after 0.01 and message "Slow down."
      When I ask the OpenAI emulator's Responses API "Hello"
      Then the OpenAI emulator call fails with RateLimitError, status 429, type "requests" and code "rate_limit_exceeded"
      And the OpenAI emulator error message mentions "Slow down."
      And the OpenAI emulator error has the header "x-ratelimit-remaining-requests" set to "0"
      And the OpenAI emulator error has the header "x-ratelimit-reset-requests" set to "0.01s"
      When I ask the OpenAI emulator's Responses API "Hello" with 2 SDK retries
      Then the OpenAI emulator answer is a completed response
      And the OpenAI emulator counted 3 calls to "openai.responses.create"

    Scenario: A batch create whose answer is dropped still commits the batch, which is counted once per custom id
      Given the OpenAI emulator runs on a manual clock
      And the OpenAI emulator drops the answer of the next "openai.batches.create" call
      When I run an OpenAI emulator batch of 3 requests to "/v1/responses"
      Then the OpenAI emulator call failed with a dropped connection
      And the OpenAI emulator lists 1 batch, holding 3 requests
      And the OpenAI emulator counted 1 batch created, holding "r0=1, r1=1, r2=1"
      When I run an OpenAI emulator batch of 3 requests to "/v1/responses"
      Then the OpenAI emulator counted 2 batches created, holding "r0=2, r1=2, r2=2"

    Scenario: Delayed and slow answers wait on the emulator clock
      Given the OpenAI emulator runs on a manual clock
      And the OpenAI emulator delays the answer of the next "openai.files.create" call by 5 seconds
      And the OpenAI emulator makes "openai.files.create" slow by 1 seconds, 1 time
      And the OpenAI emulator makes "openai.responses.create" slow by 2 seconds, 1 time
      And the OpenAI emulator makes "openai.files.content" slow by 1 seconds
      When I upload "notes.txt" holding "x" to the OpenAI emulator for "user_data"
      Then the OpenAI emulator clock slept 2 times for 6 seconds in all
      When I ask the OpenAI emulator's Responses API "Hello", streamed and not
      Then the OpenAI emulator clock slept at least 10 times
      When I run an OpenAI emulator batch of 3 requests to "/v1/responses"
      And I read the OpenAI emulator output file
      Then the OpenAI emulator clock slept 3 more times for 3 seconds in all

    Scenario: Calls are counted by route, failed ones included
      Given the OpenAI emulator runs on a manual clock
      When I ask the OpenAI emulator's Responses API "Hello"
      And I send the OpenAI emulator a raw "POST" to "/v1/responses" without a key
      And I run an OpenAI emulator batch of 1 requests to "/v1/responses"
      Then the OpenAI emulator counted these calls:
        | route                   | count |
        | openai.responses.create | 2     |
        | openai.files.create     | 1     |
        | openai.batches.create   | 1     |
        | openai.batches.retrieve | 1     |

    Scenario: The admin routes arm OpenAI faults and missing requests, and the stats count OpenAI creates
      Given the OpenAI emulator serves on a socket
      When I arm the socket OpenAI emulator's fault {"route": "openai.batches.create", "status": 503}
      And I arm the socket OpenAI emulator's outcome {"custom_id": "r1", "kind": "missing"}
      And I run an OpenAI emulator batch of 2 requests to "/v1/responses"
      Then the OpenAI emulator call fails with InternalServerError, status 503, type "server_error" and code "-"
      When I run an OpenAI emulator batch of 2 requests to "/v1/responses"
      Then the OpenAI emulator batch is "completed" with 2 completed, 0 failed of 2
      And the OpenAI emulator output file answers each of "r0" as a Response, in another order
      And the socket OpenAI emulator's stats show 1 OpenAI batch created, holding "r0=1, r1=1"
      When I arm the socket OpenAI emulator's outcome {"custom_id": 5, "kind": "missing"}
      Then the socket OpenAI emulator admin answer is 400
      When I reset the socket OpenAI emulator
      Then the socket OpenAI emulator's stats show no OpenAI batch, file or call

  Rule: A state file keeps the OpenAI files and batches across restarts

    Scenario: An emulator started again on its state file serves the same files, batches, outputs and counters
      Given the OpenAI emulator runs on a manual clock with a state file
      And the OpenAI emulator loses request "gone"
      And the OpenAI emulator holds the upload "image.png" for "vision" holding a 64x64 PNG image
      When I run an OpenAI emulator batch to "/v1/responses" of these requests:
        | custom_id | body                                                        |
        | ok        | {"model": "gpt-4o", "input": "Hello"}                       |
        | gone      | {"model": "gpt-4o", "input": "Hello"}                       |
        | bad       | {"model": "gpt-4o", "input": "Hi [[emulator:errored]]"}     |
      And I read the OpenAI emulator output and error files
      And I cancel a second OpenAI emulator batch that is still in progress
      And I delete the OpenAI emulator batch's error file
      And I run an OpenAI emulator batch to "/v1/responses" whose input fails validation
      And I leave an OpenAI emulator batch of 1 request in progress
      And the OpenAI emulator is started again on its state file
      Then the OpenAI emulator serves the same files, batches and output as before
      And the OpenAI emulator counted 4 batches created, holding "ok=1, gone=1, bad=1, r0=1, r1=1, p0=1"
      And the OpenAI emulator still loses request "gone"
