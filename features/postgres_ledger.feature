Feature: A PostgreSQL ledger, named by URL
  As an operator running live workers on many hosts with one API key
  I want to name one PostgreSQL database as their ledger (`ledger: postgresql://...`, LOWTIDE_LEDGER)
  So that their rate limits are counted together, with the database's password never shown anywhere

  Each scenario tagged @postgres has a database of its own in a throwaway cluster (`nox -s postgres`). The ledger's
  own scenarios (exactly-once, never paying twice, parking, bulk runs: those tagged @stores) run on PostgreSQL too in
  that session; these are what only a database named by URL has.

  @postgres
  Scenario: Live calls keep their quota in the PostgreSQL ledger, and no secret with it
    Given LOWTIDE_LEDGER names the scenario's PostgreSQL database
    And a live API emulated on a virtual clock, answering each call in 2 seconds
    And a live actor with:
      """
      live: {rpm: 100}
      """
    When 5 live calls are made at once
    Then all 5 calls are answered
    And the PostgreSQL database holds one shared quota scope, in which the API key does not appear
    And no SQLite ledger was made

  @postgres
  Scenario: The database sees each process by its host id
    Given LOWTIDE_LEDGER names the scenario's PostgreSQL database
    And LOWTIDE_HOST_ID is "worker-host-7"
    And a live API emulated on a virtual clock, answering each call in 2 seconds
    And a live actor with:
      """
      live: {rpm: 100}
      """
    When 1 live calls are made at once
    Then the database shows a connection named "lowtide worker-host-7"

  @postgres
  Scenario: The schema is versioned, and a database newer than this lowtide is refused
    Given LOWTIDE_LEDGER names the scenario's PostgreSQL database
    And a live API emulated on a virtual clock, answering each call in 2 seconds
    And a live actor with:
      """
      live: {rpm: 100}
      """
    When 1 live calls are made at once
    Then the PostgreSQL database's schema_version is the latest
    When another lowtide has moved the database's schema_version one ahead
    And a new live actor makes a call
    Then the call fails with a ConfigurationError saying "newer than this lowtide understands"

  @postgres
  Scenario: Batch mode on a PostgreSQL ledger records the call in the database, and no secret with it
    Given an actor in batch mode whose ledger is the scenario's PostgreSQL database
    When it makes a call
    Then the call is answered
    And the PostgreSQL database holds the request and its answer, in which the API key does not appear
    And no SQLite ledger was made

  @postgres
  Scenario: A batch call whose ledger write waits on a lock held elsewhere leaves the event loop running
    Given an actor in batch mode whose ledger is the scenario's PostgreSQL database
    And another connection holds the ledger's requests table locked, released by itself after 5 seconds at the latest
    When it starts a call while a ticker counts every 0.01 seconds in the same event loop, for 1 second
    Then the ticker advanced meanwhile at least a quarter as often as it did alone
    And the call is not answered yet: the database shows its write waiting on the lock
    When the other connection commits
    Then the started call is answered within 30 seconds
    And the PostgreSQL database holds the request and its answer, in which the API key does not appear

  @postgres
  Scenario: A ledger written at schema 7 with batches in flight is migrated in place, reads as it did, and sums what it stores after
    # Schema 8 sums the results of a batch of one actor and model without looking each request up: every batch's
    # actors and models are kept (`batch_kinds`, made for every batch by the migration, then by each intent from the
    # queue rows, which carry their request's actor and model). "b9" holds two actors and models; "b10" one, its
    # answer for "l" stored before the migration and stored again here (counted once); "p" waits in the queue.
    Given the scenario's PostgreSQL database holds the ledger lowtide wrote at schema version 7 ("postgres-v7-tables.json")
    When the PostgreSQL ledger is opened by this lowtide
    Then the PostgreSQL database's schema_version is the latest
    And it reads every request, batch member, run item and copied row as schema 7's lowtide read them ("postgres-v7.json")
    When it is copied into a new PostgreSQL database
    Then that copy reads every request, batch member, run item and copied row as it does ("postgres-v7.json")
    When batch "b9" answers "k, m" at 0.125 each, at 120 seconds
    And batch "b10" answers "l, n" at 0.25 each, at 150 seconds
    And a process on host "host-9" gathers the pending calls of scope "scope-2" into batch "b11"
    Then it gathered "p"
    When batch "b11" answers "p" at 0.5 each, at 180 seconds
    Then the sums read
      | minute | batch | actor | model             | answers | failures | cost  | live cost |
      | 0      |       | old   | claude-haiku-4-5  | 1       | 0        | 0.002 | 0.002     |
      | 0      | b1    | old   | claude-haiku-4-5  | 2       | 1        | 0.001 | 0.002     |
      | 0      | b10   | other | claude-sonnet-4-5 | 1       | 0        | 0.25  | 0.5       |
      | 120    | b10   | other | claude-sonnet-4-5 | 1       | 0        | 0.25  | 0.5       |
      | 120    | b9    | old   | claude-haiku-4-5  | 1       | 0        | 0.125 | 0.25      |
      | 120    | b9    | other | claude-sonnet-4-5 | 1       | 0        | 0.125 | 0.25      |
      | 180    | b11   | other | claude-sonnet-4-5 | 1       | 0        | 0.5   | 1         |
    And the sums are those counted again from every result

  @postgres
  Scenario: A ledger written at schema 6 with requests in flight is migrated in place, reads as it did, and goes on
    # Schema 7's intent writes no request row: a request's batch is its latest membership, a pending one a row of the
    # queue of pending requests. Every request of the old ledger keeps its state, batch, attempts and owner.
    Given the scenario's PostgreSQL database holds the ledger lowtide wrote at schema version 6 ("postgres-v6-tables.json")
    When the PostgreSQL ledger is opened by this lowtide
    Then the PostgreSQL database's schema_version is the latest
    And it reads every request, batch member, run item and copied row as schema 6's lowtide read them ("postgres-v6.json")
    When it is copied into a new in-memory ledger, and that into the new SQLite file "copy.sqlite3"
    Then both copies read every request, batch member, run item and copied row as it does ("postgres-v6.json")
    When it is copied into a new PostgreSQL database
    Then that copy reads every request, batch member, run item and copied row as it does ("postgres-v6.json")
    When batch "b2" answers "b" and sends "d" back for a retry
    # The intents here are made by "host:3", which owns "d" (requeued by it) alone: "i" and "g" are still host:1's.
    And "d, i" go into batch "b6"
    And the API takes batch "b6"
    And "g" go into batch "b7"
    Then the requests read
      | key | state            | batch | attempts | owner  |
      | a   | succeeded        | b1    | 1        |        |
      | b   | succeeded        | b2    | 2        |        |
      | c   | failed           | b1    | 1        |        |
      | d   | waiting-on-batch | b6    | 2        |        |
      | e   | pending          |       | 0        |        |
      | f   | submitting       | b4    | 1        |        |
      | g   | pending          |       | 0        | host:1 |
      | h   | pending          |       | 0        | host:2 |
      | i   | pending          |       | 1        | host:1 |
      | j   | succeeded        |       | 1        |        |
    And batch "b6" keeps the trace context its intent carried, and the batches from before the migration keep none
    When a process on host "host-9" gathers the pending calls of scope "scope-1" into batch "b8"
    Then it gathered "e, g, h, i"
    And the requests read
      | key | state      | batch | attempts | owner |
      | e   | submitting | b8    | 1        |       |
      | g   | submitting | b8    | 1        |       |
      | h   | submitting | b8    | 1        |       |
      | i   | submitting | b8    | 2        |       |
    When the create of batch "b8" is refused
    Then the requests read
      | key | state   | batch | attempts | owner |
      | e   | pending |       | 0        |       |
      | i   | pending |       | 1        |       |

  @postgres
  Scenario: A view of the user's own over a column a migration changes stops it, with the view named and what to do, the ledger unchanged
    # PostgreSQL changes no column's type or collation that a view reads (schema 10 makes keys and ids compare byte
    # by byte). The migration is one transaction: refused, it leaves the ledger at its version, every row as it was.
    Given the scenario's PostgreSQL database holds the rows of "postgres-v7-tables.json" in a ledger at schema version 9, and a view "my_report" of its own over the requests' actors
    When the PostgreSQL ledger is opened by this lowtide, and refused
    Then the error is a LedgerError saying "view my_report depends on column" and "Drop it (and any other such view), open the ledger with this lowtide, then make the view again"
    And the PostgreSQL database's schema_version is 9, every row of the ledger as it was, and "my_report" reads them
    When the view "my_report" is dropped
    And the PostgreSQL ledger is opened by this lowtide
    Then the PostgreSQL database's schema_version is the latest
    And it reads every request, batch member, run item and copied row as schema 7's lowtide read them ("postgres-v7.json")

  @postgres
  Scenario: On a database whose locale orders text by a language's rules, the ledger orders its keys byte by byte, as SQLite does
    # Keys, ids and states are not words (schema 10: their columns compare byte by byte, whatever the database's
    # locale). en-US orders "_c, a, B"; Python, SQLite and the ledger "B, _c, a". Comparing them by a language's rules
    # also cost the server 1.7x its CPU a call under "C" (docs/benchmarks.md).
    Given the scenario's PostgreSQL database orders text by ICU's "en-US" rules
    And an actor in batch mode whose ledger is the scenario's PostgreSQL database
    When it makes calls keyed "a, B, _c" together
    Then the ledger lists its requests in the order "B, _c, a", as the SQLite ledger does
    And every column of the ledger's tables that holds a name, key or state compares byte by byte

  @postgres
  Scenario: A wrong password is said without the password, in the error and in every log line
    Given a live actor whose ledger is the scenario's PostgreSQL database, with the wrong password "s3cr%40t-wrong"
    And every log record of every logger is captured
    When it makes a call
    Then the call fails with a LedgerError saying "password authentication failed"
    And the message names the database with its password shown as ***
    And neither the password nor its decoded form appears in the error or in any log record

  @postgres
  Scenario: A database that cannot be reached is said, once its outage time is over, without the password
    # Nothing listens: as while a server restarts, the connection is refused and tried again, here for 1 second
    # (`lowtide_outage_seconds=1` in the URL; a minute by default).
    Given a live actor whose ledger is a PostgreSQL database on a port where nothing listens, password "hunter2-pw", its outages waited out for 1 second
    And every log record of every logger is captured
    When it makes a call
    Then the call fails with a LedgerError saying "could not keep the live quota: its server was out of reach for"
    And the message says "longer than the 1 s an outage is waited out" and "Connection refused"
    And a warning said the ledger was out of reach, naming it with its password shown as ***
    And neither the password nor its decoded form appears in the error or in any log record

  @postgres
  Scenario Outline: A URL libpq cannot use is said at the first call, not waited out as an outage
    # libpq refuses such a URL before it reaches any server, with no SQLSTATE, as it does a refused connection: told
    # apart by what it says, it fails the first call at once rather than after the outage time (a minute here).
    Given a live actor whose ledger is the scenario's PostgreSQL database, its URL's port "<port>" and query "<query>"
    When it makes a call
    Then it failed within 10 seconds, nothing sent to the API
    And the call fails with a LedgerError saying "<reason>"
    And the message says "could not keep the live quota" and "postgresql://lowtide:***@127.0.0.1:"

    Examples:
      | port     | query                         | reason                                                          |
      | notaport | connect_timeout=10            | invalid integer value "notaport" for connection option "port"   |
      | 99999    | connect_timeout=10            | invalid port number: "99999"                                    |
      | PORT     | sslmode=requir                | invalid sslmode value: "requir"                                 |
      | PORT     | target_session_attrs=primery  | invalid target_session_attrs value: "primery"                   |
      | PORT     | port=PORT,1                   | could not match 2 port numbers to 1 hosts                       |
      | PORT     | sslmod=require                | invalid URI query parameter: "sslmod"                           |

  @postgres
  Scenario Outline: The ledger commands say a PostgreSQL ledger they cannot reach without showing its password
    Given LOWTIDE_LEDGER is "<env>"
    When "<command>" runs without a ledger
    Then the command exits with 2
    And on stderr, the command says the ledger "postgresql://ops:***@127.0.0.1:9/lowtide?lowtide_outage_seconds=0.5" could not be opened
    And "hunter2" appears nowhere in the command's output

    Examples:
      | command                                                                                        | env                                                                    |
      | lowtide status --ledger postgresql://ops:hunter2@127.0.0.1:9/lowtide?lowtide_outage_seconds=0.5 | ledger.sqlite3                                                         |
      | lowtide runs                                                                                   | postgresql://ops:hunter2@127.0.0.1:9/lowtide?lowtide_outage_seconds=0.5 |

  Scenario Outline: Without psycopg installed, a PostgreSQL ledger is refused with how to install it, and no password
    Given psycopg is not installed
    And LOWTIDE_LEDGER is "<env>"
    When "<command>" runs without a ledger
    Then the command exits with 2
    And the command printed on stderr "A PostgreSQL ledger needs psycopg: pip install 'lowtide[postgres]'."
    And "hunter2" appears nowhere in the command's output

    Examples:
      | command                                                              | env                                          |
      | lowtide status --ledger postgresql://ops:hunter2@127.0.0.1:9/lowtide | ledger.sqlite3                               |
      | lowtide runs                                                         | postgresql://ops:hunter2@127.0.0.1:9/lowtide |
      | lowtide ledger copy postgresql://ops:hunter2@h/db copy.sqlite3       | ledger.sqlite3                               |


  @postgres
  Scenario: A program that ends while the ledger's connection pool is at work exits
    # psycopg_pool's async workers catch a cancellation that lands in the middle of a task of theirs and wait for the
    # next one: a loop ended by cancelling its tasks alone would wait for them forever.
    When a program opens the PostgreSQL ledger's connection pool, gives its workers a task of an hour and returns
    Then the program exits within 15 seconds of returning, with status 0

  @postgres
  Scenario Outline: An intent PostgreSQL ends in a deadlock is recorded again, whole, through the <face> store
    # Two processes' intents can meet in a circle of row locks on the queue of pending requests (a statement's
    # recheck of a row another process changed keeps its lock). PostgreSQL ends one transaction of the circle; that
    # one is rolled back whole and changed nothing, so it is recorded again, and no call fails for it. Here the other
    # side of the circle is a plain transaction, locking the queue's last request, then its first.
    Given a PostgreSQL ledger holding 1001 requests claimed and queued by "host-a"
    And another transaction holds the queued request last in key order
    When "host-a" starts recording a batch of all of them through the <face> store
    And once that write waits on the other transaction, the other asks for the queued request first in key order
    Then the other transaction is given it while still holding the last: PostgreSQL ended the intent's transaction
    When the other transaction commits
    Then the batch is recorded with all 1001 requests as its members, and the write raised no error

    Examples:
      | face  |
      | sync  |
      | async |

  @postgres
  Scenario Outline: An intent begun while another host gathers its scope waits for the gathering and leaves out what it took, through the <face> store
    # Hosts whose windows close together: one gathers the scope's pending calls while the others write their
    # intents. Had an intent gone first, the gathering would have skipped the rows it held and taken the rest: the
    # calls split over two or three batches. Waiting, each call goes in the gatherer's one batch.
    Given a PostgreSQL ledger holding 10 requests claimed and queued by "host-b"
    And host "host-a" has begun gathering their scope, and not yet taken any call
    When "host-b" starts recording a batch of all of them, of their scope, through the <face> store
    Then that write waits for the gathering
    When that gathering goes on and ends
    Then the gathering took all 10 calls for "host-a"
    And the write recorded no batch: it left all of them out

    Examples:
      | face  |
      | sync  |
      | async |
