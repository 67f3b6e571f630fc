@stores
Feature: A third-party batch provider gets everything the built-in one gets
  As the author of a provider plugin for a batch API lowtide does not ship
  I want my provider, registered through the entry-point group, to be driven by lowtide's durable engine
  So that my users get the ledger, keys, coalescing, exactly-once create, park and resume, budgets and bulk runs

  Background:
    Given the plugin batch provider "tidepool" is installed, its batches taking 30 seconds
    And a plugin actor "pool" of the provider "tidepool" with:
      """
      model: tide-1
      batch_processing: batch
      batch: {poll_interval: 10, coalesce_window: 0.5, reconcile_grace: 60}
      """

  Scenario: Concurrent calls are recorded under their keys, travel in one batch, and are answered once
    When 5 calls ask "question {i}" with the keys "k-{i}" at once
    Then each of the 5 calls was answered by tidepool with its question
    And the tidepool API created each of the 5 requests exactly once, in 1 batch
    And the ledger holds 5 succeeded requests of the provider "tidepool", each with its tidepool custom id
    When a new program makes the same 5 calls
    Then each of the 5 calls was answered by tidepool with its question
    And the tidepool API created each of the 5 requests exactly once, in 1 batch

  Scenario: A create whose answer was lost is found by the intent id in its metadata, not sent again
    Given the tidepool API will create the next batch and drop the answer
    When 3 calls ask "question {i}" with the keys "k-{i}" at once
    Then each of the 3 calls was answered by tidepool with its question
    And the tidepool API created each of the 3 requests exactly once, in 1 batch
    And the ledger holds these batches, oldest first:
      | state     | requests | API batch | note                               |
      | collected | 3        | yes       | reconciled after an unknown create |

  Scenario: A create that never reached the API is sent again once, after the grace period
    Given the tidepool API will drop the next create before it arrives
    When 3 calls ask "question {i}" with the keys "k-{i}" at once
    Then each of the 3 calls was answered by tidepool with its question
    And the tidepool API created each of the 3 requests exactly once, in 1 batch
    And the ledger holds these batches, oldest first:
      | state     | requests | API batch | note                                      |
      | failed    | 3        | no        | create never reached the API (reconciled) |
      | collected | 3        | yes       |                                           |

  Scenario: A request the provider fails is that request's own error, kept in the ledger
    Given the tidepool API will fail the request with the key "k-2"
    When 3 calls ask "question {i}" with the keys "k-{i}" at once
    Then the call for "k-2" failed with a BatchRequestErrored saying "rejected: tidepool refused it"
    And the ledger holds these requests:
      | key | state     |
      | k-1 | succeeded |
      | k-2 | failed    |
      | k-3 | succeeded |

  Scenario: A parked call is resumed by a new program, and lowtide collect stores it
    When the actor parks "question 7" with the key "p-7", in a program that then ends
    And 40 more seconds pass
    And lowtide collects the tidepool batches
    Then lowtide status shows these tickets:
      | key | state     | batch | attempts |
      | p-7 | collected | yes   | 1        |
    When a new program's actor "pool" waits for the result of "p-7"
    Then the answer is "tidepool: question 7"

  Scenario: The actor's budget is kept at the plugin's own prices
    Given a plugin actor "thrifty" of the provider "tidepool" with:
      """
      model: tide-1
      batch_processing: batch
      max_cost_usd: 0.0025
      """
    When 3 calls ask "question {i}" with the keys "k-{i}" at once
    Then 2 of the calls were answered and 1 failed with a BudgetExceededError
    And the tidepool API created 2 requests

  Scenario: A bulk run splits its inputs into the plugin's batches and keeps their order
    When the actor maps the prompts "review 1, review 2, review 3, review 4, review 5" in batches of 2
    Then the run's answers are, in order, "tidepool: review 1, tidepool: review 2, tidepool: review 3, tidepool: review 4, tidepool: review 5"
    And the tidepool API created each of the 5 requests exactly once, in 3 batches

  Scenario: A bulk run through a provider whose requests carry the prompt twice builds each request on its own
    Given a plugin actor "echo" of the provider "tidepool" with:
      """
      model: tide-echo
      batch_processing: batch
      batch: {poll_interval: 10, coalesce_window: 0.5, reconcile_grace: 60}
      """
    When the actor maps the prompts "review 1, review 2, review 3" in batches of 2
    Then the run's answers are, in order, "tidepool: review 1, tidepool: review 2, tidepool: review 3"
    And the tidepool API created each of the 3 requests exactly once, in 2 batches
