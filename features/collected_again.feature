@stores
Feature: A batch collected again stores only what the ledger lacks
  As a developer whose run was stopped while a batch's results were being stored (killed, or its download broken)
  I want the batch collected again to read and store only the results the ledger does not hold yet
  So that resuming pays nothing twice and does no work twice: every answer stored once, counted once, handed out

  The ledger says which of a batch's requests have a final result from it stored (`stored_finals`, read once per
  collection); their lines in the download are neither made into outcomes nor stored again. The crash suites
  (`robot/crash_recovery.robot`) kill a process while it stores a batch's results and check the same of the next.

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
