@stores
Feature: Each batch's results handed over as the API sent them
  As a developer whose bulk runs keep the API's own results files
  I want each chunk of a batch's results handed to me as the API sent it, once lowtide has stored it
  So that I keep the raw results without downloading them a second time, and lose none of them

  Background:
    Given an emulated Anthropic API whose batches take 120 seconds

  Scenario: Every results line is handed over once, as the API sent it, after its answer is stored
    Given an actor "planner" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """
    And the actor's batch engine hands each chunk of results to a hook
    When the actor is asked these prompts at once:
      | key   | prompt                   |
      | cron  | Plan the cron move       |
      | flags | Plan the flag cache      |
      | hooks | Plan the webhook retries |
    Then every call was answered with the emulated reply to its prompt
    And the hook was given each of these results once, as the API sent them: cron, flags, hooks
    And every result the hook was given was already stored in the ledger when it got it
    And the hook was given the ledger's id and the API's id of the batch

  Scenario: A large batch's results are stored and handed over in chunks that grow, the first answers soon
    Given an actor "planner" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """
    And the actor's batch engine hands each chunk of results to a hook
    And a batch's results are stored 20 at a time at first, then twice as many each time, at most 50
    When the actor is asked 150 numbered questions at once
    Then every call was answered with the emulated reply to its prompt
    And the hook was given each of the 150 results once
    And the hook was given chunks of 20, 40, 50 and 40 results, in that order

  Scenario: A results download broken off and fetched again hands each line over once
    Given the connection will break halfway through the next results download
    And an actor "planner" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """
    And the actor's batch engine hands each chunk of results to a hook
    When the actor is asked 20 numbered questions at once
    Then every call was answered with the emulated reply to its prompt
    And the hook was given each of the 20 results once
    And the API received these calls:
      | call            | count |
      | batches.results | 2     |

  Scenario: A hook that fails does not fail the calls, whose answers are stored all the same
    Given an actor "planner" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """
    And the actor's batch engine hands each chunk of results to a hook that fails
    When the actor is asked these prompts at once:
      | key   | prompt              |
      | cron  | Plan the cron move  |
      | flags | Plan the flag cache |
    Then every call was answered with the emulated reply to its prompt
    And the ledger holds these requests:
      | key   | state     |
      | cron  | succeeded |
      | flags | succeeded |
    And the failure of the hook was logged, naming the batch
