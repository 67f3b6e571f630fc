@stores
Feature: Collecting and cancelling parked batches from the command line
  As an operator of programs that park their batch calls
  I want `lowtide collect` and `lowtide cancel` to reach the API named in the ledger, with the key from my environment
  So that I can fetch finished work or stop unwanted spending without writing a program

  Background:
    Given an emulated Anthropic API served on a socket, whose batches take 120 seconds
    And an actor "planner" that reaches it with the key in "LOWTIDE_SCENARIO_KEY", with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """

  Scenario: `lowtide collect` stores the results of ended batches and says where each batch stands
    Given the actor parked "Plan issue 42" with the key "plan-issue-42", in a program that then ended
    And the API's batches take 3600 seconds from now on
    And the actor parked "Plan issue 43" with the key "plan-issue-43", in a program that then ended
    When 200 more seconds pass
    And "lowtide collect --api-key-env LOWTIDE_SCENARIO_KEY" runs on the scenario's ledger
    Then the command exits with 0
    And the command printed the batch of the ticket "plan-issue-42" as "collected"
    And the command printed the batch of the ticket "plan-issue-43" as "waiting-on-batch"
    And lowtide status shows these tickets:
      | key           | state            | batch | attempts |
      | plan-issue-42 | collected        | yes   | 1        |
      | plan-issue-43 | waiting-on-batch | yes   | 1        |

  Scenario: `lowtide collect` of one batch, named by its API id, leaves the others alone
    Given the actor parked "Plan issue 42" with the key "plan-issue-42", in a program that then ended
    And the actor parked "Plan issue 43" with the key "plan-issue-43", in a program that then ended
    When 200 more seconds pass
    And "lowtide collect" of the batch of the ticket "plan-issue-43" runs with the key in "LOWTIDE_SCENARIO_KEY"
    Then the command exits with 0
    And lowtide status shows these tickets:
      | key           | state            | batch | attempts |
      | plan-issue-42 | waiting-on-batch | yes   | 1        |
      | plan-issue-43 | collected        | yes   | 1        |

  Scenario: `lowtide cancel` stops a parked call's batch; `lowtide collect` then records its request canceled
    Given the API's batches take 3600 seconds from now on
    And the actor parked "Plan issue 42" with the key "plan-issue-42", in a program that then ended
    When "lowtide cancel plan-issue-42 --api-key-env LOWTIDE_SCENARIO_KEY" runs on the scenario's ledger
    Then the command exits with 0
    And the command printed that cancelling the batch of the ticket "plan-issue-42" was requested
    When "lowtide collect --api-key-env LOWTIDE_SCENARIO_KEY" runs on the scenario's ledger
    Then the command exits with 0
    And the command printed the batch of the ticket "plan-issue-42" as "canceled"
    And lowtide status shows these tickets:
      | key           | state    | batch | attempts |
      | plan-issue-42 | canceled | yes   | 1        |

  Scenario: Without the API key in the environment, `lowtide collect` says which variable to set
    Given the actor parked "Plan issue 42" with the key "plan-issue-42", in a program that then ended
    And the environment variable "LOWTIDE_SCENARIO_KEY" is unset
    When "lowtide collect --api-key-env LOWTIDE_SCENARIO_KEY" runs on the scenario's ledger
    Then the command exits with 2
    And the command printed on stderr "lowtide: No Anthropic API key: set the LOWTIDE_SCENARIO_KEY environment variable"
    And lowtide status shows these tickets:
      | key           | state            | batch | attempts |
      | plan-issue-42 | waiting-on-batch | yes   | 1        |

  Scenario: An actor closed between two calls refuses the next one (issue 60: it used to build its client anew)
    When the actor is asked "Chart the harbour" with the key "one"
    Then the answer is the emulated reply to "Chart the harbour"
    When the actor is closed
    And the actor is asked "Chart the estuary" with the key "two"
    Then the call fails with ActorClosedError
