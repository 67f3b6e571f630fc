Feature: Calls answered through the Message Batches API
  As a developer whose actor runs in batch mode
  I want each call submitted as a batch, polled patiently, and its results mapped back to my requests
  So that I pay batch prices, get the same ActorResponse as live, and see each request's failure on its own

  Background:
    Given an emulated Anthropic API whose batches take 120 seconds

  Scenario: Every Messages parameter of the actor and of the call reaches the batch request as sent
    Given an actor "analyst" with:
      """
      model: claude-sonnet-5-5
      batch_processing: batch
      max_tokens: 4096
      system_prompt: You are a careful analyst.
      stop_sequences: ["END"]
      metadata: {user_id: user-42}
      thinking: {type: enabled, budget_tokens: 2048}
      tool_choice: {type: auto}
      output_config: {effort: medium}
      cache_control: {type: ephemeral}
      extra_params: {service_tier: auto}
      """
    When the actor is asked "Summarize the quarter" with:
      """
      custom_id: quarter-summary
      tools:
        - name: lookup_revenue
          description: Revenue of one quarter
          input_schema: {type: object, properties: {quarter: {type: string}}, required: [quarter]}
      """
    Then the API received these calls:
      | call           | count |
      | batches.create | 1     |
    And the batch holds exactly the request "quarter-summary" with these params:
      """
      model: claude-sonnet-5-5
      max_tokens: 4096
      messages: [{role: user, content: Summarize the quarter}]
      system: You are a careful analyst.
      tools:
        - name: lookup_revenue
          description: Revenue of one quarter
          input_schema: {type: object, properties: {quarter: {type: string}}, required: [quarter]}
      tool_choice: {type: auto}
      stop_sequences: ["END"]
      metadata: {user_id: user-42}
      thinking: {type: enabled, budget_tokens: 2048}
      output_config: {effort: medium}
      cache_control: {type: ephemeral}
      service_tier: auto
      """

  Scenario: Sampling settings, a system prompt in blocks and a conversation are sent as given
    Given an actor "writer" with:
      """
      batch_processing: batch
      temperature: 0.2
      top_p: 0.9
      top_k: 40
      """
    When the actor is asked, in Python, with:
      """
      {
          "custom_id": "reply-3",
          "system": [{"type": "text", "text": "You answer briefly.", "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
          "messages": [
              {"role": "user", "content": "Hi"},
              {"role": "assistant", "content": "Hello!"},
              {"role": "user", "content": [{"type": "text", "text": "How are you?"}]},
          ],
          "max_tokens": 300,
      }
      """
    Then the answer is the emulated reply to "How are you?"
    And the batch holds exactly the request "reply-3" with these params:
      """
      model: claude-sonnet-5-5
      max_tokens: 300
      messages:
        - {role: user, content: Hi}
        - {role: assistant, content: Hello!}
        - {role: user, content: [{type: text, text: "How are you?"}]}
      system: [{type: text, text: "You answer briefly.", cache_control: {type: ephemeral, ttl: 1h}}]
      temperature: 0.2
      top_p: 0.9
      top_k: 40
      """

  Scenario: The batch is polled at the configured interval until it ends
    Given an actor "nightly" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """
    When the actor is asked "Hello"
    Then the answer is the emulated reply to "Hello"
    And after its 0.5 second coalescing window, the actor waited 30, 30, 30, 30 seconds
    And the answer arrived 120.5 seconds after the call
    # Four status checks while the batch runs (the creation counts as the first look); the results are downloaded
    # from the ended batch's results_url, with no look-up of their own.
    And the API received these calls:
      | call             | count |
      | batches.create   | 1     |
      | batches.retrieve | 4     |
      | batches.results  | 1     |
      | batches.cancel   | 0     |

  Scenario: A poll interval that does not divide the processing time overshoots by less than one interval
    Given an actor "nightly" with:
      """
      batch_processing: batch
      batch: {poll_interval: 50}
      """
    When the actor is asked "Hello"
    Then the answer is the emulated reply to "Hello"
    And after its 0.5 second coalescing window, the actor waited 50, 50, 50 seconds
    And the API received these calls:
      | call             | count |
      | batches.retrieve | 3     |

  Scenario: Past the maximum wait, the batch is canceled and the error says which batch and how long
    Given an actor "impatient" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30, max_wait: 90, on_timeout: cancel}
      """
    When the actor is asked "Hello"
    Then a BatchTimeoutError is raised
    And the timeout error names the batch, a wait of 90 seconds and a maximum of 90 seconds
    And the error message contains "did not end within the maximum wait of 90 s (waited 90 s); cancellation was requested."
    And the timeout error says the batch was canceled
    And after its 0.5 second coalescing window, the actor waited 30, 30, 30 seconds
    And the API received these calls:
      | call           | count |
      | batches.cancel | 1     |
    And that batch has ended with its request canceled

  Scenario: Past the maximum wait with the leave policy, the batch is left running
    Given an actor "patient" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30, max_wait: 60, on_timeout: leave}
      """
    When the actor is asked "Hello"
    Then a BatchTimeoutError is raised
    And the timeout error names the batch, a wait of 60 seconds and a maximum of 60 seconds
    And the error message contains "(waited 60 s); it was left running."
    And the timeout error says the batch was not canceled
    And the API received these calls:
      | call           | count |
      | batches.cancel | 0     |
    And that batch is still in progress

  Scenario: The last wait before the maximum is cut short, so the timeout comes on time
    Given an actor "impatient" with:
      """
      batch_processing: batch
      batch: {poll_interval: 40, max_wait: 100}
      """
    When the actor is asked "Hello"
    Then a BatchTimeoutError is raised
    And after its 0.5 second coalescing window, the actor waited 40, 40, 20 seconds
    And the timeout error names the batch, a wait of 100 seconds and a maximum of 100 seconds

  Scenario: When the cancellation itself is refused, the timeout error says the batch was left running
    Given an actor "impatient" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30, max_wait: 60, on_timeout: cancel}
      """
    And the API will fail the next "batches.cancel" call with status 403
    When the actor is asked "Hello"
    Then a BatchTimeoutError is raised
    And the timeout error says the batch was not canceled
    And the error message contains "it was left running"
    And the API received these calls:
      | call           | count |
      | batches.cancel | 1     |
    And that batch is still in progress

  Scenario: A batch left running is picked up later by its id
    Given an actor "patient" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30, max_wait: 60, on_timeout: leave}
      """
    When the actor is asked "Where were we?" with:
      """
      custom_id: request-0
      """
    Then a BatchTimeoutError is raised
    When 60 more seconds pass
    And the actor's batch provider waits for that batch by its id and collects "request-0" asked "Where were we?"
    Then the collected outcome of "request-0" is the emulated reply to "Where were we?"
    And after its 0.5 second coalescing window, the actor waited 30, 30 seconds

  Scenario: A batch-mode call that runs out of time names its request, so that it can be collected later
    Given an actor "patient" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30, max_wait: 60, on_timeout: leave}
      """
    When the actor is asked "Where were we?" with:
      """
      custom_id: where-were-we
      """
    Then a BatchTimeoutError is raised
    And the timeout error names the requests "where-were-we"

  Scenario: A batch left running is collected later by its id alone, the timeout error naming its requests
    Given an actor "patient" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30, max_wait: 60, on_timeout: leave}
      """
    When the actor runs these prompts as one call of run_many:
      | custom_id | prompt                  |
      | north     | Tide at the north pier? |
      | south     | Tide at the south pier? |
    Then a BatchTimeoutError is raised
    And the timeout error names the requests "north, south"
    When 60 more seconds pass
    And the actor's batch provider collects that batch by its id alone
    Then the collected outcome of "north" is the emulated reply to "Tide at the north pier?"
    And the collected outcome of "south" is the emulated reply to "Tide at the south pier?"
    And the collected outcomes name that batch and the requests "north, south"

  Scenario: Collecting the results of a batch still in progress is an API error
    Given an actor "hasty" in batch mode
    When the actor's batch provider submits "Hello" and collects its results at once
    Then an APIError is raised
    And the error message contains "has no results to download yet (it is in_progress)"

  Scenario: A results file that leaves out a request, or names one not asked for, is reconciled by custom_id
    Given an actor "nightly" in batch mode
    When the actor's batch provider submits "First, Second" as "first, second" and, once it ends, collects only "second, ghost"
    Then the collected outcome of "second" is the emulated reply to "Second"
    And the collected outcome of "ghost" is a BatchRequestError saying "ended without a result for request ghost"
    And nothing was collected for "first"

  Scenario: A result is mapped to the same ActorResponse shape as a live answer
    Given an actor "nightly" with:
      """
      batch_processing: batch
      model: claude-haiku-4-5
      """
    When the actor is asked "Describe the tide" with:
      """
      custom_id: tide-1
      """
    Then the answer is the emulated reply to "Describe the tide"
    And the response has these fields:
      | field         | value            |
      | model         | claude-haiku-4-5-20251001 |
      | provider      | anthropic        |
      | mode          | batch            |
      | stop_reason   | end_turn         |
      | stop_sequence |                  |
      | ids.custom_id | tide-1_<identity> |
      | parsed        |                  |
      | provider_details |                  |
    And the response ids start with:
      | field          | prefix    |
      | ids.batch_id   | msgbatch_ |
      | ids.message_id | msg_      |
      | ids.request_id | req_      |
    And the response content is one text block holding the answer
    And the response reports some input and output tokens, and no cache use

  Scenario: Thinking and a stop sequence come back from a batch as from a live call
    Given an actor "nightly" with:
      """
      batch_processing: batch
      max_tokens: 3000
      thinking: {type: enabled, budget_tokens: 1024}
      stop_sequences: ["tide"]
      """
    When the actor is asked "Tell me about the tide tables"
    Then the response content holds the block types "thinking, text"
    And the answer is "Emulated reply to "Tell me about the "
    And the response has these fields:
      | field         | value         |
      | stop_reason   | stop_sequence |
      | stop_sequence | tide          |
    And the response's thinking mentions "Tell me about the tide tables"

  Scenario: A forced tool call comes back from a batch as tool calls
    Given an actor "nightly" with:
      """
      batch_processing: batch
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
    Then the actor called the tool "record_tide" with a string "port" and a number "height_m"
    And the response has these fields:
      | field       | value    |
      | stop_reason | tool_use |
      | text        |          |

  Scenario: Cache writes and reads are reported per request
    Given an actor "nightly" whose system prompt is long enough to cache, with:
      """
      batch_processing: batch
      cache_control: {type: ephemeral}
      """
    When the actor runs each of these prompts in a call of run_many of its own, one after another:
      | custom_id | prompt           |
      | first     | High tide today? |
      | second    | High tide today? |
    Then the outcome of "first" wrote to the prompt cache and read nothing from it
    And the outcome of "second" read from the prompt cache what "first" wrote

  # max_attempts 1: what may succeed next time is not sent again (partial_outcomes.feature), so all stay in one batch.
  Scenario: Each request of a batch gets its own outcome; failures do not touch their neighbours
    Given an actor "nightly" with:
      """
      batch_processing: batch
      batch: {max_attempts: 1}
      """
    And the API will end request "throttled" as errored with rate_limit_error "Too many requests from this workspace."
    When the actor runs these prompts as one call of run_many:
      | custom_id  | prompt                                         |
      | good-1     | Good morning                                   |
      | invalid    | [[emulator:errored]] Bad request               |
      | overloaded | [[emulator:errored:overloaded_error]] Busy now |
      | throttled  | Slow down                                      |
      | stopped    | [[emulator:canceled]] Never mind               |
      | too-late   | [[emulator:expired]] Tomorrow                  |
      | good-2     | Good night                                     |
    Then the outcome of "good-1" is the emulated reply to "Good morning"
    And the outcome of "good-2" is the emulated reply to "Good night"
    And the failed outcomes are:
      | custom_id  | error                | error_type            | api_message                                           | retryable |
      | invalid    | BatchRequestErrored  | invalid_request_error | Emulated invalid_request_error requested by a marker. | False     |
      | overloaded | BatchRequestErrored  | overloaded_error      | Emulated overloaded_error requested by a marker.      | True      |
      | throttled  | BatchRequestErrored  | rate_limit_error      | Too many requests from this workspace.                | True      |
      | stopped    | BatchRequestCanceled |                       |                                                       | False     |
      | too-late   | BatchRequestExpired  |                       |                                                       | True      |
    And the outcome of "invalid" is a BatchRequestErrored saying "Request invalid_"
    And the outcome of "stopped" is a BatchRequestCanceled saying "was canceled before it was processed."
    And the outcome of "too-late" is a BatchRequestExpired saying "expired before it was processed (24 h limit)."
    And all outcomes came from the same batch
    And the API received these calls:
      | call           | count |
      | batches.create | 1     |

  Scenario: A single batch-mode call raises its request's own error
    Given an actor "nightly" in batch mode
    When the actor is asked "[[emulator:expired]] Tomorrow"
    Then a BatchRequestExpired is raised
    # Its custom_id is its key, derived from the request when the caller names none.
    And the error message contains "Request auto-"
    And the error message contains " in batch msgbatch_"

  Scenario Outline: A status check that fails for a moment is retried
    Given an actor "nightly" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """
    And the API will fail the next "batches.retrieve" call with status <status>
    When the actor is asked "Hello"
    Then the answer is the emulated reply to "Hello"
    And besides its coalescing window and its 30 second polls, the actor waited once for between <least> and <most> seconds
    And the API received these calls:
      | call             | count |
      | batches.retrieve | 5     |

    Examples:
      | status | least | most |
      | 500    | 1     | 2    |
      | 529    | 1     | 2    |

  Scenario: A rate-limited status check waits exactly as long as the API asked
    Given an actor "nightly" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """
    And the API will fail the next "batches.retrieve" call with status 429 and retry-after 7
    When the actor is asked "Hello"
    Then the answer is the emulated reply to "Hello"
    And after its 0.5 second coalescing window, the actor waited 30, 7, 30, 30, 30 seconds

  Scenario Outline: A results download that fails for a moment is retried
    Given an actor "nightly" in batch mode
    And the API will fail the next "batches.results" call with status <status> and retry-after 3
    When the actor is asked "Hello"
    Then the answer is the emulated reply to "Hello"
    And the API received these calls:
      | call            | count |
      | batches.results | 2     |

    Examples:
      | status |
      | 429    |
      | 500    |
      | 529    |

  Scenario: A results download whose connection breaks halfway is downloaded again
    Given the connection will break halfway through the next results download
    And an actor "nightly" in batch mode
    When the actor runs these prompts as one call of run_many:
      | custom_id | prompt |
      | a         | One    |
      | b         | Two    |
      | c         | Three  |
    Then the outcome of "a" is the emulated reply to "One"
    And the outcome of "b" is the emulated reply to "Two"
    And the outcome of "c" is the emulated reply to "Three"
    And the API received these calls:
      | call            | count |
      | batches.results | 2     |

  Scenario: A results download that ends early, mid-line, without a connection error is downloaded again
    Given the next results download will end halfway through, as if the connection closed cleanly
    And an actor "nightly" in batch mode
    When the actor runs these prompts as one call of run_many:
      | custom_id | prompt                         |
      | a         | One                            |
      | b         | Two hundred and twelve, please |
    Then the outcome of "a" is the emulated reply to "One"
    And the outcome of "b" is the emulated reply to "Two hundred and twelve, please"
    And the API received these calls:
      | call            | count |
      | batches.results | 2     |

  Scenario: Status checks that keep failing give up after the configured retries
    Given an actor "nightly" with:
      """
      batch_processing: batch
      batch: {api_retries: 2}
      """
    And the API will fail the next 3 "batches.retrieve" calls with status 500
    When the actor is asked "Hello"
    Then a ServerError is raised
    And the API error has status 500 and a request id
    And the API received these calls:
      | call             | count |
      | batches.retrieve | 3     |
      | batches.results  | 0     |

  Scenario Outline: Creating a batch the API refused outright is retried
    Given an actor "nightly" in batch mode
    And the API will fail the next "batches.create" call with status <status> and retry-after 5
    When the actor is asked "Hello"
    Then the answer is the emulated reply to "Hello"
    And the API received these calls:
      | call           | count |
      | batches.create | 2     |

    Examples:
      | status |
      | 429    |
      | 529    |

  Scenario: A rate-limited batch creation waits exactly as long as the API asked
    Given an actor "nightly" in batch mode
    And the API will fail the next "batches.create" call with status 429 and retry-after 12
    When the actor is asked "Hello"
    Then the answer is the emulated reply to "Hello"
    And the actor's first wait after its coalescing window was 12 seconds

  Scenario: A batch creation that failed with a server error is not retried by the batch provider, as the batch may exist
    Given an actor "nightly" in batch mode
    And the API will fail the next "batches.create" call with status 500
    When the actor's batch provider is asked "Hello" directly
    Then a ServerError is raised
    And the API error has status 500 and a request id
    And the API received these calls:
      | call             | count |
      | batches.create   | 1     |
      | batches.retrieve | 0     |

  # The batch provider called directly is one batch outside the ledger: no keys, no coalescing, no exactly-once
  # create (calling it twice pays twice). A request's custom_id is sent as it is, so the API's rules apply to it.
  Scenario Outline: Outside the ledger, invalid custom ids are refused before anything is sent
    Given an actor "nightly" in batch mode
    When the actor's batch provider completes these prompts directly, outside the ledger:
      | custom_id   | prompt |
      | <custom_id> | Hello  |
    Then a ConfigurationError is raised
    And the error message contains "is invalid: use 1 to 64 letters, digits, '_' or '-'"
    And the error names the field "custom_id"
    And the API received no calls at all

    Examples:
      | custom_id                                                         |
      | has space                                                         |
      | dots.are.not.allowed                                              |
      | café                                                              |
      | a-custom-id-of-sixty-five-characters-is-one-more-than-the-api-all |

  Scenario: Outside the ledger, a custom id of 64 characters is accepted
    Given an actor "nightly" in batch mode
    When the actor's batch provider completes these prompts directly, outside the ledger:
      | custom_id                                                        | prompt |
      | a-custom-id-of-sixty-four-characters-is-the-most-the-api-allows1 | Hello  |
    Then the outcome of "a-custom-id-of-sixty-four-characters-is-the-most-the-api-allows1" is the emulated reply to "Hello"

  Scenario: Outside the ledger, the same custom id twice in one batch is refused before anything is sent
    Given an actor "nightly" in batch mode
    When the actor's batch provider completes these prompts directly, outside the ledger:
      | custom_id | prompt  |
      | twin      | Hello   |
      | other     | Hi      |
      | twin      | Goodbye |
    Then a ConfigurationError is raised
    And the error message is:
      """
      custom_id 'twin' is used twice in one batch.
      """
    And the API received no calls at all

  Scenario: Outside the ledger, a batch of no requests is refused before anything is sent
    Given an actor "nightly" in batch mode
    When the actor's batch provider completes an empty list of requests directly
    Then a ConfigurationError is raised
    And the error message is:
      """
      A batch needs at least one request.
      """
    And the API received no calls at all

  Scenario: Outside the ledger, more requests than the API takes in one batch are refused before anything is sent
    Given an actor "nightly" in batch mode
    When the actor's batch provider completes 100001 copies of a 10 character prompt directly
    Then a ConfigurationError is raised
    And the error message is:
      """
      100001 requests exceed the API's limit of 100000 per batch.
      """
    And the API received no calls at all

  Scenario: Outside the ledger, a batch larger than the API takes is refused before anything is sent
    Given an actor "nightly" in batch mode
    When the actor's batch provider completes 100 copies of a 2700000 character prompt directly
    Then a ConfigurationError is raised
    And the error message contains "over the API's limit of 256 MB; split it."
    And the API received no calls at all
