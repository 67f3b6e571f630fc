@stores
Feature: An agent run tells the user's server each state it comes to
  As a developer whose framework waits on durable agent runs
  I want a signed notice POSTed when a run parks, waits on a person, finishes, fails or is stopped
  So that my framework is told the moment a run needs it, by whichever process advanced the run, never with its
  arguments or result

  The agent is `lowtide_agent_examples.triage` (features/plugins), resumed in this process against the emulated API
  (batches take 60 seconds of the scenario's clock). The user's server is a recording receiver on a loopback socket.

  Background:
    Given an emulated Anthropic API whose batches take 60 seconds
    And the example agents use a batch-mode actor "planner" of the scenario's ledger
    And the user's agent notice receiver on a loopback socket, its secret in LOWTIDE_NOTIFY_SECRET

  Scenario: Each state a run comes to is told once, signed, naming the run and its state, never its arguments or result
    When the agent "triage" is started as the run "n-1", notifying the receiver
    And the batches end and the agent runs are resumed once
    And the batches end and the agent runs are resumed once
    And the batches end and the agent runs are resumed once
    Then the run "n-1" is finished, its result beginning "Emulated reply to"
    And the receiver took "agent.parked, agent.parked, agent.parked, agent.finished" for the run "n-1", each verified, each under its own webhook-id
    And no agent notice holds the run's arguments or its result

  Scenario: A notice the receiver did not take is left in the outbox and sent by the next resume pass, under its id
    Given the agent notice receiver refuses its first notice with 503
    When the agent "triage" is started as the run "n-2", notifying the receiver
    And 5 seconds pass and the agent runs are resumed once
    Then the receiver was sent the run "n-2"'s first notice, "agent.parked", twice under one webhook-id, and took it the second time

  Scenario: A stopped run is told
    When the agent "triage" is started as the run "n-3", notifying the receiver
    And the run "n-3" is stopped
    Then the receiver took "agent.parked, agent.stopped" for the run "n-3", each verified, each under its own webhook-id

  Scenario: A run stopped as its batch ends at the API, before the ledger knows, is stopped all the same, and told
    The API refuses the cancel (the batch has ended); the batch is read back, its end recorded, and nothing is left
    to cancel. (Under load the actor's poller could move the scenario's clock past the batch's end so, in the
    scenario above.)
    When the agent "triage" is started as the run "n-5", notifying the receiver
    And the batches end
    And the run "n-5" is stopped
    Then the run "n-5" stands stopped
    And the receiver took "agent.parked, agent.stopped" for the run "n-5", each verified, each under its own webhook-id

  Scenario: A notify whose secret is not set is refused at the start, before the run is recorded
    Given LOWTIDE_NOTIFY_SECRET is not set for the agent notices
    When the agent "triage" is started as the run "n-4", notifying the receiver
    Then the start failed naming "LOWTIDE_NOTIFY_SECRET"
    And the ledger holds no run "n-4"
