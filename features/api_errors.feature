Feature: API errors
  As a developer handling the failures of an agent's model calls
  I want every API failure raised as one of lowtide's errors, the same in live and batch mode
  So that I can tell what went wrong, quote the request id to support, and never leak my API key in a log

  Background:
    Given an emulated Anthropic API whose batches take 60 seconds

  Scenario Outline: A failed live call raises the error matching its HTTP status
    Given an actor "chatter" with:
      """
      batch_processing: live
      live: {retries: {rate_limited: 0, overloaded: 0, server: 0}}
      """
    And the API will fail the next "messages.create" call with status <status>
    When the actor is asked "Hello"
    Then the call fails with <error>
    And the API error has status <status> and a request id
    And the API error says "<message>" with the error type "<error type>"
    And the error message does not contain the API key

    Examples:
      | status | error                 | error type            | message                                                              |
      | 400    | InvalidRequestError   | invalid_request_error | Invalid request.                                                     |
      | 401    | AuthenticationError   | authentication_error  | invalid x-api-key                                                    |
      | 403    | PermissionDeniedError | permission_error      | Your API key does not have permission to use the specified resource. |
      | 404    | NotFoundError         | not_found_error       | Not found.                                                           |
      | 409    | InvalidRequestError   | conflict_error        | The request conflicts with the current state of the resource.        |
      | 413    | InvalidRequestError   | request_too_large     | Request exceeds the maximum allowed number of bytes.                 |
      | 422    | InvalidRequestError   | invalid_request_error | Invalid request.                                                     |
      | 429    | RateLimitError        | rate_limit_error      | Number of requests has exceeded your rate limit.                     |
      | 500    | ServerError           | api_error             | Internal server error                                                |
      | 503    | ServerError           | api_error             | Internal server error                                                |
      | 504    | ServerError           | timeout_error         | Request timed out.                                                   |
      | 529    | OverloadedError       | overloaded_error      | Overloaded                                                           |

  Scenario Outline: A failed batch creation raises the error matching its HTTP status
    Given an actor "nightly" with:
      """
      batch_processing: batch
      batch: {api_retries: 0}
      """
    And the API will fail the next "batches.create" call with status <status>
    When the actor is asked "Hello"
    Then the call fails with <error>
    And the API error has status <status> and a request id
    And the API error says "<message>" with the error type "<error type>"
    And the error message does not contain the API key

    Examples:
      | status | error                 | error type            | message                                                              |
      | 400    | InvalidRequestError   | invalid_request_error | Invalid request.                                                     |
      | 401    | AuthenticationError   | authentication_error  | invalid x-api-key                                                    |
      | 403    | PermissionDeniedError | permission_error      | Your API key does not have permission to use the specified resource. |
      | 404    | NotFoundError         | not_found_error       | Not found.                                                           |
      | 413    | InvalidRequestError   | request_too_large     | Request exceeds the maximum allowed number of bytes.                 |
      | 429    | RateLimitError        | rate_limit_error      | Number of requests has exceeded your rate limit.                     |
      | 529    | OverloadedError       | overloaded_error      | Overloaded                                                           |
    # A 500 is not a refusal: the batch may exist, so the actor reconciles instead of failing (exactly_once.feature).

  Scenario Outline: A failed status check or results download in batch mode raises the matching error
    Given an actor "nightly" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30, api_retries: 0}
      """
    And the API will fail the next "<call>" call with status <status>
    When the actor is asked "Hello"
    Then the call fails with <error>
    And the API error has status <status> and a request id
    And the error message does not contain the API key

    Examples:
      | call             | status | error               |
      | batches.retrieve | 404    | NotFoundError       |
      | batches.retrieve | 529    | OverloadedError     |
      | batches.results  | 401    | AuthenticationError |
      | batches.results  | 500    | ServerError         |

  Scenario Outline: A rate limit says how long to wait, in either mode
    Given an actor "busy" with:
      """
      batch_processing: <mode>
      batch: {api_retries: 0}
      live: {retries: {rate_limited: 0}}
      """
    And the API will fail the next "<call>" call with status 429 and retry-after 30
    When the actor is asked "Hello"
    Then the call fails with RateLimitError
    And the rate limit error asks to wait 30 seconds and says it is retryable

    Examples:
      | mode  | call            |
      | live  | messages.create |
      | batch | batches.create  |

  Scenario Outline: Whether an API error is worth retrying
    Given an actor "chatter" with:
      """
      batch_processing: live
      live: {retries: {rate_limited: 0, overloaded: 0, server: 0}}
      """
    And the API will fail the next "messages.create" call with status <status>
    When the actor is asked "Hello"
    Then the call fails with <error>
    And the error <verdict> retryable

    Examples:
      | status | error               | verdict |
      | 400    | InvalidRequestError | is not  |
      | 401    | AuthenticationError | is not  |
      | 429    | RateLimitError      | is      |
      | 500    | ServerError         | is      |
      | 529    | OverloadedError     | is      |

  Scenario Outline: A wrong API key is refused, and the key is not repeated in the error
    Given an emulated Anthropic API that accepts only the key "sk-ant-api03-the-right-key"
    And an actor "locked-out" in <mode> mode
    When the actor is asked "Hello"
    Then the call fails with AuthenticationError
    And the API error has status 401 and a request id
    And the error message contains "invalid x-api-key"
    And the error message does not contain the API key

    Examples:
      | mode  |
      | live  |
      | batch |

  # An unknown model is refused before anything is sent (pre_send_checks.feature); when the models endpoint cannot
  # say, the call is sent, and the API's own refusal comes back.
  Scenario: An unknown model the models endpoint could not check is the API's NotFoundError in live mode
    Given an actor "lost" with:
      """
      model: gpt-4o
      """
    And the API will fail the next "models.retrieve" call with status 503
    When the actor is asked "Hello"
    Then the call fails with NotFoundError
    And the error message contains "model: gpt-4o"

  Scenario: An unknown model the models endpoint could not check errors that request alone in batch mode
    # The batch API validates each request late, once the batch is processed.
    Given an actor "lost" with:
      """
      model: gpt-4o
      batch_processing: batch
      """
    And the API will fail the next "models.retrieve" call with status 503
    When the actor is asked "Hello"
    Then the call fails with BatchRequestErrored
    And the batch request error has the type "not_found_error" and says "model: gpt-4o"

  Scenario: A request the API finds invalid is an InvalidRequestError in live mode
    Given an actor "thinker" with:
      """
      max_tokens: 4000
      thinking: {type: enabled, budget_tokens: 2000}
      tool_choice: {type: any}
      """
    When the actor is asked "Hello" with:
      """
      tools: [{name: note, input_schema: {type: object}}]
      """
    Then the call fails with InvalidRequestError
    And the API error has status 400 and a request id
    And the error message contains "Thinking may not be enabled when tool_choice forces tool use."

  Scenario: A request body over the API's size limit is an InvalidRequestError
    Given an emulated Anthropic API that takes request bodies of at most 2000 bytes
    And an actor "verbose" in live mode
    When the actor is asked a prompt of 5000 characters
    Then the call fails with InvalidRequestError
    And the API error has status 413 and a request id
    And the API error says "Request exceeds the maximum allowed number of bytes (2000)." with the error type "request_too_large"

  Scenario Outline: An API whose connections are refused is an APIUnreachableError naming host and port, within seconds, in either mode
    Nothing listens at the configured address: almost always the configuration (a wrong base URL, an emulator or
    proxy not running). The call is tried again only three times, 0.5, 1 and 2 seconds apart (not the half minute a
    dropped connection gets), then fails naming where it tried to connect.

    Given an Anthropic API whose connections are refused
    And an actor "offline" in <mode> mode
    When the actor is asked "Hello"
    Then the call fails with APIUnreachableError
    And the error message is:
      """
      could not connect to emulator.invalid:80 (connection refused)
      """
    And the error has no status code and no request id
    And "POST <path>" was tried 4 times, 0.5, 1 and 2 seconds apart on the clock

    Examples:
      | mode  | path                |
      | live  | /v1/messages        |
      | batch | /v1/messages/batches |

  Scenario: An API whose host name does not resolve is an APIUnreachableError saying so
    Given an Anthropic API whose host name does not resolve
    And an actor "offline" in batch mode
    When the actor is asked "Hello"
    Then the call fails with APIUnreachableError
    And the error message is:
      """
      could not connect to emulator.invalid:80 (host not found)
      """

  Scenario Outline: A connection dropped mid-call is an APIConnectionError, retried as transient, in either mode
    Given an Anthropic API whose connections drop mid-call
    And an actor "offline" in <mode> mode
    When the actor is asked "Hello"
    Then the call fails with APIConnectionError
    And the error message is:
      """
      The connection to the API failed: Connection error.
      """
    And the error has no status code and no request id
    And the error is retryable

    Examples:
      | mode  |
      | live  |
      | batch |

  Scenario Outline: An API that does not answer in time is an APITimeoutError, in either mode
    Given an Anthropic API that never answers in time
    And an actor "offline" in <mode> mode
    When the actor is asked "Hello"
    Then the call fails with APITimeoutError
    And the error message is:
      """
      The API did not answer in time.
      """
    And the error has no status code and no request id
    And the error is retryable

    Examples:
      | mode  |
      | live  |
      | batch |

  Scenario: A status check whose connection drops is retried
    Given the connection will drop on the next status check of a batch
    And an actor "nightly" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """
    When the actor is asked "Hello"
    Then the answer is the emulated reply to "Hello"
    And besides its coalescing window and its 30 second polls, the actor waited once for between 1 and 2 seconds

  Scenario Outline: A retry-after given as an HTTP date is not mistaken for seconds
    Given the API gives its retry-after as an HTTP date
    And an actor "busy" with:
      """
      batch_processing: <mode>
      batch: {api_retries: 0}
      live: {retries: {rate_limited: 0}}
      """
    And the API will fail the next "<call>" call with status 429 and retry-after 30
    When the actor is asked "Hello"
    Then the call fails with RateLimitError
    And the rate limit error does not say how long to wait

    Examples:
      | mode  | call            |
      | live  | messages.create |
      | batch | batches.create  |

  Scenario: Each error class keeps the name journals and pickles give it, wherever lowtide writes it
    When each of lowtide's error classes is pickled and read back
    Then each comes back as itself, named "lowtide.errors.<its name>" as a journal names it
