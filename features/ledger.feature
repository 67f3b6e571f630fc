@stores
Feature: The ledger: a durable record of every batch and request
  As a developer whose batch calls outlive the program that made them
  I want every batch and request recorded in a local SQLite file that I can place, that survives upgrades, and
  that holds no secret
  So that any later program can pick up, inspect and account for my batch work, safely

  Background:
    Given an emulated Anthropic API whose batches take 120 seconds

  @sqlite
  Scenario: A new ledger is a SQLite database in WAL mode, at schema version 14
    Given an actor "planner" with:
      """
      batch_processing: batch
      """
    When the actor is asked "Plan issue 42"
    Then the answer is the emulated reply to "Plan issue 42"
    And the ledger is a SQLite database in WAL mode, at schema version 17, with the tables "agent_journal, agent_runs, batches, batch_members, identity, live_quotas, notice_outbox, request_traces, requests, result_totals, results, run_items, runs, spend_audit, spend_caps, spend_entries, webhook_events"

  @sqlite
  Scenario: An empty file is migrated to the current schema, and then used
    Given an empty file "team.sqlite3"
    When the ledger "team.sqlite3" is opened
    Then the ledger "team.sqlite3" is a SQLite database in WAL mode, at schema version 17, with the tables "agent_journal, agent_runs, batches, batch_members, identity, live_quotas, notice_outbox, request_traces, requests, result_totals, results, run_items, runs, spend_audit, spend_caps, spend_entries, webhook_events"
    Given an actor "planner" with:
      """
      batch_processing: batch
      """
    When the actor, given the ledger "team.sqlite3", is asked "Plan issue 42"
    Then the answer is the emulated reply to "Plan issue 42"
    And the ledger "team.sqlite3" holds the request for "Plan issue 42", succeeded

  @sqlite
  Scenario: A ledger closed in the middle of a program is opened again by its next call
    Given an actor "planner" with:
      """
      batch_processing: batch
      """
    When the actor, given the ledger "team.sqlite3", is asked "Plan issue 42"
    And every ledger the program opened is closed
    And the actor, given the ledger "team.sqlite3", is asked "Plan issue 43"
    Then the answer is the emulated reply to "Plan issue 43"

  @sqlite
  Scenario: A ledger written by a newer lowtide is refused, and left as it is
    Given a SQLite file "newer.sqlite3" at schema version 18
    When the ledger "newer.sqlite3" is opened
    Then opening it failed with LedgerVersionError: "The ledger has schema version 18, newer than this lowtide understands (17); upgrade lowtide."
    And the file "newer.sqlite3" is still at schema version 18, with no tables

  @sqlite
  Scenario: A batch-mode call with a ledger written by a newer lowtide fails before calling the API
    Given a SQLite file "newer.sqlite3" at schema version 18
    And an actor "planner" with:
      """
      batch_processing: batch
      """
    When the actor, given the ledger "newer.sqlite3", is asked "Plan issue 42"
    Then opening it failed with LedgerVersionError: "The ledger has schema version 18, newer than this lowtide understands (17); upgrade lowtide."
    And the API received no calls at all

  @sqlite
  Scenario Outline: `lowtide status` on a file it cannot use as a ledger says why, and exits with 2
    Given <a file> "<name>"
    When "lowtide status" runs on the ledger "<name>"
    Then the command exits with 2
    And the command printed on stderr "lowtide: "
    And the command printed on stderr "<message>"

    Examples:
      | a file                                 | name          | message                                     |
      | a SQLite file at schema version 18 named | newer.sqlite3 | newer than this lowtide understands (17)     |
      | a text file named                      | notes.txt     | notes.txt                                   |

  @sqlite
  Scenario Outline: Where the ledger is kept by default
    Given the environment variable "LOWTIDE_LEDGER" is "<LOWTIDE_LEDGER>"
    And the environment variable "XDG_STATE_HOME" is "<XDG_STATE_HOME>"
    Then the default ledger is "<ledger>"

    Examples:
      | LOWTIDE_LEDGER              | XDG_STATE_HOME | ledger                                 |
      | /srv/agents/ledger.sqlite3  | /var/state     | /srv/agents/ledger.sqlite3             |
      | ~/agents/ledger.sqlite3     |                | ~/agents/ledger.sqlite3                |
      |                             | /var/state     | /var/state/lowtide/ledger.sqlite3      |
      |                             |                | ~/.local/state/lowtide/ledger.sqlite3  |

  @sqlite
  Scenario: Without LOWTIDE_LEDGER, an actor keeps its ledger in the state directory, making the folders it needs
    Given the environment variable "LOWTIDE_LEDGER" is ""
    And the environment variable "XDG_STATE_HOME" is the scenario's folder "state"
    And an actor "planner" with:
      """
      batch_processing: batch
      """
    When the actor is asked "Plan issue 42"
    Then the ledger "state/lowtide/ledger.sqlite3" holds the request for "Plan issue 42", succeeded

  Scenario: The ledger an actor's configuration names is used instead of LOWTIDE_LEDGER's
    Given an actor "planner" in batch mode, whose configuration names the ledger "team.sqlite3"
    When the actor is asked "Plan issue 42"
    Then the ledger "team.sqlite3" holds the request for "Plan issue 42", succeeded
    And no ledger was written where LOWTIDE_LEDGER points

  Scenario: A ledger given to the Actor is used instead of the one its configuration names
    Given an actor "planner" in batch mode, whose configuration names the ledger "team.sqlite3"
    When the actor, given the ledger "mine.sqlite3", is asked "Plan issue 42"
    Then the ledger "mine.sqlite3" holds the request for "Plan issue 42", succeeded
    And there is no file "team.sqlite3"
    And no ledger was written where LOWTIDE_LEDGER points

  Scenario: No API key is ever written to the ledger
    Given an actor "planner" with:
      """
      batch_processing: batch
      batch: {max_attempts: 2}
      """
    And the API will fail the next "batches.create" call with status 401
    When the actor is asked "Plan issue 41"
    And the actor is asked these prompts at once:
      | prompt                                       |
      | Plan issue 42                                |
      | [[emulator:errored]] Plan issue 43           |
      | [[emulator:errored:overloaded_error]] Plan 44 |
    Then the ledger's files hold "Plan issue 42" and "overloaded_error", but not the API key, nor any part of it

  @sqlite
  Scenario: The ledger's files can be read and written by their owner alone
    Given an actor "planner" with:
      """
      batch_processing: batch
      """
    When the actor is asked "Plan issue 42"
    Then the ledger's files, its WAL and shared-memory files included, are readable by their owner alone

  @sqlite
  Scenario: A thousand requests claimed in one call are written in one transaction
    Given an empty ledger "bulk.sqlite3"
    When 1000 new requests are claimed in the ledger "bulk.sqlite3" in one call
    Then the ledger "bulk.sqlite3" holds the 1000 requests, pending, as they were claimed
    And the claim was written to "bulk.sqlite3" in 1 transaction

  Scenario: Claiming keys the ledger knows leaves their requests as they were
    Given an empty ledger "bulk.sqlite3"
    When 3 new requests are claimed in the ledger "bulk.sqlite3" in one call
    And the same 3 keys and a new one are claimed again, with other params, by another owner
    Then the claim returned the 3 known requests as they were first claimed, and the new one

  @sqlite
  Scenario: A write that fails halfway leaves the ledger as it was
    Given an empty ledger "bulk.sqlite3"
    When 3 new requests are claimed in the ledger "bulk.sqlite3" in one call
    And a batch intent naming 3 claimed requests and one the ledger never saw is recorded in "bulk.sqlite3"
    Then recording it failed, and "bulk.sqlite3" holds no batch and its 3 requests still pending, as claimed

  @sqlite
  Scenario: Commits leave WAL checkpoints to the ledger's own thread, which runs them once the writes pause
    Given a ledger "busy.sqlite3" in a folder of its own, whose checkpoints wait for writes to pause 0.2 seconds
    When 10 rounds of 500 new requests, with prompts of 200 bytes, are claimed in it, back to back
    Then the ledger's own connection leaves checkpoints to its thread
    And within 10 seconds the database file, without its WAL, holds every request claimed
    And the ledger holds every request claimed

  @sqlite
  Scenario: Writes that never pause are checkpointed all the same, every so often, so the WAL stays small
    Given a ledger "busy.sqlite3" in a folder of its own, whose checkpoints wait for writes to pause 60 seconds, or at most 0.2
    When requests are claimed in it 50 at a time, every 0.02 seconds, for 1.5 seconds
    Then the WAL was checkpointed at least 2 times while the writes went on
    And the database file, without its WAL, holds at least 50 of the requests

  @sqlite
  Scenario: If the checkpoint thread fails, commits checkpoint the WAL themselves again, and nothing is lost
    Given a ledger "busy.sqlite3" in a folder of its own, whose checkpoints wait for writes to pause 0.2 seconds
    And the ledger's folder is then moved elsewhere
    When 10 rounds of 500 new requests, with prompts of 2000 bytes, are claimed in it, back to back
    Then one warning said "go back inline: the checkpoint thread failed (unable to open database file)"
    And the ledger's own connection checkpoints the WAL itself again, every 1000 pages
    And the ledger holds every request claimed
    And the database file, without its WAL, holds at least 2500 of the requests

  @sqlite
  Scenario: Closing a ledger stops its checkpoint thread and leaves no WAL behind
    Given a ledger "busy.sqlite3" in a folder of its own, whose checkpoints wait for writes to pause 60 seconds
    When 2 rounds of 100 new requests, with prompts of 200 bytes, are claimed in it, back to back
    And the checkpointed ledger is closed
    Then its checkpoint thread has stopped, and no WAL file is left beside the database

  @sqlite
  Scenario: A program that used the ledger and exits without closing anything exits at once and leaves no -wal or -shm file
    When a program answers 20 batch-mode calls through the ledger "exit.sqlite3" and returns without closing anything
    Then the program exited with code 0 within 30 seconds of answering
    And the program answered 20 calls
    And the folder of "exit.sqlite3" holds no "-wal" or "-shm" file, and the ledger holds 20 succeeded requests

  @sqlite
  Scenario: A ledger written by the release before the provider-neutral phases opens, migrated, with every answer readable
    Given a copy of "ledger-v2.sqlite3", a ledger lowtide wrote at schema version 2
    And an actor "old" with:
      """
      batch_processing: batch
      model: claude-haiku-4-5
      """
    When the actor, given the ledger "ledger-v2.sqlite3", reads back every stored answer
    Then the ledger "ledger-v2.sqlite3" is a SQLite database in WAL mode, at schema version 17, with the tables "agent_journal, agent_runs, batches, batch_members, identity, live_quotas, notice_outbox, request_traces, requests, result_totals, results, run_items, runs, spend_audit, spend_caps, spend_entries, webhook_events"
    And the answers read back are the emulated replies to "old question 0, old question 1, old question 2, old question 3, old question 4, review 0, review 1, review 2, review 3"
    And reading back "old-errored" raised a BatchRequestErrored saying "invalid_request_error: bad request"
    And the ledger "ledger-v2.sqlite3" holds batches in the phases "ended, ended, ended, running"
    And the API received no calls at all

  @sqlite
  Scenario: A ledger written at schema 5 with requests in flight reads as it did, and its work goes on from there
    Given a copy of "ledger-v5.sqlite3", a ledger lowtide wrote at schema version 5
    When the ledger "ledger-v5.sqlite3" is opened by this lowtide
    Then the ledger "ledger-v5.sqlite3" is a SQLite database in WAL mode, at schema version 17, with the tables "agent_journal, agent_runs, batches, batch_members, identity, live_quotas, notice_outbox, request_traces, requests, result_totals, results, run_items, runs, spend_audit, spend_caps, spend_entries, webhook_events"
    And it reads every request, batch member, run item and copied row as schema 5's lowtide read them ("ledger-v5.json")
    When it is copied into a new in-memory ledger, and that into the new SQLite file "copy.sqlite3"
    Then both copies read every request, batch member, run item and copied row as it does ("ledger-v5.json")
    # The migration gave it an identity; its requests in flight keep the custom ids they were sent with (above), and a
    # request claimed from now on carries the identity. Each copy is a ledger of its own, with an identity of its own.
    And it has an identity made by the migration, kept when it is opened again, and each copy has one of its own
    And a request claimed in it now carries its identity in its custom id, beside those claimed before
    When batch "b2" answers "b" and sends "d" back for a retry
    And "d, i" go into batch "b6"
    And the API takes batch "b6"
    And "g" go into batch "b7"
    And the create of batch "b7" is refused
    Then the requests read
      | key | state            | batch | attempts | owner  |
      | a   | succeeded        | b1    | 1        |        |
      | b   | succeeded        | b2    | 2        |        |
      | c   | failed           | b1    | 1        |        |
      | d   | waiting-on-batch | b6    | 2        |        |
      | e   | pending          |       | 0        |        |
      | f   | submitting       | b4    | 1        |        |
      | g   | pending          |       | 0        |        |
      | h   | pending          |       | 0        | host:2 |
      | i   | waiting-on-batch | b6    | 2        |        |
    # Schema 15 keeps a batch's trace context with its intent: none for the batches before it, each new intent's own.
    And batch "b6" keeps the trace context its intent carried, and the batches from before the migration keep none

  @sqlite
  Scenario: A ledger written before results were appended (schema 4) opens, migrated, with every answer readable
    Given a copy of "ledger-v4.sqlite3", a ledger lowtide wrote at schema version 4
    And an actor "old" with:
      """
      batch_processing: batch
      model: claude-haiku-4-5
      """
    When the actor, given the ledger "ledger-v4.sqlite3", reads back every stored answer
    Then the ledger "ledger-v4.sqlite3" is a SQLite database in WAL mode, at schema version 17, with the tables "agent_journal, agent_runs, batches, batch_members, identity, live_quotas, notice_outbox, request_traces, requests, result_totals, results, run_items, runs, spend_audit, spend_caps, spend_entries, webhook_events"
    And the answers read back are the emulated replies to "old question 0, old question 1, old question 2, old question 3, old question 4, review 0, review 1, review 2, review 3"
    And reading back "old-errored" raised a BatchRequestErrored saying "invalid_request_error: bad request"
    And the ledger "ledger-v4.sqlite3" holds batches in the phases "ended, ended, ended, running"
    And the API received no calls at all
