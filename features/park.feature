@stores
Feature: Parking calls, and seeing, collecting and cancelling them from the ledger
  As a developer whose pipeline stage need not wait a day for its batch
  I want to park a call with a ticket, see where every call and batch stands, collect ended batches and cancel
  outstanding ones, from my program or with `lowtide status`, `lowtide collect` and `lowtide cancel`
  So that a program can stop after submitting, and pick up its answers (and their cost) whenever they are ready

  Background:
    Given an emulated Anthropic API whose batches take 120 seconds
    And an actor "planner" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """

  Scenario: Parking a call hands back its ticket as soon as its batch exists, without waiting for the batch
    When the actor parks "Plan issue 42" with the key "plan-issue-42"
    Then the ticket "plan-issue-42" says:
      | field    | value            |
      | key      | plan-issue-42    |
      | actor    | planner          |
      | state    | waiting-on-batch |
      | batch_id | msgbatch_...     |
      | attempts | 1                |
      | cost_usd |                  |
    And the batch of the ticket "plan-issue-42" is still in progress
    And the API received these calls:
      | call            | count |
      | batches.create  | 1     |
      | batches.results | 0     |

  @sqlite
  Scenario: A parked call is handed its ticket once its batch exists, without reading the ledger while it waits
    Given an actor "patient" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30, coalesce_window: 5}
      """
    And the ledger's reads of each request are counted
    When the actor parks "Plan issue 43" with the key "plan-issue-43"
    Then the ticket "plan-issue-43" says:
      | field | value            |
      | state | waiting-on-batch |
    And the ledger's record of "plan-issue-43" was read at most 4 times

  Scenario: Prompts parked together are checked by the provider once, and each is handed its ticket once its batch exists
    When the actor parks 30 numbered prompts at once, its provider's pre-send checks counted
    Then the provider's pre-send checks ran 1 time
    And the API committed 1 batch
    And each of the 30 calls was handed a ticket of that one batch, waiting on it
    When the actor parks 5 numbered prompts at once, its provider's pre-send checks counted
    Then the provider's pre-send checks ran 0 times
    And the API committed 1 batch

  Scenario: Prompts parked together for a misspelt model are each refused, and nothing is recorded or sent
    Given an actor "typo" with:
      """
      model: claude-sonet-5-5
      batch_processing: batch
      """
    When the actor parks 3 numbered prompts at once, its provider's pre-send checks counted
    Then a ConfigurationError is raised
    And the error names the field "model"
    And the ledger holds no requests and no batches

  Scenario: A ticket is read back from the ledger, without calling the API
    Given the actor parked "Plan issue 42" with the key "plan-issue-42", in a program that then ended
    When the API's call counts are noted
    Then the actor's ticket for "plan-issue-42" is the one it was handed
    And the API received no calls since they were noted

  Scenario: A ticket is read from the ledger by a script that runs no event loop
    Given the actor parked "Plan issue 42" with the key "plan-issue-42", in a program that then ended
    When a script that runs no event loop reads the actor's ticket for "plan-issue-42"
    Then the ticket "plan-issue-42" says:
      | field    | value            |
      | key      | plan-issue-42    |
      | state    | waiting-on-batch |
      | batch_id | msgbatch_...     |

  Scenario: The result of a parked call is waited for, and its ticket then says it was collected
    When the actor parks "Plan issue 42" with the key "plan-issue-42"
    And the actor waits for the result of "plan-issue-42"
    Then the answer is the emulated reply to "Plan issue 42"
    And the answer came from the batch of the ticket "plan-issue-42"
    And the actor's ticket for "plan-issue-42" says:
      | field    | value     |
      | state    | collected |
      | attempts | 1         |
    And the actor's ticket for "plan-issue-42" carries the cost of the answer

  Scenario: A parked call's result is picked up by a later program
    Given the actor parked "Plan issue 42" with the key "plan-issue-42", in a program that then ended
    When 200 more seconds pass
    And a new program's actor "planner" waits for the result of "plan-issue-42"
    Then the answer is the emulated reply to "Plan issue 42"
    And the answer came from the batch of the ticket "plan-issue-42"
    And the API received these calls:
      | call           | count |
      | batches.create | 1     |

  Scenario: Parking a call whose answer is stored hands back its collected ticket, without calling the API
    When the actor is asked "Plan issue 42" with the key "plan-issue-42"
    And the API's call counts are noted
    And the actor parks "Plan issue 42" with the key "plan-issue-42"
    Then the ticket "plan-issue-42" says:
      | field | value     |
      | state | collected |
    And the API received no calls since they were noted

  Scenario: Parking a call whose batch the API refuses raises the refusal, and the call can be parked again
    Given the API will fail the next "batches.create" call with status 403
    When the actor parks "Plan issue 42" with the key "plan-issue-42"
    Then a PermissionDeniedError is raised
    And the API error has status 403 and a request id
    When the actor parks "Plan issue 42" with the key "plan-issue-42"
    Then the ticket "plan-issue-42" says:
      | field    | value            |
      | state    | waiting-on-batch |
      | attempts | 1                |

  Scenario: Asking for the result or the ticket of a key the ledger does not know is an error
    When the actor waits for the result of "plan-issue-99"
    Then a ConfigurationError is raised
    And the error message contains "The ledger has no request with key 'plan-issue-99'."
    And the error names the field "key"
    And the API received no calls at all

  Scenario: A batch that ended but whose results could not be fetched shows as ended, until it is collected
    Given the API will fail the next "batches.results" call with status 401
    When the actor is asked "Plan issue 42" with the key "plan-issue-42"
    Then an AuthenticationError is raised
    And lowtide status shows these tickets:
      | key           | state | batch | attempts |
      | plan-issue-42 | ended | yes   | 1        |
    And lowtide status shows these batches:
      | state | requests | counts      |
      | ended | 1        | succeeded 1 |
    When lowtide collects the ended batches
    Then lowtide status shows these tickets:
      | key           | state     | batch | attempts |
      | plan-issue-42 | collected | yes   | 1        |
    When the API's call counts are noted
    And the actor waits for the result of "plan-issue-42"
    Then the answer is the emulated reply to "Plan issue 42"
    And the API received no calls since they were noted

  Scenario: Collecting stores the results of ended batches and leaves running ones as they are
    Given the actor parked "Plan issue 42" with the key "plan-issue-42", in a program that then ended
    And the API's batches take 3600 seconds from now on
    And the actor parked "Plan issue 43" with the key "plan-issue-43", in a program that then ended
    When 200 more seconds pass
    And lowtide collects the ended batches
    Then lowtide status shows these tickets:
      | key           | state            | batch | attempts |
      | plan-issue-42 | collected        | yes   | 1        |
      | plan-issue-43 | waiting-on-batch | yes   | 1        |
    And lowtide status shows these batches:
      | state            | requests | counts       |
      | collected        | 1        | succeeded 1  |
      | waiting-on-batch | 1        | processing 1 |
    And the API received these calls:
      | call            | count |
      | batches.create  | 2     |
      | batches.results | 1     |
    And collecting logged no errors

  Scenario Outline: Cancelling an outstanding batch, named by <target>, ends its requests canceled
    Given the API's batches take 3600 seconds from now on
    And the actor parked "Plan issue 42" with the key "plan-issue-42", in a program that then ended
    When lowtide cancels <target>
    Then the API received these calls:
      | call           | count |
      | batches.cancel | 1     |
    When lowtide collects the ended batches
    Then lowtide status shows these tickets:
      | key           | state    | batch | attempts |
      | plan-issue-42 | canceled | yes   | 1        |
    And lowtide status shows these batches:
      | state    | requests | counts     |
      | canceled | 1        | canceled 1 |
    When the actor waits for the result of "plan-issue-42"
    Then a BatchRequestCanceled is raised

    Examples:
      | target                                        |
      | the key "plan-issue-42"                       |
      | the API's batch id of the ticket "plan-issue-42" |
      | lowtide's batch id of the ticket "plan-issue-42" |

  Scenario: A batch that is no longer outstanding cannot be canceled
    When the actor is asked "Plan issue 42" with the key "plan-issue-42"
    And lowtide cancels the key "plan-issue-42"
    Then a BatchNotOutstanding is raised
    And the error message contains "is collected; only a batch the API is processing can be canceled."
    And the API received these calls:
      | call           | count |
      | batches.cancel | 0     |

  Scenario: A batch the API ended since the ledger last looked is not canceled: its end is recorded, to be collected
    Given the actor parked "Plan issue 42" with the key "plan-issue-42", in a program that then ended
    When 121 more seconds pass
    And lowtide cancels the key "plan-issue-42"
    Then a BatchNotOutstanding is raised
    And the error message contains "ended (ended) before the cancel reached it: nothing to cancel"
    And lowtide status shows these batches:
      | state | requests | counts      |
      | ended | 1        | succeeded 1 |
    When lowtide collects the ended batches
    Then lowtide status shows these tickets:
      | key           | state     | batch | attempts |
      | plan-issue-42 | collected | yes   | 1        |

  Scenario: Status totals the cost per actor and per batch, beside what the same calls would have cost live
    Given an actor "reviewer" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      model: claude-haiku-4-5
      """
    When these calls are made at once:
      | actor    | prompt                   |
      | planner  | Plan the cron move       |
      | planner  | Plan the webhook retries |
      | reviewer | Review the column rename |
    Then every call was answered with the emulated reply to its prompt
    And lowtide status totals for each actor the cost of its answers, at batch and at live prices
    And lowtide status totals for the batch the cost of all 3 answers, at batch and at live prices
    And lowtide status totals the cost of all answers, the live price being twice the batch price

  Scenario: `lowtide status` prints the batches, the tickets, and the cost per actor, at batch and live prices
    Given an actor "reviewer" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """
    When these calls are made at once:
      | actor    | key           | prompt                   |
      | planner  | plan-issue-42 | Plan issue 42            |
      | reviewer | review-1      | Review the column rename |
    And "lowtide status" runs on the scenario's ledger
    Then the command exits with 0
    And the command printed "1 batch(es), 2 request(s)"
    And the command printed a line for the batch with its state "collected", "2 req" and "succeeded 2"
    And the command printed a line for "plan-issue-42" with its state "collected" and "attempts 1"
    And the command printed a line for "review-1" with its state "collected" and "attempts 1"
    And the command printed each actor's cost at batch and live prices
    And the command printed the total cost at batch prices and what the same calls would have cost live

  Scenario: `lowtide status` counts the answers of a model with no price as of unknown cost, never as free
    Given an actor "pilot" with:
      """
      model: claude-mythos-5-1
      batch_processing: batch
      batch: {poll_interval: 30}
      """
    When these calls are made at once:
      | actor   | key       | prompt             |
      | planner | plan-1    | Plan issue 42      |
      | pilot   | pilot-1   | When is high tide? |
    And "lowtide status" runs on the scenario's ledger
    Then the command exits with 0
    And the command printed "actor pilot: 1 request(s) (collected 1); $0.000000 + 1 answer(s) of unknown cost at batch prices, $0.000000 + 1 answer(s) of unknown cost live"
    And the command printed " + 1 answer(s) of unknown cost at batch prices; the same calls live: $"
    And the command printed a line for the batch, "collected", "2 req", and 1 answer(s) of unknown cost

  Scenario: `lowtide status --actor` shows one actor's calls
    Given an actor "reviewer" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """
    When these calls are made at once:
      | actor    | key           | prompt                   |
      | planner  | plan-issue-42 | Plan issue 42            |
      | reviewer | review-1      | Review the column rename |
    And "lowtide status --actor reviewer" runs on the scenario's ledger
    Then the command exits with 0
    And the command printed "1 batch(es), 1 request(s)"
    And the command printed a line for "review-1" with its state "collected" and "attempts 1"
    And the command did not print "plan-issue-42"

  Scenario: `lowtide status --json` gives the same report as JSON
    When the actor is asked these prompts at once:
      | key           | prompt        |
      | plan-issue-42 | Plan issue 42 |
      | plan-issue-43 | Plan issue 43 |
    And "lowtide status --json" runs on the scenario's ledger
    Then the command exits with 0
    And the command printed JSON with these tickets:
      | key           | actor   | state     | attempts |
      | plan-issue-42 | planner | collected | 1        |
      | plan-issue-43 | planner | collected | 1        |
    And the JSON holds one batch, "collected", with its API id, 2 requests and counts "succeeded 2"
    And the JSON's costs, per ticket, actor, batch and in total, are those of the answers

  Scenario Outline: `lowtide <command>` refuses what the ledger does not know, without calling the API
    When the actor is asked "Plan issue 42" with the key "plan-issue-42"
    And the API's call counts are noted
    And "lowtide <command>" runs on the scenario's ledger
    Then the command exits with <status>
    And the command printed on stderr "<message>"
    And the API received no calls since they were noted

    Examples:
      | command                  | status | message                                                      |
      | collect msgbatch_unknown | 2      | lowtide: No outstanding batch msgbatch_unknown in the ledger |
      | cancel plan-issue-99     | 2      | lowtide: No batch or request 'plan-issue-99' in the ledger   |
      | cancel plan-issue-42     | 1      | is collected; only a batch the API is processing can be canceled. |
