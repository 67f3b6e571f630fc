@stores
Feature: A ledger claims only its own batches, even beside another ledger with the same inputs and API key
  As a team whose programs keep separate ledgers (two machines, each with its own file) but share one API key
  I want every custom id to carry its ledger's identity, and a reconciliation to keep only batches that hold its own
  So that no ledger takes the other's batch for its own, and each pays once, for its own requests

  The Message Batches API shows a batch's custom ids only in its results, once it has ended: a create of "west" whose
  outcome is unknown, with "east"'s batch of the same size as the only candidate, adopts it, and finds out when its
  results arrive. "east" and "west" ask the same prompts, so their requests have the same (derived) keys.

  Background:
    Given an emulated Anthropic API whose batches take 3 seconds
    And lowtide's engine log is kept
    And two ledgers, "east" (the scenario's) and "west", each with an actor of that name on the same API key:
      """
      batch_processing: batch
      batch: {poll_interval: 1, coalesce_window: 0.2, reconcile_grace: 8}
      """

  Scenario: The two ledgers have identities of their own, and the same request carries a custom id of each's
    Then the ledgers "east" and "west" have identities of 12 hex digits, different from each other
    And the request "question 1" has the same key in "east" and in "west", and a custom id of each ledger's own

  Scenario: A create that never reached the API is not reconciled to the other ledger's batch of the same inputs
    When "east" asks "question 1, question 2" with run_many
    Given the API will fail the next "batches.create" call with status 500
    When "west" asks "question 1, question 2" with run_many
    Then each run_many call got the emulated replies to "question 1, question 2", in order
    And the API created each request of "east" and of "west" exactly once: 4 requests, in 2 batches
    And the API received these calls:
      | call           | count |
      | batches.create | 3     |
    And "west" keeps the batch of "east" apart as foreign, storing and counting nothing of it
    And each ledger's answers came from batches holding its own requests alone, and it counts their cost alone
    And the log says "holds none of this ledger's requests: it is another's"

  Scenario: A create whose answer was lost is told apart from the other ledger's batch by the custom ids in the results
    When "east" asks "question 1, question 2" with run_many
    Given the API will commit the next batch but drop the connection before answering
    When "west" asks "question 1, question 2" with run_many
    Then each run_many call got the emulated replies to "question 1, question 2", in order
    And the API created each request of "east" and of "west" exactly once: 4 requests, in 2 batches
    And "west" never adopted the batch of "east"
    And each ledger's answers came from batches holding its own requests alone, and it counts their cost alone
    And the log says "holds no request of an unresolved intent; it is not lowtide's"
