Feature: Whatever Mistral's chat completions answer, a live call reads it as lowtide's ActorResponse or ActorError
  As a developer whose agent runs on Mistral models
  I want every shape of answer Mistral sends (a reasoning model's chunks, tool calls whole or cut short, a stream in
  odd pieces, an error body of any kind) read into the same ActorResponse or the right ActorError
  So that my agent never crashes on an answer, and retries only what may succeed

  Each answer below is queued on the scenario's transport in place of the emulator's, and read by the unmodified
  mistralai SDK; every other call reaches the emulator's Mistral API, in process.

  Background:
    Given an emulated Mistral API whose chat calls are kept
    And a Mistral actor "reader" with:
      """
      max_tokens: 64
      live: {retries: {rate_limited: 0, server: 0, connection: 0}}
      """

  Scenario: A reasoning model's thinking chunk is thinking, its text chunk text, and a chunk lowtide does not model kept whole
    Given the Mistral API answers the next call to "/v1/chat/completions" with:
      """
      {"id": "cmpl-think", "object": "chat.completion", "model": "magistral-medium-latest", "created": 1,
       "usage": {"prompt_tokens": 12, "completion_tokens": 30, "total_tokens": 42},
       "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": [
         {"type": "thinking", "thinking": [{"type": "text", "text": "The moon pulls "}, {"type": "text", "text": "the sea."}]},
         {"type": "text", "text": "High tide is at noon."},
         {"type": "reference", "reference_ids": [3]}]}}]}
      """
    When the actor is asked "When is high tide?"
    Then the Mistral response holds these content blocks:
      | type      | detail                                        |
      | thinking  | The moon pulls the sea.                       |
      | text      | High tide is at noon.                         |
      | reference | {"reference_ids": [3], "type": "reference"}   |
    And the response has these fields:
      | field               | value                   |
      | text                | High tide is at noon.   |
      | stop_reason         | end_turn                |
      | model               | magistral-medium-latest |
      | usage.input_tokens  | 12                      |
      | usage.output_tokens | 30                      |

  Scenario: Tool calls ending "stop" are tool use; arguments sent as an object are read, arguments cut short keep the call whole
    Given the Mistral API answers the next call to "/v1/chat/completions" with:
      """
      {"id": "cmpl-tools", "object": "chat.completion", "model": "mistral-small-latest", "created": 1,
       "usage": {"prompt_tokens": 20, "completion_tokens": 16, "total_tokens": 36},
       "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "", "tool_calls": [
         {"id": "abcdefghi", "type": "function", "function": {"name": "record_tide", "arguments": {"port": "Brest"}}},
         {"id": "bcdefghij", "type": "function", "function": {"name": "record_tide", "arguments": "{\"port\": \"Ro"}}]}}]}
      """
    When the actor is asked "Record the tides of Brest and Roscoff"
    Then the Mistral response holds these content blocks:
      | type          | detail                                                                                                  |
      | tool_use      | record_tide {"port": "Brest"}                                                                           |
      | function_call | {"function": {"arguments": "{\"port\": \"Ro", "name": "record_tide"}, "id": "bcdefghij", "index": 0, "type": "function"} |
    And the response has these fields:
      | field       | value    |
      | stop_reason | tool_use |

  Scenario: An answer holding no choice is an empty response with no stop reason, not a crash
    Given the Mistral API answers the next call to "/v1/chat/completions" with:
      """
      {"id": "cmpl-empty", "object": "chat.completion", "model": "mistral-small-latest", "created": 1,
       "usage": {"prompt_tokens": 5, "completion_tokens": 0, "total_tokens": 5}, "choices": []}
      """
    When the actor is asked "Hello"
    Then the Mistral response holds these content blocks:
      | type | detail |
    And the response has these fields:
      | field       | value |
      | text        |       |
      | stop_reason |       |

  Scenario: A model that fails mid-answer (finish_reason "error") is a server's fault: retried, then answered
    Given a Mistral actor "steady" with:
      """
      max_tokens: 64
      """
    And the Mistral API answers the next call to "/v1/chat/completions" with:
      """
      {"id": "cmpl-broken", "object": "chat.completion", "model": "mistral-small-latest", "created": 1,
       "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
       "choices": [{"index": 0, "finish_reason": "error", "message": {"role": "assistant", "content": "Hig"}}]}
      """
    When the actor is asked "Is the harbour open?"
    Then the answer is the emulated reply to "Is the harbour open?"
    And Mistral was sent 2 chat calls

  Scenario: With no retries left, a model that fails mid-answer is a retryable ServerError saying so
    Given the Mistral API answers the next call to "/v1/chat/completions" with:
      """
      {"id": "cmpl-broken", "object": "chat.completion", "model": "mistral-small-latest", "created": 1,
       "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
       "choices": [{"index": 0, "finish_reason": "error", "message": {"role": "assistant", "content": "Hig"}}]}
      """
    When the actor is asked "Is the harbour open?"
    Then a ServerError is raised
    And the error message contains "finish_reason: error"

  Scenario: A streamed answer is joined in order: thinking, text in pieces, a tool call's arguments split over chunks
    Given a Mistral actor "streamer" with:
      """
      max_tokens: 8000
      """
    And the Mistral API streams the next chat call as these chunks:
      """
      {"id": "cmpl-s", "model": "magistral-small-latest", "created": 1, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"role": "assistant", "content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Brest first."}]}]}, "finish_reason": null}]}
      {"id": "cmpl-s", "model": "magistral-small-latest", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "Recording "}, "finish_reason": null}]}
      {"id": "cmpl-s", "model": "magistral-small-latest", "object": "chat.completion.chunk", "choices": [{"index": 1, "delta": {"content": "another choice, never read"}, "finish_reason": null}]}
      {"id": "cmpl-s", "model": "magistral-small-latest", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "the tide.", "tool_calls": [{"id": "abcdefghi", "index": 0, "function": {"name": "record_tide", "arguments": "{\"port\": "}}]}, "finish_reason": null}]}
      {"id": "cmpl-s", "model": "magistral-small-latest", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "", "tool_calls": [{"index": 0, "function": {"name": "", "arguments": "\"Brest\"}"}}, {"id": "cdefghijk", "index": 1, "function": {"name": "record_tide", "arguments": {"port": "Roscoff"}}}]}, "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 14, "completion_tokens": 21, "total_tokens": 35}}
      """
    When the actor is asked "Record the tides of Brest and Roscoff"
    Then the Mistral response holds these content blocks:
      | type     | detail                          |
      | thinking | Brest first.                    |
      | text     | Recording the tide.             |
      | tool_use | record_tide {"port": "Brest"}   |
      | tool_use | record_tide {"port": "Roscoff"} |
    And the response has these fields:
      | field               | value                  |
      | stop_reason         | tool_use               |
      | model               | magistral-small-latest |
      | usage.input_tokens  | 14                     |
      | usage.output_tokens | 21                     |
    And Mistral was sent, in its chat body:
      | path   | value |
      | stream | true  |

  Scenario: A stream that ends before its finish reason is a broken connection: retried, then answered whole
    Given a Mistral actor "streamer" with:
      """
      max_tokens: 8000
      """
    And the Mistral API streams the next chat call as these chunks:
      """
      {"id": "cmpl-cut", "model": "mistral-small-latest", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Emulated rep"}, "finish_reason": null}]}
      (cut)
      """
    When the actor is asked "Is the harbour open?"
    Then the answer is the emulated reply to "Is the harbour open?"
    And Mistral was sent 2 chat calls

  Scenario: With no retries left, a stream cut short is an APIConnectionError saying how far it got
    Given a Mistral actor "streamer" with:
      """
      max_tokens: 8000
      live: {retries: {connection: 0}}
      """
    And the Mistral API streams the next chat call as these chunks:
      """
      {"id": "cmpl-cut", "model": "mistral-small-latest", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Emulated rep"}, "finish_reason": null}]}
      (cut)
      """
    When the actor is asked "Is the harbour open?"
    Then an APIConnectionError is raised
    And the error message contains "ended after 1 chunk(s), before its answer was finished"

  Scenario Outline: An error body Mistral (or a proxy before it) sends with status <status> is a <error> saying "<says>"
    Given the Mistral API answers the next call to "/v1/chat/completions" with status <status> and the body:
      """
      <body>
      """
    When the actor is asked "Hello"
    Then a <error> is raised
    And the error message contains "<says>"

    Examples:
      | status | body                                                                                      | error               | says                                  |
      | 422    | {"detail": [{"loc": ["body", "messages", 0, "content"], "msg": "Field required", "type": "missing"}]} | InvalidRequestError | body.messages.0.content: Field required |
      | 400    | {"detail": "tool_choice names no tool"}                                                   | InvalidRequestError | tool_choice names no tool             |
      | 400    | {"object": "error", "message": "Prompt too long", "type": "invalid_request_error", "code": "3051"} | InvalidRequestError | Prompt too long                       |
      | 400    | {"message": "bad", "code": 1500                                                           | InvalidRequestError | {"message": "bad", "code": 1500       |
      | 502    | <html><body>Bad gateway</body></html>                                                     | ServerError         | <html><body>Bad gateway</body></html> |
      | 503    | -                                                                                         | ServerError         | Mistral answered HTTP status 503.     |
      | 400    | {"detail": ["tide"]}                                                                      | InvalidRequestError | {"detail": ["tide"]}                  |
      | 401    | {"message": "Unauthorized", "request_id": "abc"}                                          | AuthenticationError | Unauthorized                          |

  Scenario: A models endpoint refusing the key (401) is the call's own AuthenticationError; nothing is asked of chat
    Given the Mistral API will fail the next "mistral.models.get" call with status 401
    When the actor is asked "Hello"
    Then an AuthenticationError is raised
    And Mistral was sent 0 chat calls

  Scenario: A models endpoint answering 500 skips the model check for that call only; both calls are answered
    Given the Mistral API will fail the next "mistral.models.get" call with status 500
    When the actor is asked "Hello"
    Then the answer is the emulated reply to "Hello"
    When the actor is asked "Hello again"
    Then the answer is the emulated reply to "Hello again"
    And the API received these calls:
      | call                     | count |
      | mistral.models.get       | 2     |
      | mistral.chat.completions | 2     |

  Scenario: A models endpoint out of reach skips the model check for the process; the calls are answered
    Given the Mistral models endpoint cannot be reached
    When the actor is asked "Hello"
    Then the answer is the emulated reply to "Hello"
    When the actor is asked "Hello again"
    Then the answer is the emulated reply to "Hello again"
    And the API received these calls:
      | call                     | count |
      | mistral.models.get       | 0     |
      | mistral.chat.completions | 2     |

  Scenario: A model card of a kind lowtide does not know leaves the window unchecked; the call goes on
    Given the Mistral API answers the next call to "/v1/models/mistral-small-latest" with:
      """
      {"id": "mistral-small-latest", "object": "model", "type": "agent"}
      """
    When the actor is asked "Hello"
    Then the answer is the emulated reply to "Hello"

  Scenario: An unknown model is refused without suggestions when the model list cannot be read either
    Given a Mistral actor "typo" with:
      """
      model: mistral-larg-latest
      """
    And the Mistral API will fail the next "mistral.models.list" call with status 500
    When the actor is asked "Hello"
    Then a ConfigurationError is raised
    And the error message contains "Mistral does not know the model 'mistral-larg-latest'"
    And the error message does not contain "Did you mean"
    And Mistral was sent 0 chat calls

  Scenario: Suggestions for an unknown model come from the model cards lowtide knows, skipping the others
    Given a Mistral actor "typo" with:
      """
      model: mistral-larg-latest
      """
    And the Mistral API answers the next call to "/v1/models" with:
      """
      {"object": "list", "data": [
        {"id": "mistral-large-agent", "object": "model", "type": "agent"},
        {"id": "mistral-large-2411", "object": "model", "type": "base", "aliases": ["mistral-large-latest"],
         "capabilities": {"completion_chat": true}}]}
      """
    When the actor is asked "Hello"
    Then a ConfigurationError is raised
    And the error message contains "Did you mean 'mistral-large-latest', 'mistral-large-2411'?"
    And the error message does not contain "mistral-large-agent"
