Feature: Moving a ledger to another store
  As an operator whose workers outgrew one machine
  I want `lowtide ledger copy` to move everything a SQLite ledger holds into a PostgreSQL database, and back
  So that answers already paid for, runs and batches still out are never lost or paid for twice on the new store

  DATABASE stands for the scenario's PostgreSQL database: its URL, with its password.

  @postgres
  Scenario: A SQLite ledger copied into PostgreSQL answers every key from there, with no call to the API
    Given a SQLite ledger in which an actor answered 12 calls in batch mode, and a bulk run of 5 prompts
    When `lowtide ledger copy ledger.sqlite3 DATABASE` runs
    Then the command exits with 0
    And the command printed "Copied 17 request(s), 2 batch(es), 17 result(s), 1 run(s)"
    And the password of the scenario's database appears nowhere in the command's output
    And an actor on the scenario's database answers the same 12 calls from its ledger: same answers, same costs
    And the API received no more calls
    And the bulk run reads back from the scenario's database with its 5 items succeeded, in order

  @postgres
  Scenario: A copy never writes into a ledger that holds anything
    Given a SQLite ledger in which an actor answered 3 calls in batch mode, and a bulk run of 2 prompts
    And `lowtide ledger copy ledger.sqlite3 DATABASE` has run
    When `lowtide ledger copy ledger.sqlite3 DATABASE` runs
    Then the command exits with 2
    And on stderr, the command says "is not empty" and "nothing was written"
    And the scenario's database holds 5 requests, as after the first copy

  @postgres
  Scenario: A PostgreSQL ledger copied back into a new SQLite file holds the same rows
    Given a SQLite ledger in which an actor answered 4 calls in batch mode, and a bulk run of 3 prompts
    And `lowtide ledger copy ledger.sqlite3 DATABASE` has run
    When `lowtide ledger copy DATABASE back.sqlite3` runs
    Then the command exits with 0
    And "back.sqlite3" holds the same requests, batches, results and runs as "ledger.sqlite3"

  Scenario: A test's in-memory ledger saved to a SQLite file, and that file loaded into memory, hold the same rows
    Given an in-memory ledger in which an actor answered 6 calls in batch mode, and a bulk run of 4 prompts
    When it is copied into the new SQLite file "saved.sqlite3", and that file into a new in-memory ledger
    Then the three ledgers hold the same requests, batches, members, results and runs
    And an actor given the SQLite file "saved.sqlite3" answers the same 6 calls from it, with no call to the API

  @stores
  Scenario: The trace contexts stored with traced calls travel with every copy, on every store
    Given OpenTelemetry is configured with in-memory exporters
    And an in-memory ledger in which an actor answered 3 calls in batch mode, and a bulk run of 2 prompts
    When it is copied into the scenario's ledger, that into the new SQLite file "traced.sqlite3", and that into a new in-memory ledger
    Then every copy holds the trace context of each of the 3 calls, as the in-memory ledger stored it
    And every copy keeps each batch's trace context, as the in-memory ledger stored it

  @stores
  Scenario: Spend by owner travels with every copy: the caps, who owns each request, what it spent, and the audit
    Given an in-memory ledger in which an actor answered 2 calls in batch mode, and a bulk run of 1 prompts
    And that ledger holds spend: a cap on team "research", a settled live call, a released one, and a reservation out
    When it is copied into the scenario's ledger, that into the new SQLite file "spent.sqlite3", and that into a new in-memory ledger
    Then every copy holds the same caps, spend lines and audit as the in-memory ledger
    And every copy still refuses $0.03 more for team "research" and admits $0.02

  Scenario: A copy into a ledger that holds anything is refused, and nothing is written
    Given an in-memory ledger in which an actor answered 2 calls in batch mode, and a bulk run of 1 prompts
    When it is copied into the new SQLite file "saved.sqlite3", and that file into a new in-memory ledger
    Then copying it into "saved.sqlite3" again is refused with "is not empty"
    And copying it into the in-memory copy again is refused with "is not empty"

  Scenario: A ledger an older lowtide wrote is copied as this lowtide reads it, and the file copied from is left as it was
    Given a copy of "ledger-v5.sqlite3", a ledger lowtide wrote at schema version 5
    When `lowtide ledger copy ledger-v5.sqlite3 moved.sqlite3` runs
    Then the command exits with 0
    And the command printed "Copied 10 request(s), 5 batch(es), 5 result(s), 1 run(s)"
    And "ledger-v5.sqlite3" is still, byte for byte, the file lowtide wrote at schema version 5, with nothing beside it
    When the ledger "moved.sqlite3" is opened by this lowtide
    Then it reads every request, batch member, run item and copied row as schema 5's lowtide read them ("ledger-v5.json")

  @postgres
  Scenario: A PostgreSQL ledger an older lowtide wrote is not copied, for that would write to it: the error says what to do
    Given the scenario's PostgreSQL database holds the ledger lowtide wrote at schema version 7 ("postgres-v7-tables.json")
    When `lowtide ledger copy DATABASE moved.sqlite3` runs
    Then the command exits with 2
    And on stderr, the command says "has schema version 7, older than this lowtide's" and "a copy never writes to its source"
    And the scenario's PostgreSQL database still holds its ledger at schema version 7
    And no file "moved.sqlite3" was made
    And the password of the scenario's database appears nowhere in the command's output

  Scenario: Copying a ledger that is not there says so, and makes nothing
    Given a SQLite ledger in which an actor answered 1 calls in batch mode, and a bulk run of 1 prompts
    When `lowtide ledger copy missing.sqlite3 copy.sqlite3` runs
    Then the command exits with 2
    And on stderr, the command says "There is no ledger at" and "missing.sqlite3 to copy."
    And no file "copy.sqlite3" was made
