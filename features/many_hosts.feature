Feature: Many hosts, one PostgreSQL ledger
  As an operator running lowtide workers on many machines against one API key
  I want them to share one PostgreSQL ledger with the guarantees one process has on SQLite
  So that a key asked on two hosts is paid for once, a batch is polled by one of them, and a host that dies loses
  nothing: another takes its work over once its lease has run out

  Each scenario runs on the real clock, with an emulated API served on a loopback socket, and a PostgreSQL database of
  its own. "Hosts" are told apart by LOWTIDE_HOST_ID: processes of one machine with different host ids know each
  other's liveness only by their leases in the database, as processes on different machines do.

  @postgres
  Scenario: A key asked on two hosts is created once; one host polls its batch, the other is woken by the database
    Given an emulated API on a socket, whose batches take 2 seconds
    And host "host-a" runs an actor on the scenario's PostgreSQL ledger, polling every 0.2 seconds
    And host "host-b" runs an actor on the scenario's PostgreSQL ledger, polling every 100 seconds
    When host "host-a" asks for the keys "k-1" to "k-5", and once their batch exists host "host-b" asks for the same keys
    Then both hosts got the emulated replies for the 5 keys
    And the API created 1 batch, with each custom id once
    And host "host-b" had its answers from the database's notice, long before a timer of its own could fire
    And the ledger holds 5 requests and 1 batch, collected

  @postgres
  Scenario: A host whose thousand calls wait on another host's batch gives the garbage collector back all it kept from it
    # Thousands of calls asking the ledger at once, and the answers a watcher hands out, are kept from the collector's
    # full passes while they wait (`batching/gc_tuning.py`); once the watch has handed every answer out, nothing
    # lowtide froze stays frozen, whichever host's work ended last.
    Given an emulated API on a socket, whose batches take 2 seconds
    And host "host-a" runs an actor on the scenario's PostgreSQL ledger, polling every 0.2 seconds
    And host "host-b" runs an actor on the scenario's PostgreSQL ledger, polling every 100 seconds
    And the garbage collector's freezes are counted
    When host "host-a" asks for the keys "g-1000" to "g-2999", and once their batch exists host "host-b" asks for the same keys
    Then both hosts got the emulated replies for the 2000 keys
    And the API created 1 batch, with each custom id once
    And lowtide froze what was alive while the calls waited
    And the garbage collector sees every object again

  @postgres
  Scenario: Calls waiting on another host's batch end cancelled when their actor closes, not left waiting for it
    # Host "host-b" waits for the results of keys host "host-a" asked (`Actor.result`: the caller's own task waits),
    # watching host "host-a"'s batch (it takes 20 seconds) once, for all its calls waiting on it; closing host
    # "host-b"'s actor ends that watch, and each call waiting there ends cancelled at once, rather than waiting for
    # the batch. Host "host-a" still polls and collects its batch.
    Given an emulated API on a socket, whose batches take 20 seconds
    And host "host-a" runs an actor on the scenario's PostgreSQL ledger, polling every 0.2 seconds
    And host "host-b" runs an actor on the scenario's PostgreSQL ledger, polling every 100 seconds
    When host "host-a" asks for the keys "w-1" to "w-5", and once their batch exists host "host-b" waits for the same keys' results and closes its actor while its watcher of that batch holds them
    Then host "host-b"'s 5 calls all ended cancelled, within 10 seconds of its actor's close
    And host "host-a" got the emulated replies for the 5 keys
    And the API created 1 batch, with each custom id once
    And the ledger holds 5 requests and 1 batch, collected

  @postgres
  Scenario: Calls of a host that start waiting on another host's batch one after another are each woken by the database
    # A host watches a batch another polls once, for all its calls waiting on it: a call that starts waiting while
    # that watch reads the ledger, or after the notice it woke on, is read at its next turn, not left to its timer
    # (here 30 seconds: the batch takes 2).
    Given an emulated API on a socket, whose batches take 2 seconds
    And host "host-a" runs an actor on the scenario's PostgreSQL ledger, polling every 0.2 seconds
    And host "host-b" runs an actor on the scenario's PostgreSQL ledger, polling every 100 seconds
    When host "host-a" asks for the keys "t-10" to "t-49", and once their batch exists host "host-b" asks for the same keys one every 0.07 seconds
    Then both hosts got the emulated replies for the 40 keys
    And the API created 1 batch, with each custom id once
    And host "host-b" had its answers from the database's notice, long before a timer of its own could fire
    And the ledger holds 40 requests and 1 batch, collected

  @postgres
  Scenario: Calls of a host that start waiting on another host's batch after its last notice are answered at once
    # The host's watch of that batch reads each call that starts waiting on it, whatever woke it: here every call's
    # record was read while the batch ran, and the notices were all sent before the calls waited (the watch's timer
    # is 30 seconds).
    Given an emulated API on a socket, whose batches take 2 seconds
    And host "host-a" runs an actor on the scenario's PostgreSQL ledger, polling every 0.2 seconds
    And host "host-b" runs an actor on the scenario's PostgreSQL ledger, polling every 100 seconds
    And host "host-b"'s calls take 3 seconds to decide whether to poll a batch
    When host "host-a" asks for the keys "u-10" to "u-19", and once their batch exists host "host-b" asks for the same keys one every 0.01 seconds
    Then both hosts got the emulated replies for the 10 keys
    And the API created 1 batch, with each custom id once
    And host "host-b" had its answers from the database's notice, long before a timer of its own could fire

  @postgres
  Scenario: A call that comes to wait on another host's batch after the watch read past its result is answered at once
    # A host's watch of a batch reads, at each notice, only the results stored since its cursor: a call whose result
    # it read before the call came to wait (here each but the first comes 0.3 seconds after) has its state read when
    # it registers, not left to the watch's timer (30 seconds).
    Given an emulated API on a socket, whose batches take 2 seconds
    And host "host-a" runs an actor on the scenario's PostgreSQL ledger, polling every 0.2 seconds
    And host "host-b" runs an actor on the scenario's PostgreSQL ledger, polling every 100 seconds
    And host "host-b"'s calls after its first come to wait on a batch only once its watch has read past their results
    When host "host-a" asks for the keys "v-10" to "v-19", and once their batch exists host "host-b" asks for the same keys one every 0.01 seconds
    Then both hosts got the emulated replies for the 10 keys
    And the API created 1 batch, with each custom id once
    And host "host-b" had its answers from the database's notice, long before a timer of its own could fire

  @postgres
  Scenario: Calls made on two hosts at the same moment travel in one batch, sent by the host whose window closes first
    Given an emulated API on a socket, whose batches take 1 seconds
    And host "host-a" runs an actor on the scenario's PostgreSQL ledger, gathering calls for 0.2 seconds
    And host "host-b" runs an actor on the scenario's PostgreSQL ledger, gathering calls for 1.5 seconds
    When host "host-a" asks for the keys "a-1" to "a-5" while host "host-b" asks for "b-1" to "b-5"
    Then both hosts got the emulated replies for their 5 keys
    And the API created 1 batch, with each custom id once
    And that batch holds the 10 requests of both hosts

  @postgres
  Scenario: Calls another host gathered just before this host's intent wait for that host's batch, no record read
    # Host "host-a" gathers host "host-b"'s calls as its window closes and writes its intent 2 seconds later: host
    # "host-b"'s own intent, meanwhile, finds them no longer its, pending in host "host-a"'s hands. One of them is
    # looked at again, by its state alone, until it is in that batch; then the others are found among that batch's
    # members (their states not read again), and all are answered from it: each answer is read once, from the
    # batch's results (no record, no parameters: not at each look, nor for the answer, nor by each call waiting a
    # watch interval, here 30 s).
    Given an emulated API on a socket, whose batches take 1 seconds
    And host "host-a" runs an actor on the scenario's PostgreSQL ledger, gathering calls for 0.2 seconds
    And host "host-b" runs an actor on the scenario's PostgreSQL ledger, gathering calls for 1 seconds
    And the first host to gather waits until "h-1" to "h-5" are claimed and writes its intent 2 seconds later; the other gathers nothing
    And the hosts' reads of requests' records and states are counted
    When host "host-a" asks for the keys "g-1" to "g-5" while host "host-b" asks for "h-1" to "h-5"
    Then both hosts got the emulated replies for their 5 keys
    And the API created 1 batch, with each custom id once
    And that batch holds the 10 requests of both hosts
    And no request's record was read: the answers of "h-1" to "h-5" were read from their batch's results, once each
    And the states of "h-1" to "h-5", but one, were read once each

  @postgres
  Scenario: Calls another host gathered are looked at no more once their callers gave them up
    # Host "host-a" gathers host "host-b"'s calls and writes its intent 6 seconds later. Host "host-b"'s intent finds
    # them pending in host "host-a"'s hands and looks at them again, soon at first, then less and less often; its
    # callers give them up after 2 seconds (and not before it looked once): from then on their states are not looked
    # at again (nothing waits on them), and host "host-a"'s batch still holds each request once.
    Given an emulated API on a socket, whose batches take 1 seconds
    And host "host-a" runs an actor on the scenario's PostgreSQL ledger, gathering calls for 0.2 seconds
    And host "host-b" runs an actor on the scenario's PostgreSQL ledger, gathering calls for 1 seconds
    And the first host to gather waits until "h-1" to "h-5" are claimed and writes its intent 6 seconds later; the other gathers nothing
    And the hosts' reads of requests' records and states are counted
    When host "host-a" asks for the keys "g-1" to "g-5" while host "host-b" asks for "h-1" to "h-5", giving them up after 2 seconds, once their states have been looked at
    Then host "host-a" got the emulated replies for its 5 keys, the other host none
    And the API created 1 batch, with each custom id once
    And that batch holds the 10 requests of both hosts
    And no state of "h-1" to "h-5" was asked for after their callers gave them up

  @postgres
  Scenario: Calls that wait on another host's batch while it is being created have their states read once
    # Host "host-b"'s intent finds its calls in host "host-a"'s batch, which the ledger says is being created for 2
    # seconds: they are watched from the results' cursor taken before their states were read, not read again when
    # they register nor when the batch is created (a call leaves a batch with no result only if its create fails),
    # and answered from the batch's results, no record read.
    Given an emulated API on a socket, whose batches take 1 seconds
    And host "host-a" runs an actor on the scenario's PostgreSQL ledger, gathering calls for 0.2 seconds
    And host "host-b" runs an actor on the scenario's PostgreSQL ledger, gathering calls for 1 seconds
    And the first host to gather waits until "h-1" to "h-5" are claimed and records its batch created 2 seconds after creating it; the other gathers nothing
    And the hosts' reads of requests' records and states are counted
    When host "host-a" asks for the keys "g-1" to "g-5" while host "host-b" asks for "h-1" to "h-5"
    Then both hosts got the emulated replies for their 5 keys
    And the API created 1 batch, with each custom id once
    And that batch holds the 10 requests of both hosts
    And no state of "h-1" to "h-5" was read more than once
    And no request's record was read: the answers of "h-1" to "h-5" were read from their batch's results, once each

  @postgres
  Scenario: Calls another host gathered while they were queued here travel in this host's batch, each once
    Given an emulated API on a socket, whose batches take 1 seconds
    And host "host-a" runs an actor on the scenario's PostgreSQL ledger, gathering calls for 1 seconds
    When host "host-a" asks for the keys "q-1" to "q-3", and while its window is open another host gathers them and stops before its intent
    Then host "host-a" got the emulated replies for the 3 keys
    And the API created 1 batch, with each custom id once

  @postgres
  Scenario: A call another host saw waiting on a batch, looked at again once that batch is collected, downloads nothing
    # The engine's waiters decide whether to poll a batch from a batch record read after their own. A collected batch
    # has no owner, and its lease was free to take: a host whose calls had read their batch as running took it, and
    # downloaded and stored its results a second time (seen in benchmarks/many_hosts.py with three hosts: 166,665
    # results stored for 99,999 requests, each created once).
    Given an emulated API on a socket, whose batches take 2 seconds
    And host "host-a" runs an actor on the scenario's PostgreSQL ledger, polling every 0.2 seconds
    And host "host-b" runs an actor on the scenario's PostgreSQL ledger, polling every 0.2 seconds
    When host "host-a" asks for the keys "r-1" to "r-5", and host "host-b" reads "r-3" while their batch runs
    And once host "host-a" has its answers, host "host-b" waits on "r-3" as it read it
    Then host "host-b" got the emulated reply for "r-3"
    And the API was asked for the batch's results once
    And the ledger holds 5 results and 1 batch, collected

  @postgres
  Scenario: A host killed while it polled a batch: another takes the batch over once its lease has run out
    Given an emulated API on a socket, whose batches take 4 seconds
    And host "host-a" is a separate process that submits the keys "k-1" to "k-3" on the scenario's PostgreSQL ledger with a lease of 2 seconds, and keeps polling
    When host "host-a" is killed with SIGKILL once its batch exists
    And host "host-b" asks for the keys "k-1" to "k-3" with a lease of 2 seconds
    Then host "host-b" got the emulated replies for the 3 keys
    And the API created 1 batch, with each custom id once
    And host "host-b" took the batch over only after host "host-a"'s lease had run out

  @postgres
  Scenario: Work of a host whose lease ran out is taken over by exactly one of the hosts that saw it
    Given the scenario's PostgreSQL ledger holds the pending request "orphan", claimed by host "host-a" whose lease ended
    When 8 processes on other hosts try to take "orphan" over at once
    Then exactly 1 of them took it

  @postgres
  Scenario: A host that stops ends its lease at once: its pending work is free for others without waiting
    Given the scenario's PostgreSQL ledger holds the pending request "handed-on", claimed by host "host-a" while it keeps its lease
    Then another host cannot take "handed-on" over
    When host "host-a" closes its ledger
    Then another host takes "handed-on" over at once

  @postgres
  Scenario: A notice reaches every process listening on the ledger, in whatever event loop it waits
    Given 3 processes listening for the notices of the scenario's PostgreSQL ledger, each waiting on the batch "lt_watched"
    When another process stores results for the batch "lt_watched"
    Then all 3 processes were woken by the notice, long before their guard of 60 seconds

  @postgres
  Scenario: Gathering pending calls skips those another process's intent holds, and a scope another process gathers
    Given the scenario's PostgreSQL ledger holds 200 pending calls of one scope, claimed by host "host-a"
    And another process is putting the calls "call-1" to "call-20" into a batch of its own, its transaction open
    When a process on another host gathers the pending calls of that scope
    Then it took them at once, without waiting for the open transaction
    And it took every call but "call-1" to "call-20", which are still host "host-a"'s
    When another process is gathering the pending calls of that scope, its transaction open
    And a process on a third host gathers the pending calls of that scope
    Then it took none of them, at once

  @postgres
  Scenario: Hosts sending one scope's pending calls at the same moment put each call in exactly one batch
    # Schema 7: a pending call is a row of the queue of pending requests; the intent that takes it deletes that row,
    # guarded by its owner, and a host's gathering takes a row's ownership first. Whoever wins, a call joins one batch.
    Given the scenario's PostgreSQL ledger holds 400 pending calls of one scope, claimed by host "host-a"
    When host "host-a" puts its calls into batches of 40 while 6 processes on other hosts gather them into batches of their own, all at once
    Then every call is in exactly one batch, which the ledger says it is waiting in
