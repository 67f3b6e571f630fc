@stores
Feature: Request keys: one answer per key, however often it is asked
  As a developer whose agent may ask the same thing twice, or be restarted while its batches run
  I want every batch-mode call recorded under a key, and a call whose key is known to attach to what is there
  So that I never pay twice for one answer, and a restarted program waits on its batches instead of resending them

  Background:
    Given an emulated Anthropic API whose batches take 120 seconds
    And an actor "planner" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """

  # The ledger's identity (random, made with the ledger) in every custom id: no other ledger's request is ever the
  # same, so that a batch another ledger made from the same inputs with the same API key is never taken for its own.
  Scenario: A call with the caller's key is recorded under it, its custom_id the key and the ledger's identity
    When the actor is asked "Plan issue 42" with the key "plan-issue-42"
    Then the answer is the emulated reply to "Plan issue 42"
    And the answer's custom_id is its key "plan-issue-42" and the ledger's identity, "plan-issue-42_<identity>"
    And the answer to "Plan issue 42" came from the batch that holds exactly "plan-issue-42"
    And the ledger holds these requests:
      | key           | custom_id                | actor   | state     | attempts | prompt        | cost     |
      | plan-issue-42 | plan-issue-42_<identity> | planner | succeeded | 1        | Plan issue 42 | recorded |

  Scenario: Asking again with a known key returns the stored answer without calling the API
    When the actor is asked "Plan issue 42" with the key "plan-issue-42"
    And the API's call counts are noted
    And the actor is asked "Plan issue 42" with the key "plan-issue-42"
    Then the answer is the same answer as the first one
    And the API received no calls since they were noted
    And the ledger holds these requests:
      | key           | state     | attempts |
      | plan-issue-42 | succeeded | 1        |

  Scenario: A stored answer comes back exactly as the API sent it, integers beyond 64 bits and any script included
    When the actor is asked "Record the tide" with the key "tide-ticket" and:
      """
      tool_choice: {type: tool, name: record_tide}
      tools:
        - name: record_tide
          description: Record a tide measurement
          input_schema:
            type: object
            properties:
              ticket: {type: integer, const: 123456789012345678901234567890}
              port: {type: string, const: "Île-de-Bréhat 🌊"}
              height_m: {type: number, const: 4.25}
            required: [ticket, port, height_m]
      """
    And the API's call counts are noted
    And the actor is asked "Record the tide" with the key "tide-ticket" and:
      """
      tool_choice: {type: tool, name: record_tide}
      tools:
        - name: record_tide
          description: Record a tide measurement
          input_schema:
            type: object
            properties:
              ticket: {type: integer, const: 123456789012345678901234567890}
              port: {type: string, const: "Île-de-Bréhat 🌊"}
              height_m: {type: number, const: 4.25}
            required: [ticket, port, height_m]
      """
    Then both answers called "record_tide" with exactly this input:
      """
      {"ticket": 123456789012345678901234567890, "port": "Île-de-Bréhat 🌊", "height_m": 4.25}
      """
    And the answer is the same answer as the first one
    And the API received no calls since they were noted

  Scenario: A call without a key gets one derived from the request, and the same request is answered once
    When the actor is asked "Summarize the tide tables"
    And the API's call counts are noted
    And the actor is asked "Summarize the tide tables"
    Then the answer is the same answer as the first one
    And the API received no calls since they were noted
    And the API received these calls:
      | call           | count |
      | batches.create | 1     |
    And the ledger holds 1 request, whose key starts with "auto-"

  Scenario: A derived key covers everything the request sends, not only its prompt
    When the actor is asked "Summarize the tide tables"
    And the actor is asked "Summarize the tide tables" with:
      """
      max_tokens: 50
      """
    Then the two answers came from different batches
    And the API received these calls:
      | call           | count |
      | batches.create | 2     |
    And the ledger holds 2 requests, whose keys start with "auto-"

  Scenario: A key reused for a different request is refused before anything is sent
    When the actor is asked "Plan issue 42" with the key "plan-issue-42"
    And the API's call counts are noted
    And the actor is asked "Plan issue 43" with the key "plan-issue-42"
    Then a ConfigurationError is raised
    And the error names the field "key"
    And the error message contains "Key 'plan-issue-42' already names a different request in the ledger"
    And the API received no calls since they were noted
    And the ledger holds these requests:
      | key           | state     | prompt        |
      | plan-issue-42 | succeeded | Plan issue 42 |

  Scenario Outline: A key the API would not take as a custom_id still works: the custom_id is derived from it
    When the actor is asked "Plan issue 42" with the key "<key>"
    Then the answer is the emulated reply to "Plan issue 42"
    And the answer's custom_id is derived from its key, and valid for the API
    And the ledger holds these requests:
      | key   | state     |
      | <key> | succeeded |
    When the API's call counts are noted
    And the actor is asked "Plan issue 42" with the key "<key>"
    Then the answer is the same answer as the first one
    And the API received no calls since they were noted

    Examples:
      | key                                                                         |
      | plan issue 42                                                               |
      | issue/42:plan                                                               |
      | nightly-report-2026-11-21-planner-step-0001-of-0042-for-the-billing-team-ok |

  Scenario: A new program asking with the key of a parked call waits on that call's batch
    Given the actor parked "Plan issue 42" with the key "plan-issue-42", in a program that then ended
    When a new program's actor "planner" is asked "Plan issue 42" with the key "plan-issue-42"
    Then the answer is the emulated reply to "Plan issue 42"
    And the answer came from the batch of the ticket "plan-issue-42"
    And the API received these calls:
      | call           | count |
      | batches.create | 1     |
    And the ledger holds these requests:
      | key           | state     | attempts |
      | plan-issue-42 | succeeded | 1        |

  Scenario: Two programs asking with the same key at once share one request in one batch
    When the actor and a new program's actor ask "Plan issue 42" with the key "plan-issue-42" at once
    Then both were answered with the same answer
    And the API received these calls:
      | call           | count |
      | batches.create | 1     |
    And the API was sent each of these requests once: plan-issue-42

  Scenario Outline: A stored failure is raised again, as the same error, without calling the API
    When the actor is asked "<prompt>" with the key "doomed"
    Then a <error> is raised
    When the error is noted
    And a new program's actor "planner" is asked "<prompt>" with the key "doomed"
    Then <error> is raised again, the same as the first time
    And the API received no calls since they were noted

    Examples:
      | prompt                              | error                |
      | [[emulator:errored]] Plan issue 42  | BatchRequestErrored  |
      | [[emulator:canceled]] Plan issue 42 | BatchRequestCanceled |

  Scenario: A request a program recorded, then died before sending, is sent by the next program asking for it
    Given the ledger holds the request "plan-issue-42" asking "Plan issue 42", claimed by a program that has since died
    When the actor is asked "Plan issue 42" with the key "plan-issue-42"
    Then the answer is the emulated reply to "Plan issue 42"
    And the API was sent each of these requests once: plan-issue-42
    And the ledger holds these requests:
      | key           | state     | attempts |
      | plan-issue-42 | succeeded | 1        |

  Scenario: A request a program on another host is sending is left to it until its lease runs out
    Given the ledger holds the request "plan-issue-42" asking "Plan issue 42", claimed by a program on another host whose lease ends in 120 seconds
    When the actor is asked "Plan issue 42" with the key "plan-issue-42"
    Then the answer is the emulated reply to "Plan issue 42"
    And the batch was recorded once the other program's lease had run out
    And the API was sent each of these requests once: plan-issue-42
