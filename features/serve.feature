Feature: lowtide serve, the Messages API answered through batches
  As a developer with a program written against the Anthropic SDK
  I want to point its base URL at lowtide serve
  So that its calls are coalesced into batches at batch prices, recorded in the ledger, never paid twice

  Background:
    Given an emulator behind lowtide serve, on a socket
    And lowtide serve runs in a background thread with client key "local-secret"

  Scenario: Twenty concurrent requests are answered through one batch
    When 20 different requests are sent at once to lowtide serve
    Then all 20 served requests are answered with a message
    And behind lowtide serve the emulator created 1 batch(es) holding 20 request(s)

  Scenario: The same request sent twice is answered from the ledger
    When the request "What is a tide?" is sent to lowtide serve
    And the request "What is a tide?" is sent to lowtide serve
    Then both served answers are the same message
    And behind lowtide serve the emulator created 1 batch(es) holding 1 request(s)

  Scenario: The same Idempotency-Key gets the stored answer
    When the request "First wording" is sent to lowtide serve with Idempotency-Key "retry-7"
    And the request "First wording" is sent to lowtide serve with Idempotency-Key "retry-7"
    Then both served answers are the same message
    And behind lowtide serve the emulator created 1 batch(es) holding 1 request(s)

  Scenario: An Idempotency-Key used again for a different request is refused
    When the request "First wording" is sent to lowtide serve with Idempotency-Key "retry-8"
    And the request "Second wording" is sent to lowtide serve with Idempotency-Key "retry-8"
    Then the SDK raises a bad request error from lowtide serve saying "already names a different request"
    And behind lowtide serve the emulator created 1 batch(es) holding 1 request(s)

  Scenario: A wrong client key is refused in Anthropic's shape
    When a request is sent to lowtide serve with the client key "not-the-key"
    Then the SDK raises the authentication error of lowtide serve with status 401 and type "authentication_error"
    And behind lowtide serve the emulator created 0 batch(es) holding 0 request(s)

  Scenario: A bearer token is accepted as the client key
    When a request is sent to lowtide serve with the header "Authorization: Bearer local-secret"
    Then lowtide serve answers status 200 with a message

  Scenario: A streamed request is replayed as the Messages API's events
    When the request "Tell me about tides" is streamed from lowtide serve with the SDK's messages.stream
    Then the served stream's events are message_start, content_block_start, content_block_delta, content_block_stop, message_delta, message_stop
    And the served stream's final message has the text of the batch answer
    And behind lowtide serve the emulator created 1 batch(es) holding 1 request(s)

  Scenario: A bad request is refused with 400 before anything is sent
    When a request without max_tokens is sent to lowtide serve over HTTP
    Then lowtide serve answers status 400 with error type "invalid_request_error"
    And behind lowtide serve the emulator created 0 batch(es) holding 0 request(s)
