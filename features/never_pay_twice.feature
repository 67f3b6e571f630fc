@stores
Feature: Reconciliation never guesses, and no call waits on work that died
  As a developer whose creates sometimes fail in ways that leave their outcome unknown
  I want lowtide to adopt a listed batch for an unknown create only when no other unresolved create could own it,
  and to hand every error of its background work to the calls waiting on that work
  So that I never pay twice for the same requests, and no call of mine waits forever

  Background:
    Given an emulated Anthropic API whose batches take 3 seconds
    And lowtide's engine log is kept

  Scenario: An unknown create beside two in-flight creates of the same size adopts nothing that is theirs
    Given the API will fail the next "batches.create" call with status 500
    And the API will answer every create 0.4 seconds after it commits
    # Real time would have the other two creates still in flight when the first is looked for; virtual time needs
    # telling.
    And the API holds its answers to the creates it commits until lowtide first lists the batches
    And an actor "agents" with:
      """
      batch_processing: batch
      batch: {poll_interval: 1, coalesce_window: 0.2, max_batch_requests: 100, reconcile_grace: 8}
      """
    When 300 calls ask "question {i}" with the keys "k-{i}" at once
    Then each of the 300 calls was answered with the emulated reply to its question
    And the API created each of the 300 requests exactly once
    And the API committed 3 batches
    And the ledger holds no unresolved batch
    And the ledger's batches are, in any order:
      | state     | requests | API batch | note                                      |
      | collected | 100      | yes       |                                           |
      | collected | 100      | yes       |                                           |
      | failed    | 100      | no        | create never reached the API (reconciled) |
      | collected | 100      | yes       |                                           |
    When a new program makes the same 300 calls
    Then each of the 300 calls was answered with the emulated reply to its question
    And the API created each of the 300 requests exactly once

  Scenario: Two unknown creates of the same size wait for their batches to end and are told apart by custom ids
    Given the API will commit the next 2 batches but drop the connection before answering
    And the first create waits, before it reaches the API, until lowtide logs "has an unknown outcome"
    And an actor "agents" with:
      """
      batch_processing: batch
      batch: {poll_interval: 1, coalesce_window: 0.2, max_batch_requests: 2, reconcile_grace: 8}
      """
    When 4 calls ask "question {i}" with the keys "k-{i}" at once
    Then each of the 4 calls was answered with the emulated reply to its question
    And the API created each of the 4 requests exactly once
    And the API committed 2 batches
    And each answer came from the API batch its ledger batch adopted, which holds its request
    And the ledger holds these batches, oldest first:
      | state     | requests | API batch | note                               |
      | collected | 2        | yes       | reconciled after an unknown create |
      | collected | 2        | yes       | reconciled after an unknown create |
    And the log says "several intents or batches of the same size: waiting for them to end"

  # Two engines of one process stand for two processes. On PostgreSQL the first window to close gathers the
  # other's calls (coalescing across processes), so the two same-size creates this needs are never made.
  @sqlite
  Scenario: An unknown create waits for another process's create of the same size, then adopts its own batch
    Given an actor "slow" with:
      """
      batch_processing: batch
      batch: {poll_interval: 1, coalesce_window: 0.1, reconcile_grace: 8, watch_interval: 0.5}
      """
    And an actor "unlucky" with:
      """
      batch_processing: batch
      batch: {poll_interval: 1, coalesce_window: 0.3, reconcile_grace: 8, watch_interval: 0.5}
      """
    # Two engines with owners of their own, as two processes on one ledger would be. "slow" records its intent
    # first; its create reaches the API only once "unlucky", whose own create was committed and its answer lost,
    # has seen that a create of the same size is in flight and could own the batch it finds.
    And the first create waits, before it reaches the API, until lowtide logs "a create of the same size is still in flight"
    And the API will commit the next batch but drop the connection before answering
    When "slow" asks "question 1" with the key "a-1" and "unlucky" asks "question 2" with the key "b-1", at once
    Then both calls were answered with the emulated reply to their questions
    And the API created each of the 2 requests exactly once
    And the API committed 2 batches
    And each answer came from the API batch its ledger batch adopted, which holds its request
    And the ledger's batches are, in any order:
      | state     | requests | API batch | note                               |
      | collected | 1        | yes       |                                    |
      | collected | 1        | yes       | reconciled after an unknown create |
    And the request "b-1" is in the batch noted "reconciled after an unknown create"

  # Two engines of one process stand for two processes. On PostgreSQL the first window to close gathers the
  # other's calls (coalescing across processes), so the two same-size creates this needs are never made.
  @sqlite
  Scenario: An unknown create that never reached the API waits for a same-size create in flight, then is sent again
    Given an actor "unlucky" with:
      """
      batch_processing: batch
      batch: {poll_interval: 1, coalesce_window: 0.1, reconcile_grace: 8, watch_interval: 0.5}
      """
    And an actor "slow" with:
      """
      batch_processing: batch
      batch: {poll_interval: 1, coalesce_window: 0.3, reconcile_grace: 8, watch_interval: 0.5}
      """
    # The API lists "slow"'s batch while its create has not come back: it is the only batch "unlucky" could own.
    And the API will fail the next "batches.create" call with status 500
    And the API holds its answer to the first create it commits until lowtide logs "a create of the same size is still in flight"
    When "unlucky" asks "question 1" with the key "a-1" and "slow" asks "question 2" with the key "b-1", at once
    Then both calls were answered with the emulated reply to their questions
    And the API created each of the 2 requests exactly once
    And the API committed 2 batches
    And each answer came from the API batch its ledger batch adopted, which holds its request
    And the ledger's batches are, in any order:
      | state     | requests | API batch | note                                      |
      | failed    | 1        | no        | create never reached the API (reconciled) |
      | collected | 1        | yes       |                                           |
      | collected | 1        | yes       |                                           |
    And the request "a-1" travelled in the batch noted "create never reached the API (reconciled)", then in another

  # Two engines of one process stand for two processes (as above). The interleaving the progress soak met on
  # PostgreSQL: "slow" records its intent and its create is committed while "unlucky"'s first look lists the batches,
  # so the listing holds a batch whose intent was not yet in the ledger when the look began.
  @sqlite
  Scenario: A rival create recorded and committed while an unknown create lists the batches is not adopted for it
    Given an actor "unlucky" with:
      """
      batch_processing: batch
      batch: {poll_interval: 1, coalesce_window: 0.1, reconcile_grace: 8, watch_interval: 0.5}
      """
    And an actor "slow" with:
      """
      batch_processing: batch
      batch: {poll_interval: 1, coalesce_window: 0.1, reconcile_grace: 8, watch_interval: 0.5}
      """
    And the API will fail the next "batches.create" call with status 500
    And "slow" asks "question 2" with the key "b-1" as lowtide first lists the batches, its create answered once lowtide logs "a create of the same size is still in flight"
    When "unlucky" asks "question 1" with the key "a-1", and the call "slow" made meanwhile ends too
    Then both calls were answered with the emulated reply to their questions
    And the API created each of the 2 requests exactly once
    And the API committed 2 batches
    And each answer came from the API batch its ledger batch adopted, which holds its request
    And the ledger's batches are, in any order:
      | state     | requests | API batch | note                                      |
      | failed    | 1        | no        | create never reached the API (reconciled) |
      | collected | 1        | yes       |                                           |
      | collected | 1        | yes       |                                           |
    And the request "a-1" travelled in the batch noted "create never reached the API (reconciled)", then in another

  Scenario Outline: An error in <work> reaches the calls waiting on it, as a classified error
    Given an actor "agents" with:
      """
      batch_processing: batch
      batch: {poll_interval: 1, coalesce_window: 0.2}
      """
    And <setup>
    And the ledger's "<method>" fails once with "<failure>"
    When 3 calls ask "question {i}" with the keys "k-{i}" at once
    Then each of the 3 calls failed with a <error> saying "<message>"
    And the event loop reported no unhandled error

    Examples:
      | work                        | setup                                                   | method           | failure                        | error         | message                                                                    |
      | recording the calls         | the actor answered a first call                         | claim_new        | RuntimeError: disk on fire     | InternalError | lowtide failed while recording the calls in the ledger: RuntimeError: disk on fire |
      | recording the intent        | nothing more                                            | record_intent    | RuntimeError: disk on fire     | InternalError | lowtide failed while creating a batch: RuntimeError: disk on fire |
      | reconciling an unknown create | the API will fail the next "batches.create" call with status 500 | unresolved       | RuntimeError: disk on fire     | InternalError | lowtide failed while reconciling a create whose outcome is unknown: RuntimeError: disk on fire |
      | polling the batch           | nothing more                                            | record_status    | RuntimeError: disk on fire     | InternalError | lowtide failed while waiting for a batch and storing its results: RuntimeError: disk on fire |

    @sqlite
    Examples: SQLite's own errors
      | work                        | setup                                                   | method           | failure                        | error         | message                                                                    |
      | recording the calls         | nothing more                                            | claim_new        | sqlite3: database is locked    | LedgerError   | could not be written: database is locked                                   |
      | storing the results         | nothing more                                            | record_outcomes  | sqlite3: disk I/O error        | LedgerError   | could not be written: disk I/O error                                       |

  Scenario: The coalescing window failing fails the calls it held, and the next call opens a new window
    Given an actor "agents" with:
      """
      batch_processing: batch
      batch: {poll_interval: 1, coalesce_window: 0.2}
      """
    And the clock fails the next wait of 0.2 seconds with "RuntimeError: the clock stopped"
    When 3 calls ask "question {i}" with the keys "k-{i}" at once
    Then each of the 3 calls failed with a InternalError saying "lowtide failed while gathering calls into a batch: RuntimeError: the clock stopped"
    When 3 calls ask "question {i}" with the keys "k-{i}" at once
    Then each of the 3 calls was answered with the emulated reply to its question
    And the API created each of the 3 requests exactly once

  Scenario: A batch created but not recorded is reconciled and adopted, not created again
    Given an actor "agents" with:
      """
      batch_processing: batch
      batch: {poll_interval: 1, coalesce_window: 0.2, reconcile_grace: 8}
      """
    And the ledger's "record_submitted" fails once with "RuntimeError: disk on fire"
    When 3 calls ask "question {i}" with the keys "k-{i}" at once
    Then each of the 3 calls was answered with the emulated reply to its question
    And the API created each of the 3 requests exactly once
    And the ledger holds these batches, oldest first:
      | state     | requests | API batch | note                               |
      | collected | 3        | yes       | reconciled after an unknown create |
    And the log says "was created as msgbatch_"

  Scenario: A batch created but recorded neither as created nor as unknown fails its calls, never leaves them waiting
    Given an actor "agents" with:
      """
      batch_processing: batch
      batch: {poll_interval: 1, coalesce_window: 0.2, reconcile_grace: 8}
      """
    And the ledger's "record_submitted" fails once with "RuntimeError: disk on fire"
    And the ledger's "record_unknown" fails once with "sqlite3: disk I/O error"
    When 3 calls ask "question {i}" with the keys "k-{i}" at once
    Then each of the 3 calls failed with a InternalError saying "lowtide failed while recording batch msgbatch_"
    And the event loop reported no unhandled error

  Scenario: An intent another process adopts while this one lists the batches is not sent again
    Given an actor "agents" with:
      """
      batch_processing: batch
      batch: {poll_interval: 1, coalesce_window: 0.2, reconcile_grace: 0}
      """
    And the API will commit the next batch but drop the connection before answering
    # The batch is listed, but already claimed by the intent itself: the look that sent it again saw a stale record.
    And another process adopts the lost batch for its intent just before lowtide first lists the batches
    When 3 calls ask "question {i}" with the keys "k-{i}" at once
    Then each of the 3 calls was answered with the emulated reply to its question
    And the API created each of the 3 requests exactly once
    And the log says "was reconciled by another process meanwhile; nothing is sent again"
