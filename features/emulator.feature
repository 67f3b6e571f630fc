Feature: The emulator, an offline and faithful Anthropic API for the real SDK
  lowtide is tested end to end against the emulator with the unmodified anthropic SDK, so the emulator answers
  the Messages and Message Batches APIs as the real API does: the same objects, the same errors, the same life
  cycle, on a clock the tests control.

  Rule: Every API call is authenticated and carries a request id

    Scenario: A call without credentials is refused
      Given the emulator runs on a manual clock
      When I send the emulator a raw "POST" to "/v1/messages" without credentials
      Then the emulator answers 401 with error type "authentication_error"

    Scenario: Both the x-api-key header and a bearer token are accepted
      Given the emulator runs on a manual clock
      When I send the emulator a message authenticated by x-api-key
      Then the emulator reply has stop reason "end_turn"
      When I send the emulator a message authenticated by a bearer token
      Then the emulator reply has stop reason "end_turn"

    Scenario: An emulator restricted to some keys refuses the others
      Given the emulator runs on a manual clock and accepts only the API key "good-key"
      When I send the emulator a message with the API key "bad-key"
      Then the emulator call fails with AuthenticationError, status 401 and error type "authentication_error"
      And the emulator error message mentions "invalid x-api-key"
      When I send the emulator a message with the API key "good-key"
      Then the emulator reply has stop reason "end_turn"

    Scenario: A call without the anthropic-version header is refused
      Given the emulator runs on a manual clock
      When I send the emulator a raw "GET" to "/v1/messages/batches" without an anthropic-version header
      Then the emulator answers 400 with error type "invalid_request_error"

    Scenario Outline: Unknown routes, wrong methods and broken bodies answer in the API's error shape
      Given the emulator runs on a manual clock
      When I send the emulator a raw "<method>" to "<path>" with the body "<body>"
      Then the emulator answers <status> with error type "<type>"

      Examples:
        | method | path                 | body      | status | type                  |
        | GET    | /v1/nothing          | -         | 404    | not_found_error       |
        | PUT    | /v1/messages         | -         | 405    | invalid_request_error |
        | POST   | /v1/messages         | not json  | 400    | invalid_request_error |
        | POST   | /v1/messages/batches | [1, 2, 3] | 400    | invalid_request_error |
        | POST   | /v1/messages         | [1, 2, 3] | 400    | invalid_request_error |
        | POST   | /v1/messages         | {"model": "claude-sonnet-5-5", "max_tokens": 5, "messages": [{"role": "user", "content": "x \ud800"}]} | 400 | invalid_request_error |

  Rule: Messages params are validated as the API validates them

    Scenario Outline: An invalid Messages request is refused with the API's error
      Given the emulator runs on a manual clock
      When I send the emulator a message with the params changed by <change>
      Then the emulator call fails with <exception>, status <status> and error type "<type>"
      And the emulator error message mentions "<mention>"

      Examples: the model, max_tokens and unknown keys
        | change                      | exception       | status | type                  | mention                              |
        | {"model": "gpt-4o"}         | NotFoundError   | 404    | not_found_error       | model: gpt-4o                        |
        | {"model": null}             | BadRequestError | 400    | invalid_request_error | model: Field required                |
        | {"model": 42}               | BadRequestError | 400    | invalid_request_error | model: Input should be a valid string |
        | {"max_tokens": 0}           | BadRequestError | 400    | invalid_request_error | max_tokens                           |
        | {"max_tokens": "ten"}       | BadRequestError | 400    | invalid_request_error | max_tokens                           |
        | {"max_tokens": 200000}      | BadRequestError | 400    | invalid_request_error | maximum allowed number of output     |
        | {"frobnicate": true}        | BadRequestError | 400    | invalid_request_error | frobnicate: Extra inputs             |
        | {"temperature": 2}          | BadRequestError | 400    | invalid_request_error | temperature                          |
        | {"top_p": "high"}           | BadRequestError | 400    | invalid_request_error | top_p                                |
        | {"top_k": -1}               | BadRequestError | 400    | invalid_request_error | top_k                                |
        | {"metadata": "x"}           | BadRequestError | 400    | invalid_request_error | metadata                             |
        | {"metadata": {"user": "x"}} | BadRequestError | 400    | invalid_request_error | metadata.user                        |
        | {"metadata": {"user_id": 5}} | BadRequestError | 400   | invalid_request_error | metadata.user_id                     |
        | {"service_tier": "gold"}    | BadRequestError | 400    | invalid_request_error | service_tier                         |
        | {"speed": "warp"}           | BadRequestError | 400    | invalid_request_error | speed                                |
        | {"stream": "yes"}           | BadRequestError | 400    | invalid_request_error | stream                               |
        | {"stop_sequences": "x"}     | BadRequestError | 400    | invalid_request_error | stop_sequences                       |
        | {"stop_sequences": [" "]}   | BadRequestError | 400    | invalid_request_error | stop_sequences.0                     |

      Examples: messages and their content blocks
        | change                                                                                        | exception       | status | type                  | mention                              |
        | {"messages": []}                                                                              | BadRequestError | 400    | invalid_request_error | at least one message                 |
        | {"messages": "hi"}                                                                            | BadRequestError | 400    | invalid_request_error | messages: Input should be a valid list |
        | {"messages": ["hi"]}                                                                          | BadRequestError | 400    | invalid_request_error | messages.0: Input should be a valid dictionary |
        | {"messages": [{"role": "system", "content": "x"}]}                                           | BadRequestError | 400    | invalid_request_error | messages.0.role                      |
        | {"messages": [{"role": "user"}]}                                                              | BadRequestError | 400    | invalid_request_error | messages.0.content: Field required   |
        | {"messages": [{"role": "user", "content": "x", "name": "bob"}]}                               | BadRequestError | 400    | invalid_request_error | messages.0.name: Extra inputs        |
        | {"messages": [{"role": "user", "content": ""}]}                                               | BadRequestError | 400    | invalid_request_error | non-empty content                    |
        | {"messages": [{"role": "user", "content": []}]}                                               | BadRequestError | 400    | invalid_request_error | non-empty content                    |
        | {"messages": [{"role": "user", "content": 42}]}                                               | BadRequestError | 400    | invalid_request_error | messages.0.content                   |
        | {"messages": [{"role": "user", "content": ["x"]}]}                                            | BadRequestError | 400    | invalid_request_error | messages.0.content.0                 |
        | {"messages": [{"role": "user", "content": [{"text": "x"}]}]}                                  | BadRequestError | 400    | invalid_request_error | messages.0.content.0.type            |
        | {"messages": [{"role": "user", "content": [{"type": "video"}]}]}                              | BadRequestError | 400    | invalid_request_error | Input tag 'video'                    |
        | {"messages": [{"role": "user", "content": [{"type": "text"}]}]}                               | BadRequestError | 400    | invalid_request_error | messages.0.content.0.text            |
        | {"messages": [{"role": "user", "content": [{"type": "text", "text": ""}]}]}                   | BadRequestError | 400    | invalid_request_error | text content blocks must be non-empty |
        | {"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": [{"type": "tool_use", "id": "t1"}]}]} | BadRequestError | 400 | invalid_request_error | `id` and `name` |
        | {"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "n", "input": 1}]}]} | BadRequestError | 400 | invalid_request_error | input |
        | {"messages": [{"role": "user", "content": [{"type": "tool_result"}]}]}                        | BadRequestError | 400    | invalid_request_error | tool_use_id                          |
        | {"messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t9"}]}]}   | BadRequestError | 400    | invalid_request_error | unexpected `tool_use_id`             |
        | {"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "n", "input": {}}]}, {"role": "user", "content": "b"}]} | BadRequestError | 400 | invalid_request_error | without `tool_result` |
        | {"messages": [{"role": "user", "content": "a", "cache_control": 1}]}                          | BadRequestError | 400    | invalid_request_error | cache_control: Extra inputs          |
        | {"messages": [{"role": "user", "content": [{"type": "text", "text": "a", "cache_control": {"type": "forever"}}]}]} | BadRequestError | 400 | invalid_request_error | 'ephemeral' |
        | {"cache_control": {"type": "ephemeral", "ttl": "2h"}}                                         | BadRequestError | 400    | invalid_request_error | cache_control.ttl                    |

      Examples: system, tools, tool_choice, thinking, output_config and cache breakpoints
        | change                                                                                           | exception       | status | type                  | mention                                  |
        | {"system": 42}                                                                                   | BadRequestError | 400    | invalid_request_error | system                                   |
        | {"system": [{"type": "image"}]}                                                                  | BadRequestError | 400    | invalid_request_error | system blocks must be text               |
        | {"tools": "x"}                                                                                   | BadRequestError | 400    | invalid_request_error | tools: Input should be a valid list      |
        | {"tools": ["x"]}                                                                                 | BadRequestError | 400    | invalid_request_error | tools.0: Input should be a valid dictionary |
        | {"tools": [{"input_schema": {"type": "object"}}]}                                                | BadRequestError | 400    | invalid_request_error | tools.0.name: Field required             |
        | {"tools": [{"name": "bad name!", "input_schema": {"type": "object"}}]}                           | BadRequestError | 400    | invalid_request_error | tools.0.custom.name                      |
        | {"tools": [{"name": "t"}]}                                                                       | BadRequestError | 400    | invalid_request_error | input_schema: Field required             |
        | {"tools": [{"name": "t", "input_schema": {"type": "array"}}]}                                    | BadRequestError | 400    | invalid_request_error | input_schema.type                        |
        | {"tools": [{"name": "t", "type": 5}]}                                                            | BadRequestError | 400    | invalid_request_error | tools.0.type                             |
        | {"tools": [{"name": "t", "input_schema": {"type": "object"}}, {"name": "t", "type": "web_search_20250305"}]} | BadRequestError | 400 | invalid_request_error | Tool names must be unique |
        | {"tool_choice": "x"}                                                                             | BadRequestError | 400    | invalid_request_error | tool_choice                              |
        | {"tool_choice": {"type": "sometimes"}}                                                           | BadRequestError | 400    | invalid_request_error | tool_choice.type                         |
        | {"tool_choice": {"type": "any"}}                                                                 | BadRequestError | 400    | invalid_request_error | may only be specified while providing tools |
        | {"tool_choice": {"type": "tool"}, "tools": [{"name": "t", "input_schema": {"type": "object"}}]}  | BadRequestError | 400    | invalid_request_error | tool_choice.tool.name: Field required    |
        | {"tool_choice": {"type": "tool", "name": "nope"}, "tools": [{"name": "t", "input_schema": {"type": "object"}}]} | BadRequestError | 400 | invalid_request_error | Tool 'nope' not found |
        | {"thinking": "on"}                                                                               | BadRequestError | 400    | invalid_request_error | thinking                                 |
        | {"thinking": {"type": "enabled"}}                                                                | BadRequestError | 400    | invalid_request_error | budget_tokens                            |
        | {"thinking": {"type": "enabled", "budget_tokens": 500}}                                          | BadRequestError | 400    | invalid_request_error | greater than or equal to 1024            |
        | {"thinking": {"type": "enabled", "budget_tokens": 4096}}                                         | BadRequestError | 400    | invalid_request_error | must be greater than `thinking.budget_tokens` |
        | {"thinking": {"type": "sometimes"}}                                                              | BadRequestError | 400    | invalid_request_error | thinking.type                            |
        | {"thinking": {"type": "adaptive", "display": "loud"}}                                            | BadRequestError | 400    | invalid_request_error | thinking.display                         |
        | {"thinking": {"type": "adaptive"}, "tool_choice": {"type": "any"}, "tools": [{"name": "t", "input_schema": {"type": "object"}}]} | BadRequestError | 400 | invalid_request_error | Thinking may not be enabled |
        | {"output_config": "x"}                                                                           | BadRequestError | 400    | invalid_request_error | output_config                            |
        | {"output_config": {"verbosity": 1}}                                                              | BadRequestError | 400    | invalid_request_error | output_config.verbosity                  |
        | {"output_config": {"effort": "extreme"}}                                                         | BadRequestError | 400    | invalid_request_error | output_config.effort                     |
        | {"output_config": {"format": {"type": "xml"}}}                                                   | BadRequestError | 400    | invalid_request_error | output_config.format.type                |
        | {"output_config": {"format": {"type": "json_schema"}}}                                           | BadRequestError | 400    | invalid_request_error | output_config.format.schema              |
        | {"cache_control": {"type": "ephemeral"}, "system": [{"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}}, {"type": "text", "text": "b", "cache_control": {"type": "ephemeral"}}], "tools": [{"name": "t", "input_schema": {"type": "object"}, "cache_control": {"type": "ephemeral"}}], "messages": [{"role": "user", "content": [{"type": "text", "text": "c", "cache_control": {"type": "ephemeral"}}]}]} | BadRequestError | 400 | invalid_request_error | A maximum of 4 blocks with cache_control may be provided. Found 5. |

    Scenario: A valid conversation with tool use, server tools and every optional param is answered
      Given the emulator runs on a manual clock
      When I send the emulator a message with the params changed by {"system": "Be brief.", "temperature": 0.5, "top_p": 0.9, "top_k": 5, "metadata": {"user_id": "u1"}, "service_tier": "auto", "speed": "standard", "stream": false, "output_config": {"effort": "low", "format": null}, "tool_choice": {"type": "auto"}, "tools": [{"name": "lookup", "input_schema": {"type": "object"}}, {"name": "web_search", "type": "web_search_20250305"}], "messages": [{"role": "user", "content": "Look it up"}, {"role": "assistant", "content": [{"type": "text", "text": "Looking."}, {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {}}]}, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "42"}]}, {"type": "text", "text": "Thanks"}]}, {"role": "assistant", "content": ""}]}
      Then the emulator reply has stop reason "end_turn"
      And the emulator reply text starts with 'Emulated reply to "42 Thanks": '

  Rule: Armed faults fail calls before they change anything

    Scenario Outline: An armed fault fails the next call to its route with the API's error for that status
      Given the emulator runs on a manual clock
      And the emulator fails the next "<route>" call with status <status>
      When I call the emulator route "<route>"
      Then the emulator call fails with <exception>, status <status> and error type "<type>"
      And the emulator counted 1 "<route>" call
      When I call the emulator route "<route>"
      Then the emulator call succeeded
      And the emulator counted 2 "<route>" calls

      Examples:
        | route            | status | exception                | type                  |
        | messages.create  | 400    | BadRequestError          | invalid_request_error |
        | messages.create  | 401    | AuthenticationError      | authentication_error  |
        | messages.create  | 402    | PaymentRequiredError     | billing_error         |
        | batches.create   | 403    | PermissionDeniedError    | permission_error      |
        | batches.retrieve | 404    | NotFoundError            | not_found_error       |
        | batches.list     | 409    | ConflictError            | conflict_error        |
        | batches.create   | 413    | ContentTooLargeError     | request_too_large     |
        | batches.list     | 429    | RateLimitError           | rate_limit_error      |
        | batches.results  | 500    | InternalServerError      | api_error             |
        | batches.delete   | 503    | ServiceUnavailableError  | api_error             |
        | batches.delete   | 504    | GatewayTimeoutError      | timeout_error         |
        | batches.cancel   | 529    | OverloadedError          | overloaded_error      |
        | messages.create  | 418    | APIStatusError           | invalid_request_error |

    Scenario: A rate limit fault carries retry-after, and the SDK's retries get through
      Given the emulator runs on a manual clock
      And the emulator fails the next "messages.create" call with status 429, 1 time, retry-after 7 and message "Slow down, please."
      When I send the emulator a message
      Then the emulator call fails with RateLimitError, status 429 and error type "rate_limit_error"
      And the emulator error has the header "retry-after" set to "7"
      And the emulator error message mentions "Slow down, please."
      Given the emulator fails the next "messages.create" call with status 529, 2 times, retry-after 0.01 and message "Busy."
      When I send the emulator a message allowing 2 SDK retries
      Then the emulator reply has stop reason "end_turn"
      And the emulator counted 4 "messages.create" calls

    Scenario: A failed batch create stores nothing
      Given the emulator runs on a manual clock
      And the emulator fails the next "batches.create" call with status 500
      When I create an emulator batch of 3 requests
      Then the emulator call fails with InternalServerError, status 500 and error type "api_error"
      And the emulator holds 0 batches
      And the emulator counted 1 "batches.create" call

    Scenario: Faults are checked when they are armed
      Given the emulator runs on a manual clock
      Then arming these emulator faults raises ValueError:
        | route           | status | times |
        | messages.stream | 500    | 1     |
        | messages.create | 200    | 1     |
        | messages.create | 500    | 0     |
      And arming these emulator outcomes raises ValueError:
        | custom_id | kind      | error_type       |
        | a         | succeeded | api_error        |
        | a         | errored   | mystery_error    |

  Rule: A batch is checked when it is created, its params only while it is processed

    Scenario Outline: A malformed batch is refused at create time
      Given the emulator runs on a manual clock
      When I post the emulator the batch body <body>
      Then the emulator call fails with BadRequestError, status 400 and error type "invalid_request_error"
      And the emulator error message mentions "<mention>"

      Examples:
        | body                                                                              | mention                                   |
        | {"requests": []}                                                                  | at least 1 item                           |
        | {"requests": "x"}                                                                 | requests: Input should be a valid list    |
        | {}                                                                                | requests: Field required                  |
        | {"requests": [], "extra": 1}                                                      | extra: Extra inputs are not permitted     |
        | {"requests": ["x"]}                                                               | requests.0: Input should be a valid dictionary |
        | {"requests": [{"params": {}}]}                                                    | requests.0.custom_id: Field required      |
        | {"requests": [{"custom_id": "has space", "params": {}}]}                          | requests.0.custom_id: String should match |
        | {"requests": [{"custom_id": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "params": {}}]} | requests.0.custom_id |
        | {"requests": [{"custom_id": "a", "params": {}}, {"custom_id": "a", "params": {}}]} | requests.1.custom_id: Duplicate custom_id 'a' |
        | {"requests": [{"custom_id": "a"}]}                                                | requests.0.params: Field required         |
        | {"requests": [{"custom_id": "a", "params": "x"}]}                                 | requests.0.params: Input should be a valid dictionary |
        | {"requests": [{"custom_id": "a", "params": {}, "note": 1}]}                       | requests.0.note: Extra inputs             |

    # How fast is measured in benchmarks/batch_vs_sdk.py (100,000 requests against the official SDK's own client), not
    # here: the CPU bounds this scenario had were a timed test. Work that grows faster than the requests (quadratic at
    # 100,000 would take hours) still ends it, through the stuck watchdog (features/support/stuck.py). The bodies go
    # out as raw JSON, not through the SDK (whose deep copy of a 100,000-request body was most of this scenario's CPU,
    # and is not the emulator's), and the batch is canceled a tenth of the way, so that all 100,000 are settled and
    # served while 10,000 of them are answered in full (a full answer's every field: the scenarios above and below).
    Scenario: 100,000 requests are accepted and served, 100,001 refused
      Given the emulator runs on a manual clock with 60 processing seconds
      When I post the emulator a raw batch of 100001 requests
      Then the emulator raw answer is 400 with error type "invalid_request_error"
      And the emulator raw answer's message mentions "at most 100000 items"
      When I post the emulator a raw batch of 100000 requests
      Then the emulator batch is "in_progress" with 100000 requests processing
      When the emulator clock advances 6 seconds
      And I cancel the emulator batch
      And I retrieve the emulator batch
      Then the emulator batch is "ended" with counts succeeded=10000 canceled=90000
      When I download the emulator batch results as raw lines
      Then the emulator results file has 100000 lines, 10000 of them succeeded

    Scenario: Bodies over the byte limits are refused with 413
      Given the emulator runs on a manual clock with bodies limited to 2000 bytes
      When I create an emulator batch of 40 requests
      Then the emulator call fails with ContentTooLargeError, status 413 and error type "request_too_large"
      When I send the emulator a chunked batch body of 5000 bytes
      Then the emulator answers 413 with error type "request_too_large"
      When I send the emulator a message of 3000 characters
      Then the emulator call fails with ContentTooLargeError, status 413 and error type "request_too_large"
      When I create an emulator batch of 2 requests
      Then the emulator batch is "in_progress" with 2 requests processing

    Scenario: Invalid params fail only their own request, in the results
      Given the emulator runs on a manual clock
      When I create an emulator batch whose requests change the params by:
        | custom_id  | change                                        |
        | good       | {}                                            |
        | no-max     | {"max_tokens": null}                          |
        | wrong-model | {"model": "gpt-4o"}                          |
        | streaming  | {"stream": true}                              |
        | not-params | {"messages": [{"role": "robot", "content": "x"}]} |
        | odd-blocks | {"messages": [{"role": "user", "content": [42, {"type": "text", "text": 5}]}]} |
        | with-image | {"messages": [{"role": "user", "content": [{"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}, {"type": "text", "text": "What is this?"}]}]} |
      Then the emulator batch is "in_progress" with 7 requests processing
      When I retrieve the emulator batch
      Then the emulator batch is "ended" with counts succeeded=2 errored=5
      When I fetch the emulator batch results
      Then the emulator results are:
        | custom_id   | result    | error_type            | message                                        |
        | good        | succeeded |                       |                                                |
        | no-max      | errored   | invalid_request_error | max_tokens: Field required                     |
        | wrong-model | errored   | not_found_error       | model: gpt-4o                                  |
        | streaming   | errored   | invalid_request_error | streaming is not supported                     |
        | not-params  | errored   | invalid_request_error | messages.0.role                                |
        | odd-blocks  | errored   | invalid_request_error | messages.0.content.0: Input should be a valid dictionary |
        | with-image  | succeeded |                       |                                                |

  Rule: A batch's life cycle follows the emulator clock

    Scenario: A batch is in progress until its processing time has passed, then ends
      Given the emulator runs on a manual clock with 120 processing seconds
      When I create an emulator batch of 3 requests
      Then the emulator batch is "in_progress" with 3 requests processing
      And the emulator batch expires 24 hours after it was created
      When the emulator clock advances 119 seconds
      And I retrieve the emulator batch
      Then the emulator batch is "in_progress" with 3 requests processing
      When the emulator clock advances 1 seconds
      And I retrieve the emulator batch
      Then the emulator batch is "ended" with counts succeeded=3
      And the emulator batch ended 120 seconds after it was created
      And the emulator batch results URL is "http://emulator.invalid/v1/messages/batches/<id>/results"

    Scenario: A poller sharing the emulator clock sees the batch end without real waiting
      Given the emulator runs on a manual clock with 120 processing seconds
      When I create an emulator batch of 2 requests
      And I poll the emulator batch every 10 seconds until it has ended
      Then the emulator batch is "ended" with counts succeeded=2
      And the emulator clock slept 12 times for 120 seconds in all

    Scenario: A canceled batch is canceling, then ends with its unprocessed requests canceled
      Given the emulator runs on a manual clock with 120 processing seconds and 30 cancel seconds
      When I create an emulator batch of 4 requests
      And the emulator clock advances 60 seconds
      And I cancel the emulator batch
      Then the emulator batch is "canceling" with 4 requests processing
      And the emulator batch shows its cancel was initiated 60 seconds after it was created
      When I cancel the emulator batch
      Then the emulator batch is "canceling" with 4 requests processing
      When the emulator clock advances 30 seconds
      And I retrieve the emulator batch
      Then the emulator batch is "ended" with counts succeeded=2 canceled=2
      And the emulator batch ended 90 seconds after it was created
      When I fetch the emulator batch results
      Then the emulator results are:
        | custom_id | result    |
        | r0        | succeeded |
        | r1        | succeeded |
        | r2        | canceled  |
        | r3        | canceled  |
      When I cancel the emulator batch
      Then the emulator call fails with BadRequestError, status 400 and error type "invalid_request_error"
      And the emulator error message mentions "already ended"

    Scenario: Without cancel time, a canceled batch shows canceling once and is ended on the next read
      Given the emulator runs on a manual clock with 120 processing seconds
      When I create an emulator batch of 2 requests
      And I cancel the emulator batch
      Then the emulator batch is "canceling" with 2 requests processing
      When I retrieve the emulator batch
      Then the emulator batch is "ended" with counts canceled=2

    Scenario: A batch still processing after 24 hours expires where it stands
      Given the emulator runs on a manual clock with 172800 processing seconds
      When I create an emulator batch of 4 requests
      And the emulator clock advances 86399 seconds
      And I retrieve the emulator batch
      Then the emulator batch is "in_progress" with 4 requests processing
      When the emulator clock advances 1 seconds
      And I retrieve the emulator batch
      Then the emulator batch is "ended" with counts succeeded=2 expired=2
      And the emulator batch ended 86400 seconds after it was created
      When I fetch the emulator batch results
      Then the emulator results are:
        | custom_id | result    |
        | r0        | succeeded |
        | r1        | succeeded |
        | r2        | expired   |
        | r3        | expired   |

    Scenario: Only an ended batch can be deleted, and then it is gone
      Given the emulator runs on a manual clock with 60 processing seconds
      When I create an emulator batch of 1 requests
      And I delete the emulator batch
      Then the emulator call fails with BadRequestError, status 400 and error type "invalid_request_error"
      And the emulator error message mentions "In progress batches cannot be deleted. Consider canceling the batch instead."
      When the emulator clock advances 60 seconds
      And I delete the emulator batch
      Then the emulator deleted the batch
      When I retrieve the emulator batch
      Then the emulator call fails with NotFoundError, status 404 and error type "not_found_error"
      When I delete the emulator batch
      Then the emulator call fails with NotFoundError, status 404 and error type "not_found_error"
      When I send the emulator a raw "GET" to "/v1/messages/batches/<id>/results"
      Then the emulator answers 404 with error type "not_found_error"

  Rule: Listing pages through batches as the SDK's paginator expects

    Scenario: Listing walks every batch once, newest first
      Given the emulator runs on a manual clock
      When I create 5 emulator batches, one second apart
      And I list the emulator batches 2 at a time
      Then the emulator listed all 5 batches, newest first
      When I list one emulator page of 2 batches
      Then the emulator page holds the 2 newest batches and has more
      When I list one emulator page of 10 batches after the 2nd newest batch
      Then the emulator page holds the 3 oldest batches and has no more
      When I list the emulator batches 2 at a time before the oldest batch
      Then the emulator listed the 4 newer batches, each once

    Scenario: An empty list is one empty page
      Given the emulator runs on a manual clock
      When I list one emulator page of 20 batches
      Then the emulator page is empty

    Scenario Outline: List parameters are checked
      Given the emulator runs on a manual clock
      When I create 2 emulator batches, one second apart
      And I list the emulator batches with the query "<query>"
      Then the emulator call fails with BadRequestError, status 400 and error type "invalid_request_error"
      And the emulator error message mentions "<mention>"

      Examples:
        | query                          | mention                       |
        | limit=0                        | between 1 and 1000            |
        | limit=1001                     | between 1 and 1000            |
        | limit=many                     | valid integer                 |
        | after_id=NEWEST&before_id=OLDEST | Only one of after_id and before_id |
        | after_id=msgbatch_unknown      | no Message Batch with id      |

  Rule: Results are a JSONL file of the ended batch, joined by custom_id

    Scenario: Results are only available once a batch has ended
      Given the emulator runs on a manual clock with 60 processing seconds
      When I create an emulator batch of 2 requests
      And I send the emulator a raw "GET" to "/v1/messages/batches/<id>/results"
      Then the emulator answers 404 with error type "not_found_error"
      When I fetch the emulator batch results
      Then the SDK refused to fetch results without a results URL
      When the emulator clock advances 60 seconds
      And I fetch the emulator batch results
      Then the emulator results are:
        | custom_id | result    | service_tier |
        | r0        | succeeded | batch        |
        | r1        | succeeded | batch        |
      And each emulator result answers its own request
      When I send the emulator a raw "GET" to "/v1/messages/batches/<id>/results"
      Then the emulator raw answer is JSON lines served as "application/x-jsonl"
      And downloading the emulator results again gives the same file

    Scenario: Results come back in an order unrelated to the requests
      Given the emulator runs on a manual clock
      When I create an emulator batch of 20 requests
      And I fetch the emulator batch results
      Then the emulator results hold every custom_id once, not in request order

  Rule: Requests can be made to end badly, by marker or by custom_id

    Scenario: Markers in the user text decide a batch request's outcome
      Given the emulator runs on a manual clock
      When I create an emulator batch whose requests say:
        | custom_id  | text                                           |
        | good       | Good morning                                   |
        | invalid    | [[emulator:errored]] Bad request               |
        | overloaded | [[emulator:errored:overloaded_error]] Busy now |
        | stopped    | [[emulator:canceled]] Never mind               |
        | too-late   | [[emulator:expired]] Tomorrow                  |
        | made-up    | [[emulator:errored:mystery_error]] Fine        |
      And I fetch the emulator batch results
      Then the emulator results are:
        | custom_id  | result    | error_type            | message                                           |
        | good       | succeeded |                       |                                                   |
        | invalid    | errored   | invalid_request_error | Emulated invalid_request_error requested by a marker. |
        | overloaded | errored   | overloaded_error      | Emulated overloaded_error requested by a marker.  |
        | stopped    | canceled  |                       |                                                   |
        | too-late   | expired   |                       |                                                   |
        | made-up    | succeeded |                       |                                                   |
      And every errored emulator result carries a request id of its own, the same on every download
      When I retrieve the emulator batch
      Then the emulator batch is "ended" with counts succeeded=2 errored=2 canceled=1 expired=1

    Scenario: Outcomes armed by custom_id apply whenever a batch holding it ends
      Given the emulator runs on a manual clock
      And the emulator ends request "r1" as errored with "rate_limit_error" saying "Too many requests from this workspace."
      And the emulator ends request "r2" as expired
      When I create an emulator batch of 3 requests
      And I fetch the emulator batch results
      Then the emulator results are:
        | custom_id | result    | error_type       | message                                |
        | r0        | succeeded |                  |                                        |
        | r1        | errored   | rate_limit_error | Too many requests from this workspace. |
        | r2        | expired   |                  |                                        |
      When I create an emulator batch of 2 requests
      And I fetch the emulator batch results
      Then the emulator results are:
        | custom_id | result    | error_type       |
        | r0        | succeeded |                  |
        | r1        | errored   | rate_limit_error |

    Scenario Outline: A marker in a Messages request fails the call with its error type's status
      Given the emulator runs on a manual clock
      When I send the emulator a message saying "<text>"
      Then the emulator call fails with <exception>, status <status> and error type "<type>"

      Examples:
        | text                                    | exception       | status | type                  |
        | [[emulator:errored:overloaded_error]] x | OverloadedError | 529    | overloaded_error      |
        | [[emulator:errored]] x                  | BadRequestError | 400    | invalid_request_error |
        | [[emulator:errored:rate_limit_error]] x | RateLimitError  | 429    | rate_limit_error      |

    Scenario: Batch-only markers do not affect a Messages request
      Given the emulator runs on a manual clock
      When I send the emulator a message saying "[[emulator:canceled]] hello"
      Then the emulator reply has stop reason "end_turn"

  Rule: Answers are deterministic and shaped by the request

    Scenario: The same request always gets the same answer
      Given the emulator runs on a manual clock
      When I send the emulator a message saying "What is the tide?"
      Then the emulator reply text starts with 'Emulated reply to "What is the tide?": '
      And the emulator reply has stop reason "end_turn"
      And the emulator reply counts 5 input tokens and output tokens for its text
      When I send the emulator the same message again
      Then the emulator reply has the same content as before but a new id
      When I send the emulator a message saying "What is the time?"
      Then the emulator reply differs from before

    Scenario: A long user text is quoted in part
      Given the emulator runs on a manual clock
      When I send the emulator a message of 500 characters
      Then the emulator reply quotes 199 characters and an ellipsis

    Scenario: A stop sequence cuts the reply where it first appears
      Given the emulator runs on a manual clock
      When I send the emulator a message with the params changed by {"messages": [{"role": "user", "content": "Say STOP and END now"}], "stop_sequences": ["END", "STOP", "now", "absent"]}
      Then the emulator reply has stop reason "stop_sequence" and stop sequence "STOP"
      And the emulator reply text is 'Emulated reply to "Say '

    Scenario: max_tokens truncates the reply
      Given the emulator runs on a manual clock
      When I send the emulator a message with the params changed by {"max_tokens": 3}
      Then the emulator reply has stop reason "max_tokens"
      And the emulator reply text is 'Emulated rep'
      And the emulator reply counts 3 output tokens

    Scenario: Structured output is JSON valid for the requested schema
      Given the emulator runs on a manual clock
      When I ask the emulator for a structured Report
      Then the emulator reply is one text block holding a valid Report
      When I ask the emulator for a Report through the SDK's parse helper
      Then the emulator parsed output is a Report
      When I create an emulator batch asking for a structured Report
      And I fetch the emulator batch results
      Then the emulator result "report" holds a valid Report

    Scenario: Generated instances satisfy pydantic models, as given or as the SDK transforms them
      Then the emulator generates valid instances for these models:
        | model       |
        | Report      |
        | Tree        |
        | Bounded     |
        | Collections |
        | Identifiers |
        | Shapes      |

    Scenario Outline: Generated instances satisfy hand-written schemas
      Then the emulator generates an instance of <schema> that satisfies "<check>"

      Examples:
        | schema                                                                                           | check                        |
        | {"type": ["null", "integer"]}                                                                    | isinstance(value, int)       |
        | {"type": ["null"]}                                                                               | value is None                |
        | {"allOf": [{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}, {"properties": {"b": {"const": 1}}, "required": ["b"]}]} | value == {"a": 1, "b": 1} |
        | {"items": {"type": "boolean"}, "minItems": 3}                                                    | value == [True, False, True] |
        | {"minimum": 5}                                                                                   | value == 6.0                 |
        | {"type": "number", "maximum": -3}                                                                | value == -4.0                |
        | {"type": "number", "multipleOf": 0.25}                                                           | value == 1.5                 |
        | {"type": "integer", "exclusiveMinimum": 9, "exclusiveMaximum": 11}                               | value == 10                  |
        | {"type": "integer", "exclusiveMinimum": 9.5}                                                     | value == 10                  |
        | {"type": "integer", "maximum": 0}                                                                | value == 0                   |
        | {"type": "integer", "minimum": 3, "maximum": 4, "multipleOf": 4}                                 | value == 4                   |
        | {"type": "integer", "minimum": 1, "maximum": 2, "multipleOf": 2}                                 | value == 2                   |
        | {"type": "object", "minProperties": 2}                                                           | len(value) == 2              |
        | {"type": "object", "additionalProperties": {"type": "integer"}, "maxProperties": 0}              | value == {}                  |
        | {"type": "array", "prefixItems": [{"type": "integer"}], "items": {"type": "string"}}             | len(value) == 3 and value[0] == 1 |
        | {"type": "array", "items": false, "prefixItems": [{"type": "null"}]}                             | value == [None]              |
        | {"type": "string", "pattern": "^[0-9]{3}$"}                                                      | value == "123"               |
        | {"type": "string", "pattern": "^q{5}$"}                                                          | value.startswith("value")    |
        | {"type": "string", "pattern": "(unclosed"}                                                       | value.startswith("value")    |
        | {"type": "string", "format": "uuid7"}                                                            | value[14] == "7"             |
        | {"type": "string", "format": "ipv4", "maxLength": 7}                                             | len(value) == 7              |
        | {"$ref": "#/$defs/Missing"}                                                                      | isinstance(value, str)       |
        | {"$ref": "https://example.com/schema"}                                                           | isinstance(value, str)       |
        | {"$ref": "#/properties/x/y", "properties": {"x": 1}}                                             | value == {"x": "x"}          |
        | {"type": "object", "properties": {"next": {"$ref": "#"}}, "required": ["next"]}                  | value["next"]["next"]["next"]["next"]["next"]["next"] is not None |
        | {"anyOf": [{"type": "null"}]}                                                                    | value is None                |
        | {"$ref": "#/$defs/A", "$defs": {"A": {"$ref": "#/$defs/A"}}}                                     | isinstance(value, str)       |
        | {"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "object", "properties": {"c": {"type": "object", "properties": {"d": {"type": "object", "properties": {"e": {"type": "object", "properties": {"f": {"type": "integer"}}}}}}}}}}}}} | value["a"]["b"]["c"]["d"]["e"] == {} |
        | {"type": "integer", "maximum": -1, "multipleOf": 2}                                              | value == -2                  |
        | {"type": "object", "properties": {"value_1": {"type": "integer"}}, "minProperties": 2}           | sorted(value) == ["value_1", "value_2"] |
        | {"type": "string", "description": "{minLength: 3, maxLength: 4}"}                                | len(value) == 4              |
        | {"type": "string", "description": "Name\n\n{minLength: 2.5, pattern: ^[ab]+$}"}                  | set(value) <= {"a", "b"}     |
        | {"type": "array", "items": {"type": "boolean"}, "description": "{uniqueItems: True, minItems: 2}"} | value == [True, False]     |
        | {"type": "string", "description": "plain words {not: hints}"}                                    | isinstance(value, str)       |
        | {"type": "string", "description": "{not: hints}"}                                                | isinstance(value, str)       |

    Scenario: A forced tool call gives a tool_use block valid for the tool's schema
      Given the emulator runs on a manual clock
      When I ask the emulator with the Lookup tool and tool choice {"type": "tool", "name": "lookup"}
      Then the emulator reply is one tool_use block calling "lookup" with a valid Lookup
      And the emulator reply has stop reason "tool_use"
      When I ask the emulator with the Lookup tool and tool choice {"type": "any"}
      Then the emulator reply is one tool_use block calling "lookup" with a valid Lookup
      When I answer the emulator's tool call with "Found it"
      Then the emulator reply text starts with 'Emulated reply to "Found it": '

    Scenario: An agent that must call a tool every step reaches its output tool
      Given the emulator runs on a manual clock
      When I ask the emulator with the weather and final_result tools and tool choice {"type": "any"}
      Then the emulator reply calls the tool "weather"
      When I answer the emulator's last tool call with "Sunny in Paris." keeping tool choice any
      Then the emulator reply calls the tool "final_result"
      When I answer the emulator's last tool call with "Final result processed." keeping tool choice any
      Then the emulator reply calls the tool "final_result"

    Scenario: With tool choice auto the emulated model calls a tool only when a marker asks
      Given the emulator runs on a manual clock
      When I ask the emulator with the Lookup tool and tool choice {"type": "auto"}
      Then the emulator reply has stop reason "end_turn"
      When I ask the emulator "please [[emulator:tool:lookup]]" with the Lookup tool and tool choice {"type": "auto"}
      Then the emulator reply is one tool_use block calling "lookup" with a valid Lookup
      When I ask the emulator "please [[emulator:tool:lookup]]" with the Lookup tool and tool choice {"type": "none"}
      Then the emulator reply has stop reason "end_turn"

    Scenario: Thinking comes first, signed
      Given the emulator runs on a manual clock
      When I send the emulator a message with the params changed by {"max_tokens": 4096, "thinking": {"type": "enabled", "budget_tokens": 2048}}
      Then the emulator reply content is "thinking, text"
      And the emulator reply's thinking is signed and mentions "Hello"
      When I send the emulator a message with the params changed by {"thinking": {"type": "adaptive", "display": "omitted"}}
      Then the emulator reply content is "thinking, text"
      And the emulator reply's thinking is signed and empty
      When I send the emulator a message with the params changed by {"thinking": {"type": "disabled"}}
      Then the emulator reply content is "text"

    Scenario Outline: max_tokens cuts thinking and drops a tool call that does not fit
      Given the emulator runs on a manual clock
      When I send the emulator a message with the params changed by <change>
      Then the emulator reply has stop reason "max_tokens"
      And the emulator reply content is "<content>"

      Examples:
        | change                                                                                                                    | content  |
        | {"max_tokens": 2, "thinking": {"type": "adaptive"}}                                                                       | thinking |
        | {"max_tokens": 2, "tool_choice": {"type": "any"}, "tools": [{"name": "t", "input_schema": {"type": "object", "properties": {"a": {"type": "string"}}}}]} |  |
        | {"max_tokens": 15, "thinking": {"type": "adaptive", "display": "omitted"}}                                               | thinking |

  Rule: Prompt caching reports writes and reads on the emulator clock, for prefixes long enough to cache

    Scenario: A cached system prompt is written once, then read until its five minutes are up
      Given the emulator runs on a manual clock
      When I send the emulator a message with a 6000-character cached system prompt
      Then the emulator usage is input 2, cache writes 1500 (5m 1500, 1h 0) and cache reads 0
      When I send the emulator a message with a 6000-character cached system prompt
      Then the emulator usage is input 2, cache writes 0 (5m 0, 1h 0) and cache reads 1500
      When the emulator clock advances 299 seconds
      And I send the emulator a message with a 6000-character cached system prompt
      Then the emulator usage is input 2, cache writes 0 (5m 0, 1h 0) and cache reads 1500
      When the emulator clock advances 300 seconds
      And I send the emulator a message with a 6000-character cached system prompt
      Then the emulator usage is input 2, cache writes 1500 (5m 1500, 1h 0) and cache reads 0

    Scenario: A one-hour breakpoint lives an hour
      Given the emulator runs on a manual clock
      When I send the emulator a message with a 6000-character system prompt cached for "1h"
      Then the emulator usage is input 2, cache writes 1500 (5m 0, 1h 1500) and cache reads 0
      When the emulator clock advances 3599 seconds
      And I send the emulator a message with a 6000-character system prompt cached for "1h"
      Then the emulator usage is input 2, cache writes 0 (5m 0, 1h 0) and cache reads 1500
      When the emulator clock advances 3600 seconds
      And I send the emulator a message with a 6000-character system prompt cached for "1h"
      Then the emulator usage is input 2, cache writes 1500 (5m 0, 1h 1500) and cache reads 0

    Scenario: Top-level cache_control caches the whole prompt, per model
      Given the emulator runs on a manual clock
      When I send the emulator a 6000-character message for "claude-sonnet-4-5" with automatic caching
      Then the emulator usage is input 0, cache writes 1500 (5m 1500, 1h 0) and cache reads 0
      When I send the emulator a 6000-character message for "claude-sonnet-4-5" with automatic caching
      Then the emulator usage is input 0, cache writes 0 (5m 0, 1h 0) and cache reads 1500
      When I send the emulator a 6000-character message for "claude-sonnet-5-5" with automatic caching
      Then the emulator usage is input 0, cache writes 1500 (5m 1500, 1h 0) and cache reads 0

    Scenario Outline: A prefix shorter than the model's minimum cacheable length is neither written nor read
      Given the emulator runs on a manual clock
      When I send the emulator a <short>-character message for "<model>" with automatic caching
      And I send the emulator a <short>-character message for "<model>" with automatic caching
      Then the emulator usage is input <below>, cache writes 0 (5m 0, 1h 0) and cache reads 0
      When I send the emulator a <long>-character message for "<model>" with automatic caching
      Then the emulator usage is input 0, cache writes <minimum> (5m <minimum>, 1h 0) and cache reads 0

      Examples:
        | model                     | short | below | long  | minimum |
        | claude-sonnet-4-5         | 4092  | 1023  | 4096  | 1024    |
        | claude-sonnet-5-5         | 4092  | 1023  | 4096  | 1024    |
        | claude-sonnet-4-6         | 8188  | 2047  | 8192  | 2048    |
        | claude-haiku-4-5          | 16380 | 4095  | 16384 | 4096    |
        | claude-opus-4-6           | 16380 | 4095  | 16384 | 4096    |

    Scenario: The longest warm prefix is read and the rest up to the last breakpoint written
      Given the emulator runs on a manual clock
      When I send the emulator a 4000-character question after a 4800-character tool, cached at the tool
      Then the emulator usage is input 1000, cache writes 1200 (5m 1200, 1h 0) and cache reads 0
      When I send the emulator a 4000-character question after a 4800-character tool, cached at the tool and for "1h" at the question
      Then the emulator usage is input 0, cache writes 1000 (5m 0, 1h 1000) and cache reads 1200

    Scenario: A breakpoint too short to cache is passed over for a later one that is long enough
      Given the emulator runs on a manual clock
      When I send the emulator a 4000-character question after a 400-character tool, cached at the tool
      Then the emulator usage is input 1100, cache writes 0 (5m 0, 1h 0) and cache reads 0
      When I send the emulator a 4000-character question after a 400-character tool, cached at the tool and for "5m" at the question
      Then the emulator usage is input 0, cache writes 1100 (5m 1100, 1h 0) and cache reads 0
      When I send the emulator a 4000-character question after a 400-character tool, cached at the tool and for "5m" at the question
      Then the emulator usage is input 0, cache writes 0 (5m 0, 1h 0) and cache reads 1100

    Scenario: Requests in one batch are processed side by side: none reads another's write, later requests read them
      Given the emulator runs on a manual clock
      When I create an emulator batch of 3 requests with a 6000-character cached system prompt
      And I fetch the emulator batch results
      Then the emulator results are:
        | custom_id | result    | cache_writes | cache_reads |
        | r0        | succeeded | 1500         | 0           |
        | r1        | succeeded | 1500         | 0           |
        | r2        | succeeded | 1500         | 0           |
      When I send the emulator a message with a 6000-character cached system prompt
      Then the emulator usage is input 2, cache writes 0 (5m 0, 1h 0) and cache reads 1500

    Scenario: A batch created after a request wrote the cache reads it, within the write's lifetime
      Given the emulator runs on a manual clock
      When I send the emulator a message with a 6000-character cached system prompt
      Then the emulator usage is input 2, cache writes 1500 (5m 1500, 1h 0) and cache reads 0
      When I create an emulator batch of 3 requests with a 6000-character cached system prompt
      And I fetch the emulator batch results
      Then the emulator results are:
        | custom_id | result    | cache_writes | cache_reads |
        | r0        | succeeded | 0            | 1500        |
        | r1        | succeeded | 0            | 1500        |
        | r2        | succeeded | 0            | 1500        |

    Scenario: A batch request whose cached prefix is too short reports no cache usage
      Given the emulator runs on a manual clock
      When I create an emulator batch of 2 requests with a 400-character cached system prompt
      And I fetch the emulator batch results
      Then the emulator results are:
        | custom_id | result    | cache_writes | cache_reads |
        | r0        | succeeded | 0            | 0           |
        | r1        | succeeded | 0            | 0           |

  Rule: Streaming replays the same message as server-sent events

    Scenario Outline: Streaming rebuilds exactly the non-streaming message
      Given the emulator runs on a manual clock
      When I send the emulator a message with the params changed by <change>
      And I stream the same message from the emulator
      Then the streamed message equals the emulator reply except for its id

      Examples:
        | change                                                                                                           |
        | {}                                                                                                               |
        | {"messages": [{"role": "user", "content": "A much longer question, so that the reply takes many text deltas to stream."}]} |
        | {"max_tokens": 4096, "thinking": {"type": "enabled", "budget_tokens": 2048}}                                      |
        | {"tool_choice": {"type": "any"}, "tools": [{"name": "t", "input_schema": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "array", "items": {"type": "integer"}}}}}]} |
        | {"output_config": {"format": {"type": "json_schema", "schema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}}} |
        | {"stop_sequences": ["Hello"]}                                                                                    |
        | {"max_tokens": 3}                                                                                                |

    Scenario: The raw event stream follows the API's event sequence
      Given the emulator runs on a manual clock
      When I stream a raw emulator message with the params changed by {"max_tokens": 4096, "thinking": {"type": "enabled", "budget_tokens": 2048}}
      Then the emulator event names are, collapsing repeats: "message_start, ping, content_block_start, content_block_delta, content_block_stop, content_block_start, content_block_delta, content_block_stop, message_delta, message_stop"
      And the emulator stream is served as "text/event-stream"

  Rule: Tests can count, inspect and reset the emulator

    Scenario: Calls are counted by route, failed ones included, admin ones not
      Given the emulator runs on a manual clock
      And the emulator fails the next "batches.list" call with status 500
      When I send the emulator a message
      And I create an emulator batch of 1 requests
      And I retrieve the emulator batch
      And I list one emulator page of 20 batches
      And I list one emulator page of 20 batches
      And I fetch the emulator batch results
      And I cancel the emulator batch
      And I delete the emulator batch
      And I send the emulator a raw "GET" to "/_emulator/stats"
      Then the emulator counted these calls:
        | route            | count |
        | messages.create  | 1     |
        | batches.create   | 1     |
        | batches.retrieve | 2     |
        | batches.list     | 2     |
        | batches.results  | 1     |
        | batches.cancel   | 1     |
        | batches.delete   | 1     |

    Scenario: A stored batch can be inspected, and a reset forgets everything
      Given the emulator runs on a manual clock with 10 processing seconds and 5 cancel seconds
      When I create an emulator batch of 2 requests
      Then inspecting the emulator batch shows it "in_progress" with no outcomes yet
      When the emulator clock advances 10 seconds
      Then inspecting the emulator batch shows it "ended" with outcomes "r0=succeeded, r1=succeeded"
      And inspecting an unknown emulator batch raises KeyError
      And the emulator settings are 10 processing seconds and 5 cancel seconds
      When the emulator settings change to 20 processing seconds and 1 cancel seconds
      Then the emulator settings are 20 processing seconds and 1 cancel seconds
      When the emulator is reset
      Then the emulator holds 0 batches
      And the emulator counted 0 "batches.create" calls

    Scenario: The emulator refuses negative timings
      Then creating the emulator with -1 processing seconds raises ValueError

    Scenario: An unexpected failure inside the emulator answers 500 in the API's error shape
      Given the emulator runs on a clock that has stopped working
      When I send the emulator a raw "POST" to "/v1/messages" that fails inside the emulator
      Then the emulator answers 500 with error type "api_error"

  Rule: An answer can be lost or held back after its call did its work, and answers can come slowly

    Scenario: A create whose answer is dropped still commits its batch, and the SDK sees a lost connection
      Given the emulator runs on a manual clock
      And the emulator drops the answer of the next "batches.create" call after doing its work
      When I create an emulator batch of 3 requests
      Then the emulator call failed with a dropped connection
      And the emulator holds 1 batches
      And the emulator created 1 batch holding "r0=1, r1=1, r2=1"
      When I create an emulator batch of 3 requests
      Then the emulator batch is "in_progress" with 3 requests processing
      And the emulator holds 2 batches
      And the emulator created 2 batches holding "r0=2, r1=2, r2=2"

    Scenario Outline: Any route's answer can be dropped after its call did its work, once
      Given the emulator runs on a manual clock
      And the emulator drops the answer of the next "<route>" call after doing its work
      When I call the emulator route "<route>"
      Then the emulator call failed with a dropped connection
      And the emulator counted 1 "<route>" call
      When I call the emulator route "<route>"
      Then the emulator call succeeded

      Examples:
        | route                 |
        | messages.create       |
        | messages.count_tokens |
        | batches.create        |
        | batches.retrieve      |
        | batches.list          |
        | batches.cancel        |
        | batches.delete        |
        | batches.results       |

    Scenario: A delayed answer comes once the emulator clock has moved on by the delay
      Given the emulator runs on a manual clock with 60 processing seconds
      And the emulator answers the next 2 "batches.create" calls 30 seconds after doing their work
      When I create an emulator batch of 2 requests
      Then the emulator batch is "in_progress" with 2 requests processing
      And the emulator batch was created 30 seconds before its answer came
      And the emulator clock slept 1 times for 30 seconds in all
      When I create an emulator batch of 2 requests
      And I create an emulator batch of 2 requests
      Then the emulator clock slept 2 times for 60 seconds in all
      And the emulator created 3 batches holding "r0=3, r1=3"

    Scenario: Dropped and delayed answers queue up per route, in the order armed
      Given the emulator runs on a manual clock
      And the emulator answers the next 1 "batches.create" calls 5 seconds after doing their work
      And the emulator drops the answer of the next "batches.create" call after doing its work
      When I create an emulator batch of 1 requests
      Then the emulator call succeeded
      When I create an emulator batch of 1 requests
      Then the emulator call failed with a dropped connection
      When I create an emulator batch of 1 requests
      Then the emulator call succeeded
      And the emulator clock slept 1 times for 5 seconds in all

    Scenario: A call that fails keeps the after-commit fault for the next call that does its work
      Given the emulator runs on a manual clock
      And the emulator drops the answer of the next "batches.create" call after doing its work
      When I post the emulator the batch body {"requests": []}
      Then the emulator call fails with BadRequestError, status 400 and error type "invalid_request_error"
      When I create an emulator batch of 1 requests
      Then the emulator call failed with a dropped connection
      And the emulator holds 1 batches

    Scenario: Slow results stream each line late, on the emulator clock
      Given the emulator runs on a manual clock
      When I create an emulator batch of 3 requests
      And the emulator streams results one line every 0.5 seconds
      And I fetch the emulator batch results
      Then the emulator results are:
        | custom_id | result    |
        | r0        | succeeded |
        | r1        | succeeded |
        | r2        | succeeded |
      And the emulator clock slept 3 times for 1.5 seconds in all
      When I fetch the emulator batch results
      Then the emulator clock slept 6 times for 3 seconds in all

    Scenario: A slow route pauses before each piece of its answer, for as many calls as asked
      Given the emulator runs on a manual clock
      When I create an emulator batch of 1 requests
      And the emulator makes "batches.retrieve" slow by 2 seconds for 2 calls
      And I retrieve the emulator batch
      And I retrieve the emulator batch
      And I retrieve the emulator batch
      Then the emulator clock slept 2 times for 4 seconds in all
      When the emulator makes "batches.retrieve" slow by 1 seconds for 1 call
      And I retrieve the emulator batch
      And I retrieve the emulator batch
      Then the emulator clock slept 3 times for 5 seconds in all
      When the emulator makes "messages.create" slow by 0.25 seconds
      And I stream a raw emulator message with the params changed by {}
      Then the emulator clock slept 0.25 seconds before each event of the stream
      When the emulator makes "messages.create" slow by 0 seconds
      And I stream a raw emulator message with the params changed by {}
      Then the emulator clock did not sleep

    Scenario: Timing faults are checked when they are armed
      Given the emulator runs on a manual clock
      Then arming these emulator timing faults raises ValueError:
        | kind               | route           | seconds | times |
        | drop_after_commit  | messages.stream |         | 1     |
        | drop_after_commit  | batches.create  |         | 0     |
        | delay_after_commit | batches.create  | -1      | 1     |
        | delay_after_commit | batches.create  | inf     | 1     |
        | slow               | batches.results | nan     |       |
        | slow               | batches.results | 1       | 0     |
        | slow               | nowhere         | 1       |       |

    Scenario: The admin route arms every kind of fault and counts what is pending
      Given the emulator runs on a manual clock
      When I post the emulator admin route "/_emulator/faults" the body {"route": "batches.create", "kind": "drop_after_commit", "times": 1}
      Then the emulator admin answer is {"route": "batches.create", "kind": "drop_after_commit", "pending": 1}
      When I post the emulator admin route "/_emulator/faults" the body {"route": "batches.create", "kind": "delay_after_commit", "seconds": 3}
      Then the emulator admin answer is {"route": "batches.create", "kind": "delay_after_commit", "pending": 2}
      When I post the emulator admin route "/_emulator/faults" the body {"route": "batches.results", "kind": "slow", "seconds": 0.5}
      Then the emulator admin answer is {"route": "batches.results", "kind": "slow", "pending": 0}
      When I post the emulator admin route "/_emulator/faults" the body {"route": "openai.files.content", "kind": "cut", "after_lines": 2, "times": 2}
      Then the emulator admin answer is {"route": "openai.files.content", "kind": "cut", "pending": 2}
      When I post the emulator admin route "/_emulator/faults" the body {"route": "batches.list", "status": 500, "times": 2}
      Then the emulator admin answer is {"route": "batches.list", "kind": "status", "pending": 2}
      When I post the emulator admin route "/_emulator/faults" the body {"route": "batches.list", "kind": "status", "status": 429, "times": null}
      Then the emulator admin answer is {"route": "batches.list", "kind": "status", "pending": 3}
      When I create an emulator batch of 2 requests
      Then the emulator call failed with a dropped connection
      When I create an emulator batch of 2 requests
      Then the emulator clock slept 1 times for 3 seconds in all
      And the emulator batch was created 3 seconds before its answer came
      When I fetch the emulator batch results
      Then the emulator clock slept 3 times for 4 seconds in all
      When I send the emulator a raw "GET" to "/_emulator/stats"
      Then the emulator admin answer is {"calls": {"batches.create": 2, "batches.retrieve": 1, "batches.results": 1}, "batches": 2, "created_batches": 2, "created_custom_ids": {"r0": 2, "r1": 2}, "openai_batches": 0, "openai_created_batches": 0, "openai_created_custom_ids": {}, "openai_webhooks_sent": 0, "gemini_batches": 0, "gemini_created_batches": 0, "gemini_created_custom_ids": {}, "gemini_webhooks_sent": 0, "bedrock_batches": 0, "bedrock_created_batches": 0, "bedrock_created_custom_ids": {}, "bedrock_objects": 0, "mistral_batches": 0, "mistral_created_batches": 0, "mistral_created_custom_ids": {}, "azure_openai_batches": 0, "azure_openai_created_batches": 0, "azure_openai_created_custom_ids": {}, "groq_batches": 0, "groq_created_batches": 0, "groq_created_custom_ids": {}, "together_batches": 0, "together_created_batches": 0, "together_created_custom_ids": {}, "xai_batches": 0, "xai_created_batches": 0, "xai_created_custom_ids": {}, "openrouter_batches": 0, "openrouter_created_batches": 0, "openrouter_created_custom_ids": {}, "fireworks_batches": 0, "fireworks_created_batches": 0, "fireworks_created_custom_ids": {}, "vertex_batches": 0, "vertex_created_batches": 0, "vertex_created_custom_ids": {}, "vertex_objects": 0, "rate_limited": 0, "live_answers": {}, "abandoned_answers": 0}

    Scenario: A deleted batch stays counted among the created ones, until a reset
      Given the emulator runs on a manual clock
      When I create an emulator batch of 2 requests
      And I delete the emulator batch
      Then the emulator holds 0 batches
      And the emulator created 1 batch holding "r0=1, r1=1"
      When the emulator is reset
      Then the emulator has created no batch

  Rule: A state file keeps the emulator's batches across restarts

    Scenario: An emulator started again on its state file serves the same batches, results and counters
      Given the emulator runs on a manual clock with 100 processing seconds and 10 cancel seconds, keeping its state in a file
      And the emulator ends request "r1" as errored with "rate_limit_error" saying "Too many requests."
      When I create an emulator batch of 3 requests with a 6000-character cached system prompt
      And I create an emulator batch of 4 requests
      And the emulator clock advances 50 seconds
      And I cancel the emulator batch
      And I create an emulator batch of 2 requests
      And the emulator clock advances 60 seconds
      And I download the results of every emulator batch
      And the emulator is started again from its state file
      Then every emulator batch answers the same results as before, with the statuses "200, 200, 404"
      And the emulator created 3 batches holding "r0=3, r1=3, r2=2, r3=1"
      And the emulator counted 3 "batches.create" calls
      And the emulator counted 1 "batches.cancel" call
      And inspecting every emulator batch shows "ended, ended, in_progress"
      When the emulator clock advances 40 seconds
      And I fetch the emulator batch results
      Then the emulator results are:
        | custom_id | result    | error_type       | message            |
        | r0        | succeeded |                  |                    |
        | r1        | errored   | rate_limit_error | Too many requests. |
      When I send the emulator a message with a 6000-character cached system prompt
      Then the emulator usage is input 2, cache writes 0 (5m 0, 1h 0) and cache reads 1500
      When I delete the emulator batch
      And the emulator is started again from its state file
      Then the emulator holds 2 batches
      And inspecting every emulator batch shows "ended, ended, gone"
      When the emulator is reset
      And the emulator is started again from its state file
      Then the emulator holds 0 batches
      And the emulator has created no batch

    Scenario Outline: A state file that cannot be used stops the emulator from starting
      Then starting the emulator on a state file that <case> raises StateFileError mentioning "<mention>"

      Examples:
        | case                              | mention                                 |
        | holds not JSON                                | is not a lowtide emulator state file |
        | holds [1, 2]                                  | is not a lowtide emulator state file |
        | holds {"format": "other", "version": 1}       | is not a lowtide emulator state file |
        | holds {"format": "lowtide-emulator-state", "version": 2} | is not a lowtide emulator state file |
        | is a directory                                | cannot read                          |
        | is in a missing directory                     | cannot write                         |

  Rule: The emulator serves the same API on a socket

    Scenario: The SDK talks to the emulator over a socket, and admin routes drive it
      Given the emulator serves on a socket
      When I send the socket emulator a message
      Then the emulator reply has stop reason "end_turn"
      When I arm the socket emulator's fault {"route": "messages.create", "status": 529, "retry_after": 3}
      And I send the socket emulator a message
      Then the emulator call fails with OverloadedError, status 529 and error type "overloaded_error"
      And the emulator error has the header "retry-after" set to "3"
      When I arm the socket emulator's outcome {"custom_id": "r1", "kind": "errored", "error_type": "overloaded_error", "message": "Busy."}
      And I run a 2-request batch on the socket emulator
      Then the emulator results are:
        | custom_id | result    | error_type       | message |
        | r0        | succeeded |                  |         |
        | r1        | errored   | overloaded_error | Busy.   |
      And the socket emulator's stats show 1 batch and these calls:
        | route            | count |
        | messages.create  | 2     |
        | batches.create   | 1     |
        | batches.results  | 1     |
      And the socket emulator's stats show 1 batch created, holding "r0=1, r1=1"
      When I reset the socket emulator
      Then the socket emulator's stats show 0 batches and no calls

    Scenario: Over a socket, a dropped answer closes the connection, a delayed one comes late, results trickle
      Given the emulator serves on a socket
      When I arm the socket emulator's fault {"route": "batches.create", "kind": "drop_after_commit", "times": 1}
      And I create a 2-request batch on the socket emulator
      Then the emulator call failed with a dropped connection
      And the socket emulator's stats show 1 batch created, holding "r0=1, r1=1"
      When I arm the socket emulator's fault {"route": "batches.create", "kind": "delay_after_commit", "seconds": 0.3, "times": 1}
      And I create a 2-request batch on the socket emulator
      Then the emulator call succeeded
      And the emulator call took at least 0.3 seconds
      When I arm the socket emulator's fault {"route": "batches.results", "kind": "slow", "seconds": 0.1}
      And I fetch the emulator batch results
      Then the emulator results are:
        | custom_id | result    |
        | r0        | succeeded |
        | r1        | succeeded |
      And the emulator call took at least 0.2 seconds
      And the socket emulator's stats show 2 batches created, holding "r0=2, r1=2"

    Scenario Outline: Admin routes refuse malformed instructions
      Given the emulator serves on a socket
      When I post <body> to the socket emulator's "<route>"
      Then the emulator raw answer is 400 with error type "invalid_request_error"

      Examples:
        | route              | body                                                   |
        | /_emulator/faults   | {"route": "messages.create"}                           |
        | /_emulator/faults   | {"route": "messages.create", "status": 500, "retry_after": "soon"} |
        | /_emulator/faults   | {"route": "nowhere", "status": 500}                    |
        | /_emulator/outcomes | {"custom_id": "a"}                                     |
        | /_emulator/outcomes | {"custom_id": "a", "kind": "errored", "message": 5}   |
        | /_emulator/outcomes | {"custom_id": "a", "kind": "vanished"}                 |
        | /_emulator/faults   | {"kind": "slow", "seconds": 1}                         |
        | /_emulator/faults   | {"route": "batches.create", "kind": "explode"}         |
        | /_emulator/faults   | {"route": "batches.create", "kind": "drop_after_commit", "times": "twice"} |
        | /_emulator/faults   | {"route": "batches.create", "kind": "delay_after_commit"} |
        | /_emulator/faults   | {"route": "batches.create", "kind": "delay_after_commit", "seconds": -1} |
        | /_emulator/faults   | {"route": "batches.results", "kind": "slow", "seconds": "fast"} |
        | /_emulator/faults   | {"route": "batches.results", "kind": "slow", "seconds": 1, "times": 0} |
        | /_emulator/faults   | {"route": "batches.results", "kind": "cut"}            |
        | /_emulator/faults   | {"route": "batches.results", "kind": "cut", "after_lines": -1} |
        | /_emulator/outcomes | {"custom_id": "a", "kind": "garbled", "how": "mangled"} |

    Scenario Outline: `lowtide emulator` says in one line why it cannot start, and returns 2
      When I run "<command>" expecting it to stop at once
      Then the command printed "<message>" on stderr and returned 2

      Examples:
        | command                                                  | message                                            |
        | lowtide emulator --port <busy-port>                      | lowtide: cannot listen on 127.0.0.1:<busy-port>: |
        | lowtide emulator --state-file <missing-dir>/state.json   | lowtide: cannot write <missing-dir>/state.json: |

    Scenario: `lowtide emulator` announces its address, serves, and ends cleanly on a stop signal
      When I run "lowtide emulator --port 0 --processing-seconds 1 --api-key secret" and stop it after one call
      Then the command announced "lowtide emulator listening on http://127.0.0.1:<port>" and returned 0
      And the command's emulator answered the call with the key "secret"
