@stores
Feature: A Mistral actor's batches from the command line: lowtide status, collect, cancel and run
  As an operator whose programs park Mistral batch calls, or who has a file of inputs for a Mistral model
  I want `lowtide status`, `collect`, `cancel` and `run` to work for a Mistral actor as for any other
  So that I can see, fetch, stop or send Mistral batch work without writing a program

  Every call goes through mistralai to the emulator's Mistral API on a loopback socket, on the scenario's clock.

  Background:
    Given an emulated Mistral API served on a socket, whose jobs take 120 seconds
    And a Mistral actor "tides" that reaches it with the key in "LOWTIDE_SCENARIO_KEY", with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """

  Scenario: `lowtide status` shows a parked Mistral call, and `lowtide collect` stores its answer once its job ends
    Given the actor parked "When is high tide?" with the key "high", in a program that then ended
    When "lowtide status" runs on the scenario's ledger
    Then the command exits with 0
    And the command printed a line for "high" with its state "waiting-on-batch" and "attempts 1"
    When 200 more seconds pass
    And "lowtide collect --api-key-env LOWTIDE_SCENARIO_KEY" runs on the scenario's ledger
    Then the command exits with 0
    And the command printed the batch of the ticket "high" as "collected"
    When "lowtide status" runs on the scenario's ledger
    Then the command printed a line for "high" with its state "collected" and "attempts 1"
    And the command printed each actor's cost at batch and live prices

  Scenario: `lowtide cancel` stops a parked Mistral call's job; `lowtide collect` then records its request canceled
    Given the API's batches take 3600 seconds from now on
    And the actor parked "When is high tide?" with the key "high", in a program that then ended
    When "lowtide cancel high --api-key-env LOWTIDE_SCENARIO_KEY" runs on the scenario's ledger
    Then the command exits with 0
    And the command printed that cancelling the Mistral job of the ticket "high" was requested, the job now "ended"
    When "lowtide collect --api-key-env LOWTIDE_SCENARIO_KEY" runs on the scenario's ledger
    Then the command exits with 0
    And the command printed the batch of the ticket "high" as "canceled"
    And lowtide status shows these tickets:
      | key  | state    | batch | attempts |
      | high | canceled | yes   | 1        |
