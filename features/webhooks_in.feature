@stores
Feature: OpenAI's batch webhooks wake the batch's collection
  As a developer whose agents wait on OpenAI batches
  I want OpenAI's `batch.completed` webhook to bring a batch's answers at once, and forged ones to change nothing
  So that a turn ends when its batch does, not at the next status check, with fewer status checks than polling

  # The actor checks every hour (`webhook_poll_interval: 3600`); the emulator's batches end 60 s after their create,
  # on the scenario's virtual clock. A call answered 60 s after its batch was created was answered by the webhook; one
  # answered 3600 s after, by the slow poll underneath.

  Background:
    Given an emulated OpenAI API on a virtual clock whose batches take 60 seconds
    And the OpenAI webhook secret is set
    And an OpenAI actor "tides" waiting on webhooks, its status checked every 3600 seconds
    And the actor's webhook receiver

  Scenario: A verified batch.completed brings the answer as the batch ends, with one status check
    When the actor is asked "When is high tide?" and the batch ends
    And OpenAI sends a signed "batch.completed" event "evt_1" for the batch
    Then the webhook was answered 200 "collecting"
    And the call was answered 60 seconds after its batch was created
    And the API was asked the batch's status 1 time
    And the ledger recorded the event "evt_1" once, for the batch

  Scenario: A webhook ahead of the API's status, for a batch nobody polls, is collected by the receiver once the status agrees
    # The receiver looks at once (30 s before the end: still running), then 1, 2, 4, 8 and 16 s later: the sixth look,
    # 1 s after the end, finds it ended. One look only, as before, would leave it to the next hour's poll.
    Given a caller asked "When is high tide?" and went away after 10 seconds, leaving its batch running
    When OpenAI sends a signed "batch.completed" event "evt_1" for the batch 30 seconds before it ends
    Then the webhook was answered 200 "collecting"
    And the receiver collected the batch 1 seconds after it ended, having asked its status 7 times
    And the caller, asked "When is high tide?" again, is answered from the ledger without a new batch

  Scenario: A lost webhook costs only time: the slow poll underneath answers
    When the actor is asked "When is high tide?" and the batch ends
    Then the call was answered 3600 seconds after its batch was created
    And the ledger recorded no webhook event

  Scenario Outline: A forged, stale or oversized webhook is refused, logged without its body, and changes nothing
    When the actor is asked "When is high tide?" and the batch ends
    And <who> sends a "batch.completed" event "evt_1" for the batch <how>
    Then the webhook was answered <status> "<reason>"
    And the refusal was logged without the body
    And the call was answered 3600 seconds after its batch was created
    And the ledger recorded no webhook event

    Examples:
      | who      | how                                 | status | reason                         |
      | a forger | unsigned                            | 401    | Could not find webhook-signature header |
      | a forger | signed with another secret          | 401    | does not match                 |
      | OpenAI   | signed 10 minutes ago               | 401    | too old                        |
      | OpenAI   | signed 10 minutes ahead             | 401    | too new                        |
      | OpenAI   | padded past 64 KiB                  | 413    | at most 65536 bytes            |

  Scenario: An event delivered twice (a retry, signed again) is acknowledged and acted on once; the same delivery replayed is refused
    When the actor is asked "When is high tide?" and the batch ends
    And OpenAI sends a signed "batch.completed" event "evt_1" for the batch
    And OpenAI sends the event "evt_1" again, signed a second later
    Then the webhook was answered 200 "again"
    When the same delivery of "evt_1" is sent again
    Then the webhook was answered 400 "replayed"
    And the call was answered 60 seconds after its batch was created
    And the API was asked the batch's status 1 time
    And the ledger recorded the event "evt_1" once, for the batch

  Scenario: An event about a batch this ledger does not hold is recorded and ignored
    When the actor is asked "When is high tide?" and the batch ends
    And OpenAI sends a signed "batch.completed" event "evt_9" for the batch "batch_of_another_ledger"
    Then the webhook was answered 200 "not a batch of this ledger"
    And the call was answered 3600 seconds after its batch was created

  Scenario: An event of another kind is acknowledged and changes nothing
    When the actor is asked "When is high tide?" and the batch ends
    And OpenAI sends a signed "response.completed" event "evt_2" for the batch
    Then the webhook was answered 200 "ignored"
    And the call was answered 3600 seconds after its batch was created
    And the ledger recorded no webhook event
