@stores
Feature: A batch collected again stores only what the ledger lacks
  As a developer whose run was stopped while a batch's results were being stored (killed, or its download broken)
  I want the batch collected again to read and store only the results the ledger does not hold yet
  So that resuming pays nothing twice and does no work twice: every answer stored once, counted once, handed out

  The ledger says which of a batch's requests have a final result from it stored (`stored_finals`, read once per
  collection); their lines in the download are neither made into outcomes nor stored again. The crash suites
  (`robot/crash_recovery/`) kill a process while it stores a batch's results and check the same of the next.

  A call that read its request waiting on a batch may come to wait on the batch's collection only after the
  collection handed that request's outcome out (its read was slow, or its result was stored by another process and
  skipped): the collection answers, before it ends, every call still waiting on one of its members whose result is
  final in the ledger, and a call that comes after it ended reads the ledger.

  Scenario Outline: A batch whose download broke half-way is collected again for the rest alone (<provider>, <ledger>)
    Given an emulated <provider> API whose batches take 60 seconds
    And an actor "reader" of the <provider> API in batch mode, on <ledger>
    And 6 prompts "Review {n}"
    And every download of a batch's results will break after 2 lines, 6 times in a row
    When the actor maps the prompts as run "cut"
    Then the run's items are 2 succeeded and 4 waiting on their batch, none failed
    And the ledger holds 1 result for each of "cut-0" to "cut-5" that was answered, 2 in all
    When the actor maps the prompts as run "cut"
    Then every one of the 6 results succeeded
    And the ledger holds 1 result for each of "cut-0" to "cut-5", none stored twice
    And the ledger's sums count 6 answers, costing what the run's answers cost
    And the <provider> API created each request of the run once, in 1 batch

    Examples:
      | provider  | ledger                |
      | Anthropic | the scenario's ledger |
      | OpenAI    | the scenario's ledger |
      | Anthropic | a ledger in memory    |

  Scenario Outline: Calls waiting on requests whose results another process stored get what is stored (<ledger>)
    Given an emulated Anthropic API whose batches take 60 seconds
    And an actor "reader" of the Anthropic API in batch mode, on <ledger>
    And 6 prompts "Review {n}"
    And another process stores the answers "Stored elsewhere 0" and "Stored elsewhere 1" of "share-0" and "share-1" from the batch while the run waits on it
    When the actor maps the prompts as run "share"
    Then every one of the 6 results succeeded
    And results 0 and 1 read "Stored elsewhere 0" and "Stored elsewhere 1", the others the API's answers
    And the ledger holds 1 result for each of "share-0" to "share-5", none stored twice
    And the ledger's sums count 6 answers, costing what the run's answers cost
    And the Anthropic API created each request of the run once, in 1 batch

    Examples:
      | ledger                |
      | the scenario's ledger |
      | a ledger in memory    |

  Scenario Outline: A call that starts waiting once the collection skipped its stored result gets it (<ledger>)
    Given an emulated Anthropic API whose batches take 60 seconds
    And an actor "reader" of the Anthropic API in batch mode, on <ledger>
    And another process stores the answers "Stored elsewhere 0" and "Stored elsewhere 1" of "late-0" and "late-1" from the batch while the run waits on it
    When the actor's batch engine sends 6 prompts "Review {n}" as "late-0" to "late-5" in one batch, and a late call that read one of them waiting on it starts waiting at download 1 of its results, once that one is answered
    Then each of the 6 calls got its answer, "late-0" and "late-1" reading "Stored elsewhere 0" and "Stored elsewhere 1"
    And the late call read its request waiting, and got what its request's call got, within the bounded wait
    And the ledger holds 1 result for each of "late-0" to "late-5", none stored twice

    Examples:
      | ledger                |
      | the scenario's ledger |
      | a ledger in memory    |

  Scenario Outline: A call that starts waiting once its result is handed out, while the batch is still collected, gets it (<ledger>)
    Given an emulated Anthropic API whose batches take 60 seconds
    And an actor "reader" of the Anthropic API in batch mode, on <ledger>
    And a batch's results are stored 2 at a time
    And the next download of a batch's results will break after 2 lines
    When the actor's batch engine sends 6 prompts "Review {n}" as "late-0" to "late-5" in one batch, and a late call that read one of them waiting on it starts waiting at download 2 of its results, once that one is answered
    Then each of the 6 calls got the API's answer
    And the late call read its request waiting, and got what its request's call got, within the bounded wait
    And the ledger holds 1 result for each of "late-0" to "late-5", none stored twice

    Examples:
      | ledger                |
      | the scenario's ledger |
      | a ledger in memory    |
