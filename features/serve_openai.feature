Feature: lowtide serve, OpenAI's Chat Completions and Responses APIs answered through batches
  As a developer with a program written against the OpenAI SDK
  I want to point its base URL at lowtide serve, in front of an OpenAI actor
  So that its calls are coalesced into batches at batch prices, recorded in the ledger, never paid twice

  Background:
    Given an emulator behind lowtide serve, on a socket
    And lowtide serve runs an OpenAI actor in a background thread with client key "local-secret"

  Scenario: A chat completion is answered through a batch
    When the chat completion "What is a tide?" is asked of lowtide serve
    Then the served chat completion answers with text, finish reason "stop" and its usage
    And behind lowtide serve the emulator created 1 OpenAI batch(es) holding 1 request(s) to "/v1/chat/completions"

  Scenario: A response is answered through a batch
    When the response "What is a tide?" is asked of lowtide serve with instructions "Answer briefly."
    Then the served response is completed with output text and its usage
    And the served response echoes the instructions "Answer briefly."
    And behind lowtide serve the emulator created 1 OpenAI batch(es) holding 1 request(s) to "/v1/responses"

  Scenario: Twenty concurrent chat completions are answered through one batch
    When 20 different chat completions are asked of lowtide serve at once
    Then all 20 served chat completions have text and different ids
    And behind lowtide serve the emulator created 1 OpenAI batch(es) holding 20 request(s) to "/v1/chat/completions"

  Scenario: The same chat completion asked twice is answered from the ledger
    When the chat completion "What is a tide?" is asked of lowtide serve
    And the chat completion "What is a tide?" is asked of lowtide serve
    Then both served chat completions are the same answer
    And behind lowtide serve the emulator created 1 OpenAI batch(es) holding 1 request(s) to "/v1/chat/completions"

  Scenario: A streamed chat completion is replayed as chunks, its usage last, then [DONE]
    When the chat completion "Tell me about tides" is streamed from lowtide serve with its usage
    Then the served chunks rebuild the text of the same chat completion unstreamed
    And the last served chunk has no choices and the usage
    And the served stream ends with "data: [DONE]"
    And behind lowtide serve the emulator created 1 OpenAI batch(es) holding 1 request(s) to "/v1/chat/completions"

  Scenario: A streamed response is replayed as the Responses API's typed events
    When the response "Tell me about tides" is streamed from lowtide serve
    Then the served response events are response.created, response.in_progress, response.output_item.added, response.content_part.added, response.output_text.delta, response.output_text.done, response.content_part.done, response.output_item.done, response.completed
    And the completed response's output text is the streamed text

  Scenario: A chat completion calls a tool, and its result goes back as a tool message
    When a chat completion with the tool "get_tide" is asked of lowtide serve to call it
    Then the served chat completion calls "get_tide" with arguments that are a JSON object, finish reason "tool_calls"
    When the tool's result "High tide at 14:02" is sent back in a chat completion
    Then the served chat completion answers with text, finish reason "stop" and its usage

  Scenario: A response calls a function, and its output goes back as a function_call_output item
    When a response with the function "get_tide" is asked of lowtide serve to call it
    Then the served response holds a function_call to "get_tide"
    When the function's output "High tide at 14:02" is sent back in a response
    Then the served response is completed with output text and its usage

  Scenario: A streamed chat completion replays its tool calls
    When a chat completion with the tool "get_tide" is streamed from lowtide serve to call it
    Then the served chunks rebuild a call of "get_tide" with finish reason "tool_calls"

  Scenario: Structured output by response_format json_schema
    When a chat completion with the json_schema "tide" is asked of lowtide serve
    Then the served chat completion's text is JSON fitting the schema "tide"

  Scenario: Structured output by text.format json_schema in the Responses API
    When a response with the json_schema "tide" is asked of lowtide serve
    Then the served response's output text is JSON fitting the schema "tide"
    And the served response echoes the text format "json_schema"

  Scenario: A wrong client key is refused in OpenAI's shape, before anything is sent
    When a chat completion is asked of lowtide serve with the client key "not-the-key"
    Then the OpenAI SDK raises AuthenticationError with status 401 and code "invalid_api_key"
    And behind lowtide serve the emulator created 0 OpenAI batch(es) holding 0 request(s) to "/v1/chat/completions"

  Scenario Outline: A bad body is refused with 400 before anything is sent
    When the body <body> is posted to lowtide serve at "<path>"
    Then lowtide serve answers status 400 in OpenAI's shape naming "<param>"
    And behind lowtide serve the emulator created 0 OpenAI batch(es) holding 0 request(s) to "<path>"

    Examples:
      | path                 | body                                                                                         | param                 |
      | /v1/chat/completions | {"messages": [{"role": "user", "content": "Hi"}]}                                            | model                 |
      | /v1/chat/completions | {"model": "gpt-5.4-mini", "messages": []}                                                    | messages              |
      | /v1/chat/completions | {"model": "gpt-5.4-mini", "messages": [{"role": "user", "content": "Hi"}], "n": 2}           | n                     |
      | /v1/chat/completions | {"model": "gpt-5.4-mini", "messages": [{"role": "user", "content": "Hi"}], "logit_bias_x": 1} | logit_bias_x          |
      | /v1/chat/completions | {"model": "gpt-5.4-mini", "messages": [{"role": "robot", "content": "Hi"}]}                  | messages[0].role      |
      | /v1/chat/completions | {"model": "gpt-5.4-mini", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 0}  | max_tokens            |
      | /v1/chat/completions | {"model": "gpt-5.4-mini", "messages": [{"role": "user", "content": "Hi"}], "stop": ["a", "b", "c", "d", "e"]} | stop_sequences |
      | /v1/chat/completions | {"model": "gpt-5.4-mini", "messages": [{"role": "user", "content": "Hi"}], "tools": [{"type": "custom"}]} | tools[0].type |
      | /v1/responses        | {"model": "gpt-5.4-mini"}                                                                    | input                 |
      | /v1/responses        | {"model": "gpt-5.4-mini", "input": "Hi", "previous_response_id": "resp_1"}                   | previous_response_id  |
      | /v1/responses        | {"model": "gpt-5.4-mini", "input": [{"type": "web_search_call"}]}                            | input[0].type         |
      | /v1/responses        | {"model": "gpt-5.4-mini", "input": "Hi", "max_output_tokens": 8}                             | max_tokens            |
      | /v1/responses        | {"model": "gpt-5.4-mini", "input": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": "[1]"}]} | input[0].arguments |

  Scenario: A body that is not JSON is refused with 400
    When the text "not json" is posted to lowtide serve at "/v1/responses"
    Then lowtide serve answers status 400 in OpenAI's shape naming "body"

  Scenario: A path lowtide serve does not serve gets OpenAI's 404
    When the body {} is posted to lowtide serve at "/v1/embeddings"
    Then lowtide serve answers status 404 with the error code "unknown_url"

  Scenario: A request the upstream batch refuses gets OpenAI's error, and no retry from the SDK
    When the chat completion "[[emulator:errored:invalid_request_error]]" is asked of lowtide serve and fails
    Then the OpenAI SDK raises BadRequestError with status 400 and code "invalid_request_error"
    And lowtide serve's answer told the SDK not to retry

  Scenario: A request whose batch expired gets a timeout
    When the response "[[emulator:expired]]" is asked of lowtide serve and fails
    Then the OpenAI SDK raises InternalServerError with status 504 and code "timeout"

  Scenario: A streamed request whose batch errored ends with an error event
    When the chat completion "[[emulator:errored:invalid_request_error]]" is streamed from lowtide serve and fails
    Then the OpenAI SDK raises APIError from the stream saying "invalid_request_error"

  Scenario: A streamed response whose batch errored ends with an error event
    When the response "[[emulator:expired]]" is streamed from lowtide serve and fails
    Then the OpenAI SDK raises APIError from the stream saying "expired"

  Scenario: A spent budget is refused as insufficient_quota, and the SDK is told not to retry
    Given lowtide serve's OpenAI actor has a budget of $0.0000001 a call
    When the chat completion "What is a tide?" is asked of lowtide serve and fails
    Then the OpenAI SDK raises RateLimitError with status 429 and code "insufficient_quota"
    And lowtide serve's answer told the SDK not to retry
    And behind lowtide serve the emulator created 0 OpenAI batch(es) holding 0 request(s) to "/v1/chat/completions"
