Feature: lowtide serve's idempotency keys belong to the client key that sent them, for a day
  As the operator of a lowtide serve shared by several programs, each with a client key of its own
  I want a retry answered from the ledger, but never with the answer another client's request got
  So that no client can read another's answers by guessing its Idempotency-Key, and a key used again long after is a
  new request, as the APIs' own idempotency keys are

  Background:
    Given an emulator behind lowtide serve, on a socket, that also serves "claude-haiku-5-5-20261007"
    And lowtide serve runs an Anthropic and an OpenAI actor, with
      | option          | value        |
      | client keys     | key-a, key-b |
      | idempotency ttl | 3600         |

  Scenario Outline: The same Idempotency-Key from two client keys names two requests
    When client "key-a" asks "What is a tide?" at "<path>" with Idempotency-Key "tide-7"
    And client "key-b" asks "What is a tide?" at "<path>" with Idempotency-Key "tide-7"
    And client "key-a" asks "What is a tide?" at "<path>" with Idempotency-Key "tide-7"
    And client "key-b" asks "What is a tide?" at "<path>" with Idempotency-Key "tide-7"
    Then answers 1 and 2 are different answers
    And answers 1 and 3 are the same answer
    And answers 2 and 4 are the same answer
    And the emulator behind lowtide serve was sent 2 request(s) in batches, none live
    And the ledger holds 2 served request(s), and neither client key nor Idempotency-Key in clear

    Examples:
      | path                 |
      | /v1/messages         |
      | /v1/chat/completions |
      | /v1/responses        |

  Scenario: A key one client used is free for another client's different request
    When client "key-a" asks "First wording" at "/v1/messages" with Idempotency-Key "tide-8"
    And client "key-b" asks "Second wording" at "/v1/messages" with Idempotency-Key "tide-8"
    Then answers 1 and 2 are different answers
    And the emulator behind lowtide serve was sent 2 request(s) in batches, none live

  Scenario: The same body from two client keys is paid once for each, and answered from the ledger after
    When client "key-a" asks "Why do tides turn?" at "/v1/chat/completions"
    And client "key-b" asks "Why do tides turn?" at "/v1/chat/completions"
    And client "key-b" asks "Why do tides turn?" at "/v1/chat/completions"
    Then answers 1 and 2 are different answers
    And answers 2 and 3 are the same answer
    And the emulator behind lowtide serve was sent 2 request(s) in batches, none live

  Scenario: An Idempotency-Key older than the retention names a new request; the old one stays in the ledger
    # The actors' clock is the real one moved forward: the real seconds the requests take count too, so the key's
    # age is 3500 seconds and the requests' time (minutes at most), then past 3600.
    When client "key-a" asks "What is a tide?" at "/v1/messages" with Idempotency-Key "tide-9"
    And the actors' clock moves 3500 seconds forward
    And client "key-a" asks "What is a tide?" at "/v1/messages" with Idempotency-Key "tide-9"
    Then answers 1 and 2 are the same answer
    When the actors' clock moves 101 seconds forward
    And client "key-a" asks "What is a tide?" at "/v1/messages" with Idempotency-Key "tide-9"
    And client "key-a" asks "What is a tide?" at "/v1/messages" with Idempotency-Key "tide-9"
    Then answers 2 and 3 are different answers
    And answers 3 and 4 are the same answer
    And the emulator behind lowtide serve was sent 2 request(s) in batches, none live
    And the ledger holds 2 served request(s), and neither client key nor Idempotency-Key in clear

  Scenario: A key reused for a different body within the retention is still refused, for its own client
    When client "key-a" asks "First wording" at "/v1/messages" with Idempotency-Key "tide-10"
    And client "key-a" asks "Second wording" at "/v1/messages" with Idempotency-Key "tide-10"
    Then lowtide serve answers 400 in the API's error shape, type "invalid_request_error", code "-"
    And its message says "already names a different request"
    And the emulator behind lowtide serve was sent 1 request(s) in batches, none live

  Scenario: A request still waiting on its batch when its key's retention ends is not sent again
    Given a ledger holding a served request first sent 7200 seconds ago, still waiting on its batch
    When lowtide serve derives the ledger key of the same Idempotency-Key now, with a retention of 3600 seconds
    Then the key is the waiting request's
