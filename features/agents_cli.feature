Feature: Durable agents across processes: killed anywhere, resumed by `lowtide agents resume --once`
  As a developer whose agent runs are advanced by cron, a process at a time
  I want a run killed at any point to be resumed by the next `lowtide agents resume --once`
  So that every model request is created once and every tool runs at most once, exactly once when it completed

  The agent is `lowtide_agent_examples.triage` (features/plugins): three model turns and two tools, `read_build_log`
  and `post_comment`, whose side effects append a line to a file. Every process killed here is a real one (the program
  that starts the run, and `lowtide agents ...`), reaching the emulated API on a loopback socket; its batches take 60
  seconds of the scenario's clock, which moves only when a step says the batches end. A command that is not killed
  runs in this process, which knows only what the ledger holds, as a new process would (a process boundary proves
  nothing more there). `LOWTIDE_CRASHPOINT` kills a process with SIGKILL at a named point
  (`agent-replayed-step`: as a replay returns a journaled step's result); `AGENT_EXAMPLES_DIE_IN`
  inside a tool, before its side effect.

  Background:
    Given an emulated Anthropic API served on a socket, whose batches take 60 seconds
    And the example agents reach the emulated API on its socket

  Scenario: Killed before a turn's create, after it, after a step's result is stored, during a replay and inside a step: nothing twice
    When a program starts the run "k-1" of "triage" with `LOWTIDE_CRASHPOINT=after-intent`
    Then the process was killed
    When `lowtide agents resume --once` runs in this process, exiting 0
    Then the run "k-1" stands parked
    When the batches end
    And `lowtide agents resume --once` runs in a new process with `LOWTIDE_CRASHPOINT=agent-after-step`
    Then the process was killed
    And the side effects are exactly "read-log flaky test"
    When `lowtide agents resume --once` runs in a new process with `LOWTIDE_CRASHPOINT=after-create`
    Then the process was killed
    When `lowtide agents resume --once` runs in a new process with `LOWTIDE_CRASHPOINT=agent-replayed-step`
    Then the process was killed
    When `lowtide agents resume --once` runs in this process, exiting 0
    Then the run "k-1" stands parked
    And the side effects are exactly "read-log flaky test"
    When the batches end
    And `lowtide agents resume --once` runs in a new process with `AGENT_EXAMPLES_DIE_IN=post_comment`
    Then the process was killed
    When `lowtide agents resume --once` runs in this process, exiting 0
    Then the run "k-1" in-doubt with an error containing "step 3 (lowtide_agent_examples:post_comment) began"
    And `lowtide agents list --json` says the run "k-1" is in-doubt
    And the side effects are exactly "read-log flaky test"
    When `lowtide agents retry k-1` runs in this process, exiting 0
    Then the run "k-1" stands parked
    And the side effects are exactly "read-log flaky test", "comment Emulated rep"
    When the batches end
    And `lowtide agents resume --once` runs in this process, exiting 0
    Then the run "k-1" stands finished
    And `lowtide agents show k-1` lists 5 entries, the last "done"
    And the API created 3 batches, one request each, every custom id once

  Scenario: A stopped run's batch is canceled and it is never advanced; a run whose agent cannot be imported stays parked
    When the run "s-1" of "triage" is started in this program
    Then the run "s-1" stands parked
    When `lowtide agents stop s-1` runs in this process
    Then the run "s-1" stands stopped
    And the batch the run "s-1" waited on was canceled at the API
    Given a parked run "gone-1" of the agent "lowtide_vanished_agents:triage"
    When the batches end
    And `lowtide agents resume --once` runs in this process, exiting 1
    Then the process said on stderr "No module named 'lowtide_vanished_agents'"
    And the run "gone-1" stands parked
    And the run "s-1" stands stopped
    And the side effects are exactly none
    And the API created 1 batches, one request each, every custom id once

  # About 80 s of CPU and 5 to 11 minutes on a loaded machine: in the soak session (`@long`), not the postgres one.
  @postgres @long
  Scenario: 100 runs on PostgreSQL, advanced by two `resume --once` processes at a time and killed at random: nothing twice, nothing lost
    Given LOWTIDE_LEDGER names the scenario's PostgreSQL database
    When the agent "triage" is started as 100 runs at once, each on an issue of its own
    Then the API created 1 batches, of 100 requests
    When rounds of the batches ending and two `lowtide agents resume --once` processes at once, killed at random points, run until every run has ended
    Then every one of the 100 runs ended finished or in doubt, each tool having run once, or at most once in doubt
    And the API created the request of each of the runs' turns once, the start's batch and one a process a round
