Feature: A PostgreSQL ledger rides through an outage of its server
  As an operator whose PostgreSQL server restarts (an upgrade, a failover, a crash) while lowtide's workers use it
  I want their calls to wait for the server and go on, and to fail, saying why, only when it stays away too long
  So that a restart costs a pause, never a failed call nor a request paid twice

  Each scenario has a PostgreSQL database of its own, in a cluster of the feature's own, restarted, stopped and
  started as an operator would (`pg_ctl`), the real clock, and an emulated API on a loopback socket whose counters say
  what was created. Hosts are separate processes (LOWTIDE_HOST_ID), each with its own connections, listener and
  heartbeat. An outage is waited out for a minute unless the ledger's URL says otherwise (`?lowtide_outage_seconds=`,
  or $LOWTIDE_PG_OUTAGE_SECONDS).

  @postgres
  Scenario: A server restarted under 200 calls in flight on two hosts costs a pause, and nothing is created twice
    # The restart comes once the first batch exists: calls are being claimed, gathered into the other host's batch,
    # recorded, created, polled and answered on both hosts. Waiting hosts read the ledger by themselves only every 5
    # minutes: the listener, back with the server, wakes them, for the notices sent meanwhile reached no one.
    Given an emulated API on a socket, whose batches take 2 seconds
    And a PostgreSQL server of the scenario's own
    When hosts "host-a" and "host-b", separate processes, each ask 100 calls on it, one every 0.02 seconds, and once the first batch exists the server is restarted
    Then every call of every host got its emulated reply, none failed
    And each host asked its 100 calls
    And the API created 200 requests in all, each custom id once, in as many batches as the ledger holds
    And the ledger holds 200 requests, each answered, and every batch collected
    And the calls were all answered within 60 seconds of the server's return
    And each host said its ledger was out of reach, and answered again, naming it with its password shown as ***

  @postgres
  Scenario: A server away longer than the outage time fails the calls waiting on it, saying so; a rerun answers them, nothing created again
    Given an emulated API on a socket, whose batches take 2 seconds
    And a PostgreSQL server of the scenario's own, whose ledger waits out an outage for 3 seconds
    When host "host-c", a separate process, asks 20 calls on it, and once their batch exists the server is stopped for 10 seconds or more, until the host has ended
    Then every call failed with a LedgerError saying "its server was out of reach for" and "longer than the 3 s an outage is waited out", naming the server with its password shown as ***
    When host "host-c" asks the same 20 calls again, in a new process
    Then every call of the last host got its emulated reply
    And the API created no batch for them but the first

  @postgres
  Scenario: The command line started while the server is away waits for it, and a program's ledger reads on through a restart
    Given an emulated API on a socket, whose batches take 1 seconds
    And a PostgreSQL server of the scenario's own
    And its ledger holds the answered calls of a host that asked 5
    When the server is stopped, `lowtide status` is run on the ledger, and the server is started 2 seconds after the command said it was out of reach
    Then the command listed the 5 requests, exiting with 0, and said the ledger was out of reach, then answered again
    When a program's ledger reads the requests, the server is restarted, and it reads them again
    Then it read the same 5 requests both times

  @postgres
  Scenario: Every transaction of the ledger made again once it has committed, as after an outage at COMMIT, changes nothing a user sees
    # The hard case of an outage: the server goes away as it commits, the commit applied, its answer lost, and the
    # work made again on a new connection. Here every transaction is: each claim, intent, gathering of the other
    # host's calls, status, result stored and lease is made a second time once it has committed.
    Given an emulated API on a socket, whose batches take 1 seconds
    And every transaction of the PostgreSQL ledger is made a second time once it has committed
    And host "host-a" runs an actor on the scenario's PostgreSQL ledger, gathering calls for 0.2 seconds
    And host "host-b" runs an actor on the scenario's PostgreSQL ledger, gathering calls for 1 seconds
    When host "host-a" asks for the keys "a-1" to "a-5" while host "host-b" asks for "b-1" to "b-5"
    Then both hosts got the emulated replies for their 5 keys
    And the API created 1 batch, with each custom id once
    And that batch holds the 10 requests of both hosts
    And the ledger's sums count 10 answers, each once, at the batch's price

  @postgres
  Scenario: A program's listener and heartbeat ride through a stop of the server: each loss said once, watchers woken and leases renewed on its return
    # In the test's own process: its listener of batches' notices and its heartbeat are threads of their own, each
    # trying again, soon, until the server answers.
    Given a PostgreSQL server of the scenario's own
    And a program's ledger on it keeps the lease of "owner-1" for 3 seconds and watches batch "batch-1"
    When the server is stopped until the program has said it lost the ledger's notices and could not renew its leases
    And the server is started again
    Then the program said it listens to the ledger's notices again, and the watcher of "batch-1" was woken
    And the lease of "owner-1" is renewed past the server's return
