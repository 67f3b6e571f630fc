@stores
Feature: Requests that expire or fail for a moment are sent again
  As a developer whose batch requests sometimes expire or meet an overloaded API
  I want those requests sent again in a later batch, up to a number of attempts I choose, and the others final
  So that a passing problem costs me a little time, not an answer, and a real one is explained at once

  Background:
    Given an emulated Anthropic API whose batches take 120 seconds
    And an actor "planner" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30, max_attempts: 3}
      """

  Scenario: An expired and an overloaded request are sent again in a later batch, and answered there
    Given the API will end request "tide-late" as expired in the first batch only
    And the API will end request "tide-busy" as errored with overloaded_error in the first batch only
    When the actor is asked these prompts at once:
      | key       | prompt                |
      | tide-late | When is high tide?    |
      | tide-busy | When is low tide?     |
      | tide-ok   | How strong is the ebb? |
    Then every call was answered with the emulated reply to its prompt
    And the API received these calls:
      | call           | count |
      | batches.create | 2     |
    And the answer to "tide-ok" came from the batch that holds exactly "tide-busy, tide-late, tide-ok"
    And the answer to "tide-late" came from the batch that holds exactly "tide-busy, tide-late"
    And the answer to "tide-busy" came from the batch that holds exactly "tide-busy, tide-late"
    And the ledger holds these requests:
      | key       | state     | attempts | cost     |
      | tide-late | succeeded | 2        | recorded |
      | tide-busy | succeeded | 2        | recorded |
      | tide-ok   | succeeded | 1        | recorded |
    And the ledger records for the request "tide-late" the cost of its answer, at batch and live prices
    And the ledger records for the request "tide-busy" the cost of its answer, at batch and live prices
    And lowtide status totals for each actor the cost of its answers, at batch and at live prices

  Scenario Outline: A request that keeps failing <how> is given up after max_attempts, its last error final
    Given an actor "planner" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30, max_attempts: 2}
      """
    When the actor is asked "<marker> When is high tide?" with the key "tide"
    Then a <error> is raised
    And the error names the request "tide" and the last of the 2 batches it was sent in
    And the API received these calls:
      | call           | count |
      | batches.create | 2     |
    And the ledger holds these requests:
      | key  | state   | attempts | error   | cost |
      | tide | <state> | 2        | <error> | none |
    When the error is noted
    And the actor is asked "<marker> When is high tide?" with the key "tide"
    Then <error> is raised again, the same as the first time
    And the API received no calls since they were noted

    Examples:
      | how                    | marker                                | error               | state   |
      | to expire              | [[emulator:expired]]                  | BatchRequestExpired | expired |
      | with an overloaded API | [[emulator:errored:overloaded_error]] | BatchRequestErrored | failed  |
      | with a server error    | [[emulator:errored:api_error]]        | BatchRequestErrored | failed  |

  Scenario: With max_attempts 1, an expired request is not sent again
    Given an actor "planner" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30, max_attempts: 1}
      """
    When the actor is asked "[[emulator:expired]] When is high tide?" with the key "tide"
    Then a BatchRequestExpired is raised
    And the API received these calls:
      | call           | count |
      | batches.create | 1     |
    And the ledger holds these requests:
      | key  | state   | attempts |
      | tide | expired | 1        |

  Scenario: A request the API found invalid fails at once, and the error says why
    When the actor is asked "[[emulator:errored]] When is high tide?" with the key "tide"
    Then a BatchRequestErrored is raised
    And the error is not retryable
    And the error message contains "Request tide_"
    And the error message contains " in batch msgbatch_"
    And the error message contains "errored: invalid_request_error: Emulated invalid_request_error requested by a marker."
    And the API received these calls:
      | call           | count |
      | batches.create | 1     |
    And the ledger holds these requests:
      | key  | state  | attempts | error               |
      | tide | failed | 1        | BatchRequestErrored |

  Scenario: A request whose batch was canceled is final, and nothing was charged for it
    When the actor is asked "[[emulator:canceled]] When is high tide?" with the key "tide"
    Then a BatchRequestCanceled is raised
    And the error is not retryable
    And the API received these calls:
      | call           | count |
      | batches.create | 1     |
    And the ledger holds these requests:
      | key  | state    | attempts | error                | cost |
      | tide | canceled | 1        | BatchRequestCanceled | none |

  Scenario: Only the requests that may succeed are sent again; their batch neighbours keep their answers
    Given the API will end request "tide-late" as expired in the first batch only
    When the actor is asked these prompts at once:
      | key       | prompt                                   |
      | tide-late | When is high tide?                       |
      | tide-bad  | [[emulator:errored]] When is low tide?   |
      | tide-stop | [[emulator:canceled]] When is slack tide? |
      | tide-ok   | How strong is the ebb?                   |
    Then the answer to "tide-late" came from the batch that holds exactly "tide-late"
    And the answer to "tide-ok" came from the batch that holds exactly "tide-bad, tide-late, tide-ok, tide-stop"
    And the ledger holds these requests:
      | key       | state     | attempts | error                |
      | tide-late | succeeded | 2        |                      |
      | tide-bad  | failed    | 1        | BatchRequestErrored  |
      | tide-stop | canceled  | 1        | BatchRequestCanceled |
      | tide-ok   | succeeded | 1        |                      |
