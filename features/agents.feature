@stores
Feature: Durable agents: model turns and steps journaled, replayed, never paid or run twice
  As a developer running an agent whose model turns go through batches
  I want its turns and tool calls journaled in the ledger, the run parked while a batch is out and resumed later
  So that no tool runs twice, nothing is paid twice, and a run never silently does something other than it did

  The agent is `lowtide_agent_examples.triage` (features/plugins): three model turns and two tools whose side
  effects append a line to a file. Here it runs in this process against the emulated API (batches take 60 seconds of
  the scenario's clock); `agents_cli.feature` runs it in processes that are killed.

  Background:
    Given an emulated Anthropic API whose batches take 60 seconds
    And the example agents use a batch-mode actor "planner" of the scenario's ledger

  Scenario: A run parks at each turn, is resumed as its answers come, and every tool runs once
    When the agent "triage" is started as the run "t-1"
    Then the run "t-1" is parked, waiting on the key "t-1/0"
    When the batches end and the agent runs are resumed once
    Then the run "t-1" is parked, waiting on the key "t-1/2"
    When the batches end and the agent runs are resumed once
    Then the run "t-1" is parked, waiting on the key "t-1/4"
    When the batches end and the agent runs are resumed once
    Then the run "t-1" is finished, its result beginning "Emulated reply to"
    And the side effects are "read-log flaky test" and one "comment" line
    And the API created 3 batches, one request each, every custom id once
    And the run's journal holds turn, step, turn, step, turn, each done, the turns' costs adding up to the run's cost
    When the agent "triage" is started as the run "t-1" again
    Then the run "t-1" is finished, its result beginning "Emulated reply to"
    And the API created 3 batches, one request each, every custom id once

  Scenario: Replay that asks for another turn than the journal holds fails the run, naming the position and both
    When the agent "triage" is started as the run "t-2"
    And the batches end and the agent runs are resumed once
    And the agent's code changes its second turn
    And the batches end and the agent runs are resumed once
    Then the run "t-2" failed with an error containing "diverged at position 2"
    And the run "t-2" failed with an error containing "Review the plan again"
    And the API created 2 batches, one request each, every custom id once

  Scenario: A failed step replays as its first error's class where that is a builtin or lowtide's, else as JournaledError naming it
    When the agent "forgiving" is started as the run "e-1"
    And the batches end and the agent runs are resumed once
    And the batches end and the agent runs are resumed once
    And the batches end and the agent runs are resumed once
    Then the run "e-1" is finished, its result beginning "ValueError: no build log; ConfigurationError: no such repository; JournaledError(lowtide.errors.AgentRunError): lowtide.errors.AgentRunError: the run is gone; JournaledError(lowtide_agent_examples.ToolBroke): lowtide_agent_examples.ToolBroke: the tool broke"

  Scenario: A run is one trace, whichever processes advance it: each advance a span of it, its turns' calls within
    Given OpenTelemetry is configured with in-memory exporters
    When the agent "triage" is started as the run "o-1"
    And the batches end and the agent runs are resumed once
    And the batches end and the agent runs are resumed once
    And the batches end and the agent runs are resumed once
    Then the run "o-1" is finished, its result beginning "Emulated reply to"
    And the run "o-1" is one trace: its start's span, and an advance span under it for each of parked, parked, parked and finished

  Scenario: A run id taken by another agent is refused; a step's argument the journal cannot store is refused before it runs
    When the agent "triage" is started as the run "t-3"
    And the agent "other" is started as the run "t-3"
    Then the start was refused with "belongs to the agent lowtide_agent_examples:triage"
    When a step is asked with an argument of type "Path"
    Then the step was refused with "is a pathlib.PosixPath, which the agent's journal cannot store" before it ran

  Scenario: Runs advanced in one pass send their next turns together: one batch a turn for three runs
    When the agent "triage" is started as the runs "c-1", "c-2" and "c-3" at once
    Then the API created 1 batches, of 3 requests
    When the batches end and the agent runs are resumed once
    Then the API created 2 batches, of 3 requests each
    And the runs "c-1", "c-2" and "c-3" are parked, waiting on their keys at position 2

  Scenario Outline: A run whose step outlasts the coalescing window still sends its next turn with the others': <batches>
    When the agent "fetcher" is started as the runs "s-1", "s-2" and "s-3" at once
    And the next build log fetched takes 4 seconds
    And a pass waits at most <bound> seconds for its runs still working
    And the batches end and the agent runs are resumed once
    Then the API created <created>

    Examples:
      | batches                                                   | bound | created                           |
      | one batch for the three second turns                      | 30    | 2 batches, of 3 requests each     |
      | the others' batch sent without the straggler past a bound | 2     | 3 batches, of 3, 2 and 1 requests |

  Scenario: The dashboard's Agents page counts the runs by state and shows a run's timeline: each turn and step, its batch, cost and wait
    When the agent "triage" is started as the run "d-1"
    And the agent "careful" is started as the run "d-2"
    And the batches end and the agent runs are resumed once
    Then the run "d-2" waits on a person, asked "Post the plan as a comment?"
    When the dashboard's Agents page is read, showing the run "d-1"
    Then it counts 1 parked and 1 waiting-on-person run, none in the other states
    And it lists "d-1" parked and "d-2" waiting-on-person, asking "Post the plan as a comment?"
    And the run "d-1"'s timeline is:
      | kind | outcome | batch | cost | waited    |
      | turn | done    | yes   | yes  | over 60   |
      | step | done    | no    | no   | 0         |
      | turn | begun   | yes   | no   | until now |
    When the dashboard's Agents page is read, showing the run "d-9"
    Then it shows no run

  Scenario: A run that asks a person waits for the decision, is approved a day later, and goes on
    When the agent "careful" is started as the run "a-1"
    And the batches end and the agent runs are resumed once
    Then the run "a-1" waits on a person, asked "Post the plan as a comment?"
    And `lowtide agents list --state waiting-on-person --json` lists only the run "a-1", asking "Post the plan as a comment?"
    When a day passes and the agent runs are resumed once
    Then the run "a-1" waits on a person, asked "Post the plan as a comment?"
    And the side effects are exactly none
    When the run "a-1" is approved with the result "LGTM"
    Then the run "a-1" stands parked
    When the agent runs are resumed once
    Then the run "a-1" is finished, its result beginning "posted LGTM"
    And the side effects are exactly "comment LGTM"
    And `lowtide agents show a-1 --json` says its question was approved after 86400 seconds
    And the API created 1 batches, one request each, every custom id once

  Scenario: Denied, a run goes on without the step; a second decision, an unknown run and a run not waiting are refused
    When the agent "careful" is started as the run "a-2"
    And the batches end and are collected
    And `lowtide agents resume --once` runs in this process
    Then the command printed "a-2 waiting-on-person: Post the plan as a comment? {"issue":"flaky test"} (`lowtide agents approve a-2 [--deny]`)"
    And approving the run "a-2" from Python with a path as its result is refused with "the decision's result is a pathlib.PosixPath"
    When `lowtide agents approve a-2 --deny --result '"not today"'` runs in this process
    Then `lowtide agents approve a-2` is refused with "is parked, not waiting on a person: nothing to approve (its question 'Post the plan as a comment? {"issue":"flaky test"}' was denied)"
    When the agent runs are resumed once
    Then the run "a-2" is finished, its result beginning "not posted: not today"
    And the side effects are exactly none
    And `lowtide agents approve a-2` is refused with "is finished, not waiting on a person"
    And `lowtide agents approve nobody` is refused with "No agent run 'nobody'"
    And `lowtide agents approve a-2 --result '{oops'` is refused with "not JSON"
    When the agent "careful" is started as the run "a-3"
    Then `lowtide agents approve a-3` is refused with "is parked, not waiting on a person: nothing to approve."
    And the run "a-3" is parked, waiting on the key "a-3/0"
    When the batches end and the agent runs are resumed once
    And the run "a-3"'s question is decided by an approval whose process died before it moved the run on
    Then `lowtide agents approve a-3 --deny` is refused with "already has a decision"
    When the agent runs are resumed once
    Then the run "a-3" is finished, its result beginning "posted Emulated"

  Scenario: A run's budget covers all its turns: the turn that would cross it is not sent, the run fails naming both
    When the agent "triage" is started as the run "b-1" with a budget of $1
    And the batches end and the agent runs are resumed once
    And the batches end and the agent runs are resumed once
    And the batches end and the agent runs are resumed once
    Then the run "b-1" is finished, its result beginning "Emulated reply to"
    And `lowtide agents list --json` says the run "b-1" spent its turns' cost of its budget "1"
    When the agent "triage" is started as the run "b-2" with a budget of $0.0052
    And the batches end and the agent runs are resumed once
    Then the run "b-2" failed with an error containing "Budget exceeded for agent run 'b-2' (its next turn)"
    And the run "b-2" failed with an error containing "with $0.000087 already spent or committed that crosses the limit of $0.005200. Nothing was sent."
    When the agent "triage" is started as the run "b-3" with a budget of $0.000001
    Then the run "b-3" failed with an error containing "could cost up to $0.005152, and with $0.000000 already spent"
    And the API created 4 batches, one request each, every custom id once
    And the side effects are exactly "read-log flaky test", "comment Emulated rep", "read-log flaky test"

  # Not on PostgreSQL: its store is asked from a thread, and a virtual clock moves on while the loop waits for one
  # (the renewal's write would take virtual minutes); the renewal is the same change on every store.
  @sqlite
  Scenario: A step longer than the lease keeps its run: a process on another host cannot take it over meanwhile
    When the agent "patient" is started as the run "l-1" on the host "host-a", and the host "host-b" tries to take it over 1000 seconds in
    Then the host "host-b" was refused the run "l-1", its lease renewed past then by the host "host-a"
    And the run "l-1" is finished, its result beginning "done after 1500 s"
    And the side effects are exactly "long-job 1500"

  Scenario: A ledger copied to another store carries its agent runs and their journals
    When the agent "triage" is started as the run "m-1"
    And the batches end and the agent runs are resumed once
    And the scenario's ledger is copied into the new SQLite file "copy.sqlite3", and that file into a new in-memory ledger
    Then both copies hold the run "m-1" and its journal of 3 entries as the scenario's ledger does
