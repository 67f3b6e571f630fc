@stores
Feature: A Gemini actor's batches from the command line: lowtide status, collect, cancel and run
  As an operator whose programs park Gemini batch calls, or who has a file of inputs for a Gemini model
  I want `lowtide status`, `collect`, `cancel` and `run` to work for a Gemini actor as for any other
  So that I can see, fetch, stop or send Gemini batch work without writing a program

  Every call goes through google-genai to the emulator's Gemini API on a loopback socket, on the scenario's clock.

  Background:
    Given an emulated Gemini API served on a socket, whose jobs take 120 seconds
    And a Gemini actor "tides" that reaches it with the key in "LOWTIDE_SCENARIO_KEY", with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """

  Scenario: `lowtide status` shows a parked Gemini call, and `lowtide collect` stores its answer once its job ends
    Given the actor parked "When is high tide?" with the key "high", in a program that then ended
    When "lowtide status" runs on the scenario's ledger
    Then the command exits with 0
    And the command printed "1 batch(es), 1 request(s)"
    And the command printed a line for "high" with its state "waiting-on-batch" and "attempts 1"
    When 200 more seconds pass
    And "lowtide collect --api-key-env LOWTIDE_SCENARIO_KEY" runs on the scenario's ledger
    Then the command exits with 0
    And the command printed the batch of the ticket "high" as "collected"
    When "lowtide status" runs on the scenario's ledger
    Then the command printed a line for "high" with its state "collected" and "attempts 1"
    And the command printed each actor's cost at batch and live prices

  Scenario: `lowtide cancel` stops a parked Gemini call's job; `lowtide collect` then records its request canceled
    Given the API's batches take 3600 seconds from now on
    And the actor parked "When is high tide?" with the key "high", in a program that then ended
    When "lowtide cancel high --api-key-env LOWTIDE_SCENARIO_KEY" runs on the scenario's ledger
    Then the command exits with 0
    And the command printed that cancelling the job of the ticket "high" was requested, the job now "ended"
    When "lowtide collect --api-key-env LOWTIDE_SCENARIO_KEY" runs on the scenario's ledger
    Then the command exits with 0
    And the command printed the batch of the ticket "high" as "canceled"
    And lowtide status shows these tickets:
      | key  | state    | batch | attempts |
      | high | canceled | yes   | 1        |

  Scenario: An API that refuses `lowtide cancel` or `lowtide collect` exits 3; the parked call waits on as it was
    Given the API's batches take 3600 seconds from now on
    And the actor parked "When is high tide?" with the key "high", in a program that then ended
    And the API will fail the next "gemini.batches.cancel" call with status 403
    When "lowtide cancel high --api-key-env LOWTIDE_SCENARIO_KEY" runs on the scenario's ledger
    Then the command exits with 3
    And the command printed on stderr "lowtide: could not cancel high: The caller does not have permission | status 403. Nothing was changed; the batch runs on."
    Given the API will fail the next "gemini.batches.get" call with status 403
    When "lowtide collect --api-key-env LOWTIDE_SCENARIO_KEY" runs on the scenario's ledger
    Then the command exits with 3
    And the command printed on stderr "run lowtide collect again once the API can be reached."
    And lowtide status shows these tickets:
      | key  | state            | batch | attempts |
      | high | waiting-on-batch | yes   | 1        |

  Scenario: Without the API key in the environment, `lowtide collect` says which variable to set
    Given the actor parked "When is high tide?" with the key "high", in a program that then ended
    And the environment variable "LOWTIDE_SCENARIO_KEY" is unset
    When "lowtide collect --api-key-env LOWTIDE_SCENARIO_KEY" runs on the scenario's ledger
    Then the command exits with 2
    And the command printed on stderr "LOWTIDE_SCENARIO_KEY"
    And lowtide status shows these tickets:
      | key  | state            | batch | attempts |
      | high | waiting-on-batch | yes   | 1        |

  Scenario: `lowtide run` sends a JSONL file's prompts through a Gemini actor's batches, one result line each, in order
    Given the API's batches take 0 seconds from now on
    And an actor file "actor.yaml" for that API, with the key in "LOWTIDE_SCENARIO_KEY":
      """
      name: tides
      provider: gemini
      model: gemini-2.5-flash
      max_tokens: 64
      batch_processing: batch
      batch: {poll_interval: 0.05, max_attempts: 1, max_batch_requests: 3}
      """
    And a JSONL file "prompts.jsonl" of 7 prompts
    When "lowtide run prompts.jsonl --actor actor.yaml --run-id gm --out out.jsonl --progress none" runs in the scenario's folder
    Then the command exits with 0
    And the command printed "run gm: 7 item(s): 7 succeeded"
    And "out.jsonl" has 7 lines in order, all succeeded
    And the Gemini API holds 3 batch jobs
