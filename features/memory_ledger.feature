Feature: A ledger in memory, for tests
  As a developer testing code that makes batch-mode calls
  I want to give an actor a ledger that lives in my process's memory (`Actor(..., ledger=MemoryLedger())`)
  So that my tests get every guarantee of the ledger (one batch for many calls, a key answered once, parking, bulk
  runs) with no file to make, share or clean up

  Background:
    Given an emulated Anthropic API whose batches take 120 seconds
    And an actor "planner" on a ledger in memory, with:
      """
      batch_processing: batch
      batch: {poll_interval: 30, max_attempts: 1}
      """

  Scenario: Calls made at once travel in one batch, recorded in the memory ledger
    When the actor is asked these prompts at once:
      | key     | prompt                   |
      | cron    | Plan the cron move       |
      | webhook | Plan the webhook retries |
      | flags   | Plan the flag cache      |
    Then every call was answered with the emulated reply to its prompt
    And the answers came in batches of 3
    And the API committed 1 batch
    And the ledger holds these requests:
      | key     | state     | attempts | cost     |
      | cron    | succeeded | 1        | recorded |
      | webhook | succeeded | 1        | recorded |
      | flags   | succeeded | 1        | recorded |
    And the ledger holds these batches, oldest first:
      | state     | requests | API batch |
      | collected | 3        | yes       |
    And no SQLite ledger file was made

  Scenario: A key asked again is answered from the memory ledger, without calling the API
    When the actor is asked "Plan the cron move" with the key "cron"
    And the API's call counts are noted
    And the actor is asked "Plan the cron move" with the key "cron"
    Then the answer is the same answer as the first one
    And the API received no calls since they were noted
    And the API was sent each of these requests once: cron
    And no SQLite ledger file was made

  Scenario: Another memory ledger knows nothing of the first one's answers
    When the actor is asked "Plan the cron move" with the key "cron"
    And an actor "planner" on a new ledger in memory is asked "Plan the cron move" with the key "cron"
    Then the two answers came from different batches
    And the API committed 2 batches

  Scenario: A parked call is collected through the memory ledger
    When the actor parks "Plan issue 42" with the key "plan-issue-42"
    Then the ticket "plan-issue-42" says:
      | field    | value            |
      | key      | plan-issue-42    |
      | state    | waiting-on-batch |
      | batch_id | msgbatch_...     |
      | attempts | 1                |
    When the actor waits for the result of "plan-issue-42"
    Then the answer is the emulated reply to "Plan issue 42"
    And the answer came from the batch of the ticket "plan-issue-42"
    And the ledger holds these requests:
      | key           | state     | attempts |
      | plan-issue-42 | succeeded | 1        |
    And no SQLite ledger file was made

  Scenario: lowtide.calls.parking sees and collects the batches of the memory ledger
    Given the API will fail the next "batches.results" call with status 401
    When the actor is asked "Plan issue 42" with the key "plan-issue-42"
    Then an AuthenticationError is raised
    And lowtide status shows these tickets:
      | key           | state | batch | attempts |
      | plan-issue-42 | ended | yes   | 1        |
    When lowtide collects the ended batches
    Then lowtide status shows these tickets:
      | key           | state     | batch | attempts |
      | plan-issue-42 | collected | yes   | 1        |
    When the API's call counts are noted
    And the actor waits for the result of "plan-issue-42"
    Then the answer is the emulated reply to "Plan issue 42"
    And the API received no calls since they were noted
    And no SQLite ledger file was made

  Scenario: A bulk run keeps its run and items in the memory ledger
    Given 7 prompts "Review {n}", with prompt 3 ending as errored
    When the actor maps the prompts with 4 items per batch as run "reviews"
    Then the run has 7 results, each the emulated reply to its own prompt, in input order
    And the run's groups are 6 completed, 1 failed, 0 canceled and 0 not run
    And the API received 2 batches of 4 and 3 requests
    And the memory ledger holds the run "reviews": 7 items in order, 6 succeeded, 1 failed
    And no SQLite ledger file was made
