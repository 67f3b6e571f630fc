Feature: Every ledger store keeps the same guarantees
  As a developer choosing where lowtide keeps its ledger (in memory for tests, a SQLite file, a PostgreSQL database)
  I want every store to answer the engine, bulk runs and parking exactly alike: claims, leases, guarded changes,
  states derived from the results, and runs
  So that exactly-once submission and never paying twice hold whichever store I pick

  Each scenario runs against each store through the `LedgerStore` interface alone (`features/steps/_stores.py` opens
  it), with times given outright; the `folder` rows against a store of another package, written against the role
  protocols as a third party would (features/plugins/lowtide_folder_ledger.py). The rows tagged `@postgres` run in `nox -s postgres`, on a database of their own.
  Requests are claimed by the actor "planner"; the batch "b1" of a request "alpha" carries it as the custom id
  "c-alpha"; an answer's cost is binary-exact, so that a store summing in floating point gives the same total.

  Scenario Outline: A claim inserts the keys the store does not know and hands back what it has of the others
    Given a <store> ledger store
    And the requests alpha are claimed by "worker-1" until 1100 at 1000
    When these requests are claimed by "worker-2" until 1200 at 1010:
      | key   | prompt       |
      | alpha | Plan again   |
      | beta  | Plan beta    |
      | beta  | Plan beta v2 |
    Then the claim inserted beta, and knew alpha owned by "worker-1"
    And the request "alpha" asks "Plan alpha"
    And the request "beta" asks "Plan beta"
    And the store reads these requests:
      | key   | state   | batch | attempts | owner    | until | updated |
      | alpha | pending |       | 0        | worker-1 | 1100  | 1000    |
      | beta  | pending |       | 0        | worker-2 | 1200  | 1010    |
    When the requests alpha, gamma, alpha are claimed by "worker-3" until 1300 at 1020
    Then the claim handed back the records of alpha, gamma, alpha, owned by worker-1, worker-3, worker-1

    Examples: in memory and SQLite
      | store  |
      | memory |
      | sqlite |

    Examples: in a folder, a store of another package
      | store  |
      | folder |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: A key claimed through another opening of the ledger, as another process would, is never inserted again
    Given a <store> ledger store
    When the requests alpha are claimed anew by "worker-1" until 1100 at 1000 through another opening of the ledger
    And the requests alpha, beta are claimed anew by "worker-2" until 1200 at 1010 through the store
    Then the claim inserted beta, and knew alpha owned by "worker-1"
    When the requests beta, gamma are claimed anew by "worker-3" until 1300 at 1020 through another opening of the ledger
    Then the claim inserted gamma, and knew beta owned by "worker-2"

    Examples: in memory and SQLite
      | store  |
      | memory |
      | sqlite |

    Examples: in a folder, a store of another package
      | store  |
      | folder |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: A claim of thousands of requests with known keys among them inserts the others and knows those (<face> face)
    Given a <store> ledger store
    And the requests alpha, omega are claimed by "worker-1" until 1100 at 1000
    When 1500 new requests, with alpha first and omega last, are claimed by "worker-2" until 1200 at 1010 on the <face> face
    Then the claim inserted the 1500 new requests, and handed back the records of alpha, omega owned by "worker-1"
    And the store has 1502 requests: alpha and omega as "worker-1" claimed them, the 1500 new ones pending for "worker-2"
    When 1500 other new requests are claimed by "worker-3" until 1300 at 1020 on the <face> face
    Then the claim inserted the 1500 new requests, and knew no key

    Examples: in memory and SQLite
      | store  | face  |
      | memory | sync  |
      | memory | async |
      | sqlite | sync  |
      | sqlite | async |

    Examples: in a folder, a store of another package
      | store  | face  |
      | folder | sync  |
      | folder | async |

    @postgres
    Examples: PostgreSQL
      | store    | face  |
      | postgres | sync  |
      | postgres | async |

  Scenario Outline: A request claimed with its call's trace context keeps it, for whichever process answers it
    Given a <store> ledger store
    When the request alpha is claimed with the trace context "trace-a", and beta without one, by "worker-1" until 1100 at 1000
    And the request alpha is claimed with the trace context "trace-b", and gamma without one, by "worker-2" until 1200 at 1010
    Then the store, opened again, has the trace context "trace-a" for alpha, and none for beta, gamma, delta

    Examples: in memory and SQLite
      | store  |
      | memory |
      | sqlite |

    Examples: in a folder, a store of another package
      | store  |
      | folder |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: A pending request is taken over only from an expired or dead owner, and only once
    Given a <store> ledger store
    And the requests alpha, beta, gamma are claimed by "worker-1" until 1100 at 1000
    And the batch "b1" is recorded holding gamma by "worker-1" until 1100 at 1010
    Then these take-overs go as follows, in order:
      | owner    | key   | at   | until | dead owner | taken |
      | worker-2 | alpha | 1050 | 1200  |            | no    |
      | worker-2 | alpha | 1050 | 1200  | worker-9   | no    |
      | worker-2 | alpha | 1050 | 1200  | worker-1   | yes   |
      | worker-3 | alpha | 1060 | 1300  | worker-1   | no    |
      | worker-2 | alpha | 1070 | 1250  |            | yes   |
      | worker-3 | beta  | 1100 | 1300  |            | no    |
      | worker-3 | beta  | 1101 | 1300  |            | yes   |
      | worker-4 | beta  | 1102 | 1400  |            | no    |
      | worker-3 | gamma | 1500 | 1600  | worker-1   | no    |
      | worker-3 | delta | 1500 | 1600  |            | no    |
    And the store reads these requests:
      | key   | state      | owner    | until | updated |
      | alpha | pending    | worker-2 | 1250  | 1070    |
      | beta  | pending    | worker-3 | 1300  | 1101    |
      | gamma | submitting |          |       | 1010    |

    Examples: in memory and SQLite
      | store  |
      | memory |
      | sqlite |

    Examples: in a folder, a store of another package
      | store  |
      | folder |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: Many pending requests are taken over in one call, each as a take-over of its own would go
    Given a <store> ledger store
    And the requests alpha, beta, gamma, epsilon are claimed by "worker-1" until 1100 at 1000
    And the requests zeta are claimed by "worker-5" until 1300 at 1000
    And the batch "b1" is recorded holding gamma by "worker-1" until 1100 at 1010
    When "worker-2" takes over these requests at once until 1200 at 1050:
      | key     | dead owner |
      | alpha   | worker-1   |
      | beta    | worker-9   |
      | gamma   | worker-1   |
      | delta   |            |
      | zeta    | worker-1   |
      | epsilon | worker-1   |
      | alpha   | worker-1   |
    Then the take-overs took alpha, epsilon
    When "worker-3" takes over these requests at once, awaited, until 1300 at 1101:
      | key     | dead owner |
      | beta    |            |
      | alpha   |            |
      | epsilon | worker-1   |
    Then the take-overs took beta
    When "worker-4" takes over these requests at once until 1400 at 1102:
      | key  | dead owner |
      | beta | worker-1   |
    Then the take-overs took none
    And the store reads these requests:
      | key     | state      | owner    | until | updated |
      | alpha   | pending    | worker-2 | 1200  | 1050    |
      | beta    | pending    | worker-3 | 1300  | 1101    |
      | gamma   | submitting |          |       | 1010    |
      | epsilon | pending    | worker-2 | 1200  | 1050    |
      | zeta    | pending    | worker-5 | 1300  | 1000    |

    Examples: in memory and SQLite
      | store  |
      | memory |
      | sqlite |

    Examples: in a folder, a store of another package
      | store  |
      | folder |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: A request is submitting, then waiting on the batch the API has, then what its result says
    Given a <store> ledger store
    And the requests alpha, beta are claimed by "worker-1" until 1100 at 1000
    When the batch "b1" is recorded holding alpha, beta by "worker-1" until 1100 at 1010
    Then the store reads these requests:
      | key   | state      | batch | attempts | owner |
      | alpha | submitting | b1    | 1        |       |
      | beta  | submitting | b1    | 1        |       |
    And the store reads these batches:
      | batch | state  | API batch | requests | intent at | owner    |
      | b1    | intent |           | 2        | 1010      | worker-1 |
    When "b1" is created as the API's batch "msgbatch_1" at 1020
    Then the store reads these requests:
      | key   | state            | batch | attempts |
      | alpha | waiting-on-batch | b1    | 1        |
      | beta  | waiting-on-batch | b1    | 1        |
    And the store reads these batches:
      | batch      | id | state            | API batch  | submitted at | phase   |
      | b1         | b1 | waiting-on-batch | msgbatch_1 | 1020         | running |
      | msgbatch_1 | b1 | waiting-on-batch | msgbatch_1 | 1020         | running |
    And the store holds these requests in the state waiting-on-batch: alpha, beta
    When the batch "b1" ends at 1090 with 1 succeeded and 1 errored
    And these results of "b1" arrive at 1100:
      | key   | state     | answer   | cost  | live cost |
      | alpha | succeeded | Answer A | 0.25  | 0.5       |
      | beta  | pending   |          |       |           |
    Then the store reads these requests:
      | key   | state     | batch | attempts | answer   | cost | live cost | updated |
      | alpha | succeeded | b1    | 1        | Answer A | 0.25 | 0.5       | 1100    |
      | beta  | pending   | b1    | 1        |          |      |           | 1100    |
    And the store holds these requests in the state pending: beta
    When beta is requeued by "worker-2" until 1300 at 1110
    And the batch "b1" is collected at 1120
    Then the store reads these requests:
      | key  | state   | batch | attempts | owner    | until |
      | beta | pending |       | 1        | worker-2 | 1300  |
    And the store reads these batches:
      | batch | state     | ended at | collected at | owner | counts                 |
      | b1    | collected | 1090     | 1120         |       | errored=1, succeeded=1 |
    And the store holds these batches in the state collected: b1
    And the store holds no batches in the state waiting-on-batch
    When the batch "b1" ends at 1130 with 1 succeeded and 1 errored
    Then the store reads these batches:
      | batch | state     | ended at | phase |
      | b1    | collected | 1130     | ended |

    Examples: in memory and SQLite
      | store  |
      | memory |
      | sqlite |

    Examples: in a folder, a store of another package
      | store  |
      | folder |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: A request's state, batch and owner are read alone, in the order asked, as its record says them
    Given a <store> ledger store
    And the requests alpha, beta, gamma are claimed by "worker-1" until 1100 at 1000
    And the batch "b1" is recorded holding alpha, beta by "worker-1" until 1100 at 1010
    Then the store reads the states of gamma, beta, nobody, alpha as:
      | key   | state      | batch | owner    |
      | gamma | pending    |       | worker-1 |
      | beta  | submitting | b1    |          |
      | alpha | submitting | b1    |          |
    When "b1" is created as the API's batch "msgbatch_1" at 1020
    And the batch "b1" ends at 1090 with 1 succeeded and 1 errored
    And these results of "b1" arrive at 1100:
      | key   | state     | answer   | cost | live cost |
      | alpha | succeeded | Answer A | 0.25 | 0.5       |
      | beta  | pending   |          |      |           |
    Then the store reads the states of alpha, beta, gamma as:
      | key   | state     | batch | owner    |
      | alpha | succeeded | b1    |          |
      | beta  | pending   | b1    |          |
      | gamma | pending   |       | worker-1 |
    When beta is requeued by "worker-2" until 1300 at 1110
    And the batch "b2" is recorded holding beta by "worker-2" until 1300 at 1200
    And "b2" is created as the API's batch "msgbatch_2" at 1210
    Then the store reads the states of beta, alpha as:
      | key   | state            | batch | owner |
      | beta  | waiting-on-batch | b2    |       |
      | alpha | succeeded        | b1    |       |

    Examples: in memory and SQLite
      | store  |
      | memory |
      | sqlite |

    Examples: in a folder, a store of another package
      | store  |
      | folder |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: A result of a batch the request has left is kept, and never read as its state
    Given a <store> ledger store
    And these requests are claimed by "worker-1" until 1100 at 1000:
      | key   | worst case |
      | alpha | 0.5        |
    And the batch "b1" is recorded holding alpha by "worker-1" until 1100 at 1010
    And "b1" is created as the API's batch "msgbatch_1" at 1020
    And these results of "b1" arrive at 1100:
      | key   | state   |
      | alpha | pending |
    And alpha is requeued by "worker-1" until 1300 at 1110
    And the batch "b2" is recorded holding alpha by "worker-1" until 1300 at 1200
    And "b2" is created as the API's batch "msgbatch_2" at 1210
    When these results of "b1" arrive at 1250:
      | key   | state     | answer      | cost |
      | alpha | succeeded | Stale reply | 1    |
    Then the store reads these requests:
      | key   | state            | batch | attempts | answer | cost |
      | alpha | waiting-on-batch | b2    | 2        |        |      |
    And the planner has committed $0.5
    When these results of "b2" arrive at 1300:
      | key   | state     | answer      | cost  |
      | alpha | succeeded | Fresh reply | 0.125 |
    Then the store reads these requests:
      | key   | state     | batch | attempts | answer      | cost  |
      | alpha | succeeded | b2    | 2        | Fresh reply | 0.125 |
    And the planner has committed $0.125

    Examples: in memory and SQLite
      | store  |
      | memory |
      | sqlite |

    Examples: in a folder, a store of another package
      | store  |
      | folder |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: An unknown create is resumed or given up only by a caller that saw its latest attempt
    Given a <store> ledger store
    And the requests alpha, beta are claimed by "worker-1" until 1100 at 1000
    And the batch "b1" is recorded holding alpha, beta by "worker-1" until 1100 at 1010
    When the create of "b1" has an unknown outcome: "create outcome unknown: ServerError"
    Then the store reads these batches:
      | batch | state   | note                                | intent at |
      | b1    | unknown | create outcome unknown: ServerError | 1010      |
    And these reconciliations go as follows, in order:
      | owner    | action  | batch | seen at | at   | outcome      |
      | worker-2 | resume  | b1    | 1010    | 1500 | won          |
      | worker-3 | give up | b1    | 1010    | 1510 | lost         |
      | worker-3 | resume  | b1    | 1010    | 1510 | lost         |
    And the store reads these batches:
      | batch | state  | note | intent at | owner    | until |
      | b1    | intent |      | 1500      | worker-2 | 1600  |
    And the store reads these requests:
      | key   | state      | batch | attempts |
      | alpha | submitting | b1    | 1        |
      | beta  | submitting | b1    | 1        |
    And these reconciliations go as follows, in order:
      | owner    | action  | batch | seen at | at   | outcome      |
      | worker-2 | give up | b1    | 1500    | 1520 | alpha, beta  |
      | worker-3 | give up | b1    | 1500    | 1530 | lost         |
      | worker-3 | give up | b1    |         | 1530 | lost         |
      | worker-3 | resume  | b1    | 1500    | 1530 | lost         |
    And the store reads these batches:
      | batch | state  | note                            | API batch |
      | b1    | failed | no batch was found for it (1520) |           |
    And the store reads these requests:
      | key   | state   | batch | attempts | owner    | until |
      | alpha | pending |       | 0        | worker-2 | 1620  |
      | beta  | pending |       | 0        | worker-2 | 1620  |

    Examples: in memory and SQLite
      | store  |
      | memory |
      | sqlite |

    Examples: in a folder, a store of another package
      | store  |
      | folder |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: An unknown create adopts the API's batch only if no other record holds it, and only once
    Given a <store> ledger store
    And the requests alpha, beta are claimed by "worker-1" until 1100 at 1000
    And the batch "b1" is recorded holding alpha by "worker-1" until 1100 at 1010
    And "b1" is created as the API's batch "msgbatch_1" at 1020
    And the batch "b2" is recorded holding beta by "worker-1" until 1100 at 1030
    And the create of "b2" has an unknown outcome: "create outcome unknown: APIConnectionError"
    Then these reconciliations go as follows, in order:
      | owner    | action | batch | seen at | at   | API batch  | outcome |
      | worker-1 | adopt  | b2    |         | 1200 | msgbatch_1 | lost    |
      | worker-1 | adopt  | b2    |         | 1210 | msgbatch_2 | won     |
      | worker-1 | adopt  | b2    |         | 1220 | msgbatch_3 | lost    |
    And the store reads these batches:
      | batch      | id | state            | API batch  | submitted at | note                               |
      | b1         | b1 | waiting-on-batch | msgbatch_1 | 1020         |                                    |
      | msgbatch_2 | b2 | waiting-on-batch | msgbatch_2 | 1210         | reconciled after an unknown create |
    And the store reads these requests:
      | key  | state            | batch | attempts |
      | beta | waiting-on-batch | b2    | 1        |

    Examples: in memory and SQLite
      | store  |
      | memory |
      | sqlite |

    Examples: in a folder, a store of another package
      | store  |
      | folder |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  # Found out when its results name none of the ledger's requests (another ledger's or program's batch): the intent
  # is reconciled again, its request still in it, and the batch is held by a record of its own, so that no
  # reconciliation adopts it again.
  Scenario Outline: An adopted batch that held none of the intent's requests is disowned, and kept apart
    Given a <store> ledger store
    And the requests alpha are claimed by "worker-1" until 1100 at 1000
    And the batch "b1" is recorded holding alpha by "worker-1" until 1100 at 1010
    And the create of "b1" has an unknown outcome: "create outcome unknown: APIConnectionError"
    Then these reconciliations go as follows, in order:
      | owner    | action | batch | seen at | at   | API batch  | outcome |
      | worker-1 | adopt  | b1    |         | 1200 | msgbatch_9 | won     |
      | worker-1 | disown | b1    |         | 1300 | msgbatch_8 | lost    |
      | worker-1 | disown | b1    |         | 1310 | msgbatch_9 | won     |
      | worker-1 | disown | b1    |         | 1320 | msgbatch_9 | lost    |
      | worker-1 | adopt  | b1    |         | 1330 | msgbatch_9 | lost    |
    And the store reads these batches:
      | batch      | id                 | state   | API batch  | requests | counts | note                                                                   |
      | b1         | b1                 | unknown |            | 1        |        | adopted an API batch that held none of its requests; reconciled again  |
      | msgbatch_9 | foreign-msgbatch_9 | failed  | msgbatch_9 | 0        |        | not this ledger's: it held none of this ledger's requests               |
    And the store reads these requests:
      | key   | state      | batch | attempts |
      | alpha | submitting | b1    | 1        |
    And the unresolved intents of "anthropic" are b1
    And the planner has committed $0
    And these reconciliations go as follows, in order:
      | owner    | action  | batch | seen at | at   | API batch | outcome |
      | worker-1 | give up | b1    |         | 1400 |           | alpha   |
    And the store reads these requests:
      | key   | state   | batch | attempts | owner    |
      | alpha | pending |       | 0        | worker-1 |

    Examples: in memory and SQLite
      | store  |
      | memory |
      | sqlite |

    Examples: in a folder, a store of another package
      | store  |
      | folder |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: A ledger has an identity of its own, made with it and kept for its life
    Given a <store> ledger store
    Then the store's identity is 12 lowercase hex digits, the same each time it is read and when it is opened again
    And another new <store> ledger store has an identity of its own

    Examples: in memory and SQLite
      | store  |
      | memory |
      | sqlite |

    Examples: in a folder, a store of another package
      | store  |
      | folder |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: A create the API refused puts its requests back without counting the attempt
    Given a <store> ledger store
    And the requests alpha are claimed by "worker-1" until 1100 at 1000
    And the batch "b1" is recorded holding alpha by "worker-1" until 1100 at 1010
    When the create of "b1" is refused at 1020: "invalid_request_error: too large"
    Then the store reads these batches:
      | batch | state  | note                            | API batch |
      | b1    | failed | invalid_request_error: too large |           |
    And the store reads these requests:
      | key   | state   | batch | attempts | updated |
      | alpha | pending |       | 0        | 1020    |
    When the batch "b2" is recorded holding alpha by "worker-1" until 1200 at 1030
    Then the store reads these requests:
      | key   | state      | batch | attempts |
      | alpha | submitting | b2    | 1        |
    And the store holds these batches in the state failed: b1
    And the unresolved intents of "anthropic" are b2

    Examples: in memory and SQLite
      | store  |
      | memory |
      | sqlite |

    Examples: in a folder, a store of another package
      | store  |
      | folder |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: A batch is worked on by one owner at a time, until its lease runs out
    Given a <store> ledger store
    And the requests alpha are claimed by "worker-1" until 1100 at 1000
    And the batch "b1" is recorded holding alpha by "worker-1" until 1100 at 1010
    Then these batch claims go as follows, in order:
      | owner    | batch | at   | until | force | taken |
      | worker-2 | b1    | 1050 | 1200  | no    | no    |
      | worker-1 | b1    | 1050 | 1150  | no    | yes   |
      | worker-2 | b1    | 1150 | 1300  | no    | no    |
      | worker-2 | b1    | 1151 | 1300  | no    | yes   |
      | worker-3 | b1    | 1160 | 1400  | yes   | yes   |
      | worker-2 | b1    | 1170 | 1500  | no    | no    |
      | worker-2 | b9    | 1170 | 1500  | yes   | no    |
    # A collected batch is nobody's to take: one taken after another process collected it was collected again.
    When the batch "b1" is collected at 1180
    Then these batch claims go as follows, in order:
      | owner    | batch | at   | until | force | taken |
      | worker-2 | b1    | 1190 | 1500  | no    | no    |
      | worker-2 | b1    | 1190 | 1500  | yes   | no    |
    And the store reads these batches:
      | batch | state     | owner | until |
      | b1    | collected |       |       |

    Examples: in memory and SQLite
      | store  |
      | memory |
      | sqlite |

    Examples: in a folder, a store of another package
      | store  |
      | folder |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: What an actor has committed is what it spent plus the worst case of what is unanswered
    Given a <store> ledger store
    And these requests are claimed by "worker-1" until 1100 at 1000:
      | key   | actor    | worst case |
      | alpha | planner  | 1          |
      | beta  | planner  | 0.5        |
      | gamma | planner  | 0.25       |
      | delta | reviewer | 2          |
    Then the planner has committed $1.75
    And the reviewer has committed $2
    And the auditor has committed $0
    When the batch "b1" is recorded holding alpha, beta by "worker-1" until 1100 at 1010
    And "b1" is created as the API's batch "msgbatch_1" at 1020
    Then the planner has committed $1.75
    When these results of "b1" arrive at 1100:
      | key   | state     | answer   | cost  |
      | alpha | succeeded | Answer A | 0.125 |
      | beta  | failed    |          |       |
    Then the planner has committed $0.375
    And the reviewer has committed $2
    And the store holds these requests of the planner: alpha, beta, gamma

    Examples: in memory and SQLite
      | store  |
      | memory |
      | sqlite |

    Examples: in a folder, a store of another package
      | store  |
      | folder |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: A batch's members are kept over every attempt; its attempts count only the requests now in it
    Given a <store> ledger store
    And these requests are claimed by "worker-1" until 1100 at 1000:
      | key   | max attempts |
      | alpha | 3            |
      | beta  | 1            |
    And the batch "b1" is recorded holding alpha, beta by "worker-1" until 1100 at 1010
    And "b1" is created as the API's batch "msgbatch_1" at 1020
    And these results of "b1" arrive at 1100:
      | key   | state   |
      | alpha | pending |
      | beta  | failed  |
    And alpha is requeued by "worker-1" until 1300 at 1110
    When the batch "b2" is recorded holding alpha by "worker-1" until 1300 at 1200
    Then the batch "b1" has these members:
      | custom id | key   | attempts |
      | c-alpha   | alpha |          |
      | c-beta    | beta  | 1 of 1   |
    And the batch "b2" has these members:
      | custom id | key   | attempts |
      | c-alpha   | alpha | 2 of 3   |
    And the store holds these requests in the batch "b1": beta
    And the store holds these requests in the batch "b2": alpha

    Examples: in memory and SQLite
      | store  |
      | memory |
      | sqlite |

    Examples: in a folder, a store of another package
      | store  |
      | folder |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: A batch's keys whose latest result from it is final are read at once, for a collection again
    Given a <store> ledger store
    And the requests alpha, beta, gamma, delta are claimed by "worker-1" until 1100 at 1000
    And the batch "b1" is recorded holding alpha, beta, gamma, delta by "worker-1" until 1100 at 1010
    And "b1" is created as the API's batch "msgbatch_1" at 1020
    Then the store holds final results from "b1" for none
    When these results of "b1" arrive at 1100:
      | key   | state     | answer   | cost |
      | alpha | succeeded | Answer A | 0.25 |
      | beta  | pending   |          |      |
      | gamma | failed    |          |      |
    Then the store holds final results from "b1" for alpha, gamma
    When these results of "b1" arrive at 1105:
      | key   | state     | answer   | cost |
      | alpha | succeeded | Answer A | 0.25 |
      | delta | pending   |          |      |
    Then the store holds final results from "b1" for alpha, gamma
    When beta is requeued by "worker-1" until 1300 at 1110
    And the batch "b2" is recorded holding beta by "worker-1" until 1300 at 1200
    And "b2" is created as the API's batch "msgbatch_2" at 1210
    And these results of "b2" arrive at 1300:
      | key  | state     | answer   | cost |
      | beta | succeeded | Answer B | 0.5  |
    Then the store holds final results from "b1" for alpha, gamma
    And the store holds final results from "b2" for beta
    And the store holds final results from "b3" for none
    And the planner has committed $0.75

    Examples: in memory and SQLite
      | store  |
      | memory |
      | sqlite |

    Examples: in a folder, a store of another package
      | store  |
      | folder |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  # A PostgreSQL store adds results to the sums without looking each up for an earlier final result when it read the
  # batch's final results since the last statement that stored any (`ledger/postgres/totals.py`); here another
  # process stores some in between, one of them a result this process stores again.
  Scenario Outline: Results stored by two processes, each after reading which were final, are counted in the sums once
    Given a <store> ledger store
    And the requests alpha, beta, gamma, delta are claimed by "worker-1" until 1100 at 1000
    And the batch "b1" is recorded holding alpha, beta, gamma, delta by "worker-1" until 1100 at 1010
    And "b1" is created as the API's batch "msgbatch_1" at 1020
    And these results of "b1" arrive at 1090:
      | key   | state     | answer   | cost |
      | alpha | succeeded | Answer A | 0.25 |
    When the store and another process on the same ledger each read which results of "b1" are final
    And these results of "b1" arrive at 1100 through the other process:
      | key   | state     | answer   | cost |
      | beta  | succeeded | Answer B | 0.5  |
      | gamma | pending   |          |      |
    And these results of "b1" arrive at 1105:
      | key   | state     | answer   | cost |
      | beta  | succeeded | Answer B | 0.5  |
      | gamma | failed    |          |      |
    And these results of "b1" arrive at 1110:
      | key   | state     | answer   | cost |
      | delta | succeeded | Answer D | 1    |
    Then the sums count 4 results of "planner" costing $1.75, as a scan of every result does
    When the store reads which results of "b1" are final
    And these results of "b1" arrive at 1120:
      | key   | state     | answer   | cost |
      | delta | succeeded | Answer D | 1    |
    Then the sums count 4 results of "planner" costing $1.75, as a scan of every result does

    Examples: in memory and SQLite
      | store  |
      | memory |
      | sqlite |

    Examples: in a folder, a store of another package
      | store  |
      | folder |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: The results a batch brought since a cursor are read in the order stored, each once
    Given a <store> ledger store
    And the requests alpha, beta, gamma, delta are claimed by "worker-1" until 1100 at 1000
    And the batch "b1" is recorded holding alpha, beta, gamma, delta by "worker-1" until 1100 at 1010
    And "b1" is created as the API's batch "msgbatch_1" at 1020
    When a cursor of the results is taken for "b1"
    Then the results of "b1" since its cursor are of none
    When these results of "b1" arrive at 1100:
      | key   | state     | answer   | cost |
      | beta  | pending   |          |      |
      | alpha | succeeded | Answer A | 0.25 |
    Then the results of "b1" since its cursor are of beta, alpha
    And the results of "b1" since its cursor are of none
    When beta is requeued by "worker-1" until 1300 at 1110
    And the batch "b2" is recorded holding beta by "worker-1" until 1300 at 1200
    And "b2" is created as the API's batch "msgbatch_2" at 1210
    And a cursor of the results is taken for "b2"
    And these results of "b2" arrive at 1300:
      | key  | state     | answer   | cost |
      | beta | succeeded | Answer B | 0.5  |
    And these results of "b1" arrive at 1305:
      | key   | state     | answer   | cost |
      | delta | succeeded | Answer D | 0.25 |
      | gamma | failed    |          |      |
    Then the results of "b1" since its cursor are of delta, gamma
    And the results of "b2" since its cursor are of beta
    And the results of "b2" since its cursor are of none

    Examples: in memory and SQLite
      | store  |
      | memory |
      | sqlite |

    Examples: in a folder, a store of another package
      | store  |
      | folder |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: A batch's answers are read from its results alone: each key's latest result from it, in the order asked
    # What a process watching a batch another polls hands its calls: the state, answer and error of each result,
    # neither the request's parameters nor its record. A key with no result from the batch is left out; a key still in
    # the batch reads as its record says.
    Given a <store> ledger store
    And the requests alpha, beta, gamma, delta are claimed by "worker-1" until 1100 at 1000
    And the batch "b1" is recorded holding alpha, beta, gamma, delta by "worker-1" until 1100 at 1010
    And "b1" is created as the API's batch "msgbatch_1" at 1020
    Then the store reads the answers of "b1" for alpha, beta as:
      | key | state | answer | error |
    When these results of "b1" arrive at 1100:
      | key   | state     | answer   | cost |
      | alpha | succeeded | Answer A | 0.25 |
      | beta  | pending   |          |      |
      | gamma | failed    |          |      |
      | delta | pending   |          |      |
    And these results of "b1" arrive at 1105:
      | key   | state     | answer   | cost |
      | delta | succeeded | Answer D | 0.25 |
    Then the store reads the answers of "b1" for gamma, delta, nobody, beta, alpha as:
      | key   | state     | answer   | error               |
      | gamma | failed    |          | BatchRequestErrored |
      | delta | succeeded | Answer D |                     |
      | beta  | pending   |          |                     |
      | alpha | succeeded | Answer A |                     |
    When beta is requeued by "worker-1" until 1300 at 1110
    And the batch "b2" is recorded holding beta by "worker-1" until 1300 at 1200
    And "b2" is created as the API's batch "msgbatch_2" at 1210
    And these results of "b2" arrive at 1300:
      | key  | state     | answer   | cost |
      | beta | succeeded | Answer B | 0.5  |
    Then the store reads the answers of "b2" for alpha, beta as:
      | key  | state     | answer   | error |
      | beta | succeeded | Answer B |       |
    And the store reads the answers of "b1" for beta, alpha as:
      | key   | state     | answer   | error |
      | beta  | pending   |          |       |
      | alpha | succeeded | Answer A |       |
    # Which calls a batch holds now, read from their latest memberships: no state, no record (beta left "b1").
    And of beta, nobody, gamma the batch "b1" holds gamma, and the batch "b2" holds beta

    Examples: in memory and SQLite
      | store  |
      | memory |
      | sqlite |

    Examples: in a folder, a store of another package
      | store  |
      | folder |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: The steps of a create made of several calls are kept, the latest value of each
    Given a <store> ledger store
    And the requests alpha are claimed by "worker-1" until 1100 at 1000
    And the batch "b1" is recorded holding alpha by "worker-1" until 1100 at 1010
    And the batch "b2" is recorded holding alpha by "worker-1" until 1100 at 1020
    Then the create steps of "b1" are none
    When the step "input_file" of the create of "b1" is recorded as "file-1"
    And the step "upload" of the create of "b1" is recorded as "done"
    And the step "input_file" of the create of "b1" is recorded as "file-2"
    Then the create steps of "b1" are input_file=file-2, upload=done
    And the create steps of "b2" are none

    Examples: in memory and SQLite
      | store  |
      | memory |
      | sqlite |

    Examples: in a folder, a store of another package
      | store  |
      | folder |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: The unresolved intents of one API, and which of them holds a request
    Given a <store> ledger store
    And the requests alpha, beta, gamma, delta, omega are claimed by "worker-1" until 1100 at 1000
    And the batch "b1" is recorded holding alpha by "worker-1" until 1100 at 1030
    And the batch "b2" is recorded holding beta by "worker-1" until 1100 at 1010
    And the create of "b2" has an unknown outcome: "create outcome unknown: ReadTimeout"
    And the batch "b3" is recorded holding gamma by "worker-1" until 1100 at 1020
    And "b3" is created as the API's batch "msgbatch_3" at 1025
    And the batch "b4" of "openai" at "https://api.anthropic.test" is recorded holding delta at 1040
    And the batch "b5" of "anthropic" at "https://proxy.example" is recorded holding omega at 1050
    Then the unresolved intents of "anthropic" are b2, b1
    And the unresolved intents of "openai" are b4
    And of the batches b1, b2, the one holding "c-beta" is b2
    And of the batches b1, b2, the one holding "c-gamma" is none
    And of the batches b1, the one holding "c-beta" is none
    And of no batches, the one holding "c-beta" is none

    Examples: in memory and SQLite
      | store  |
      | memory |
      | sqlite |

    Examples: in a folder, a store of another package
      | store  |
      | folder |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: A run is recorded once with its items, which read their latest request's state
    Given a <store> ledger store
    When the run "r1" is created at 1000 with the fingerprint "fp-1" and items k0, k1, k2
    Then the run was created
    When the run "r1" is created at 1010 with the fingerprint "fp-2" and items x0
    Then the run was not created
    And the store's runs are r1
    And the run "r1" has the fingerprint "fp-1", 3 items, and was updated at 1000
    And the run "r1" reads these items:
      | index | key | attempt | state | batch |
      | 0     | k0  | 1       |       |       |
      | 1     | k1  | 1       |       |       |
      | 2     | k2  | 1       |       |       |
    And the run "r1" has no outstanding batches
    When the requests k0, k1 are claimed by "worker-1" until 1100 at 1020
    And the batch "b1" is recorded holding k0, k1 by "worker-1" until 1100 at 1030
    And "b1" is created as the API's batch "msgbatch_1" at 1040
    Then the run "r1" reads these items:
      | index | key | state            | batch |
      | 0     | k0  | waiting-on-batch | b1    |
      | 1     | k1  | waiting-on-batch | b1    |
      | 2     | k2  |                  |       |
    And the run "r1" has the outstanding batches b1
    And the run "r1" was in these batches:
      | batch | API batch  | state            | items |
      | b1    | msgbatch_1 | waiting-on-batch | 2     |
    When these results of "b1" arrive at 1100:
      | key | state     | answer | cost | live cost |
      | k0  | succeeded | Yes    | 0.25 | 0.5       |
      | k1  | failed    |        |      |           |
    And the batch "b1" is collected at 1110
    Then the run "r1" has no outstanding batches
    When the run "r1" decides at 1190 that item 1 is "failed" for "time limit"
    And the run "r1" decides at 1200 that item 2 is "not-run" for "cost limit"
    Then the run "r1" reads these items:
      | index | key | attempt | status  | reason     |
      | 1     | k1  | 1       | failed  | time limit |
      | 2     | k2  | 1       | not-run | cost limit |
    And the run "r1" reads from item 1 up to 2 the items 1
    And the run "r1" reads from item 1 up to 100 the items 1, 2
    And the run "r1" reads from item 0 up to 3 apart the answered items 0 costing 0.25, and rows of the items 1, 2
    And the run "r1" has the fingerprint "fp-1", 3 items, and was updated at 1200
    And the run "r1" reads these outcomes from item 0 up to 3:
      | index | key | state     | answer | error               | status  | reason     |
      | 0     | k0  | succeeded | Yes    |                     |         |            |
      | 1     | k1  | failed    |        | BatchRequestErrored | failed  | time limit |
      | 2     | k2  |           |        |                     | not-run | cost limit |
    And the run "r1" reads these outcomes from item 0 up to 3, of items 0, 2 alone:
      | index | key | state     | answer | error | status  | reason     |
      | 0     | k0  | succeeded | Yes    |       |         |            |
      | 2     | k2  |           |        |       | not-run | cost limit |
    When the run "r1" makes a new attempt of item 1 under the key "k1-retry" at 1210
    Then the run "r1" reads these items:
      | index | key      | attempt | state     | batch | cost | status  | reason     |
      | 0     | k0       | 1       | succeeded | b1    | 0.25 |         |            |
      | 1     | k1-retry | 2       |           |       |      |         |            |
      | 2     | k2       | 1       |           |       |      | not-run | cost limit |
    And the run "r1" was in these batches:
      | batch | API batch  | state     | items |
      | b1    | msgbatch_1 | collected | 1     |
    And the run "r1" has the fingerprint "fp-1", 3 items, and was updated at 1210
    When the run "r1" records at 1300 the live answer "Live yes" for item 2 under the key "k2", costing 0.75
    Then the run "r1" reads these items:
      | index | key | state     | batch | cost | status |
      | 2     | k2  | succeeded |       | 0.75 |        |
    And the request "k2" reads the live answer "Live yes", costing 0.75 at batch and live prices
    And the run "r1" would have cost $1.25 live
    And the run "r1" reads from item 0 up to 3 apart the answered items 0, 2 costing 1.00, and rows of the items 1
    And the run "r1" reads from item 1 up to 3 apart the answered items 2 costing 0.75, and rows of the items 1
    And the run "r1" reads these outcomes from item 1 up to 2:
      | index | key      | state | answer | status |
      | 1     | k1-retry |       |        |        |
    And the run "r1" reads these outcomes from item 2 up to 100:
      | index | key | state     | answer   | status |
      | 2     | k2  | succeeded | Live yes |        |

    Examples: in memory and SQLite
      | store  |
      | memory |
      | sqlite |

    Examples: in a folder, a store of another package
      | store  |
      | folder |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: A run's options are changed in place
    Given a <store> ledger store
    When the run "r1" is created at 1000 with the fingerprint "fp-1" and items k0
    And the run "r2" is created at 990 with the fingerprint "fp-2" and items k0
    And the options of the run "r1" are changed to a cost limit of 5 at 1100
    Then the run "r1" has the options: max_cost_usd=5
    And the run "r1" has the fingerprint "fp-1", 1 item, and was updated at 1100
    And the store's runs are r2, r1
    And the store has no run "r3"

    Examples: in memory and SQLite
      | store  |
      | memory |
      | sqlite |

    Examples: in a folder, a store of another package
      | store  |
      | folder |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: A change that would break the ledger's integrity is refused, with nothing written
    Given a <store> ledger store
    And the requests alpha, beta are claimed by "worker-1" until 1100 at 1000
    And the batch "b1" is recorded holding alpha by "worker-1" until 1100 at 1010
    And "b1" is created as the API's batch "msgbatch_1" at 1020
    And the batch "b2" is recorded holding beta by "worker-1" until 1100 at 1030
    Then recording the batch "b1" holding beta is refused with a LedgerError
    And recording the batch "b3" holding beta, ghost is refused with a LedgerError
    And recording "b2" as created as the API's batch "msgbatch_1" is refused with a LedgerError
    And the store has no batch "b3"
    And the store reads these batches:
      | batch | state            | API batch  | requests |
      | b1    | waiting-on-batch | msgbatch_1 | 1        |
      | b2    | intent           |            | 1        |
    And the store reads these requests:
      | key   | state            | batch | attempts |
      | alpha | waiting-on-batch | b1    | 1        |
      | beta  | submitting       | b2    | 1        |
    And the batch "b1" has these members:
      | custom id | key   | attempts |
      | c-alpha   | alpha | 1 of 1   |

    Examples: in memory and SQLite
      | store  |
      | memory |
      | sqlite |

    Examples: in a folder, a store of another package
      | store  |
      | folder |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: The live quota kept in the store keeps each scope's state from one change to the next
    Given a <store> ledger store
    When the store's quota scope "key-a" is paused until 1500
    And the store's quota scope "key-a" is paused until 1600
    Then the store's quota scope "key-a" is paused until 1600, after 2 pauses
    And the store's quota scope "key-b" is paused until 0, after 0 pauses

    Examples: in memory and SQLite
      | store  |
      | memory |
      | sqlite |

    Examples: in a folder, a store of another package
      | store  |
      | folder |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  # `lowtide ledger rebuild` loads a lost ledger's rows as a copy's, the ledger taking the lost one's identity; a
  # request whose custom id was hashed (its key unknown) is kept under `rebuilt:<custom id>` until a claim whose custom
  # id is that one takes it over, in one transaction, before the claim is written.
  Scenario Outline: A rebuilt ledger takes the lost one's identity, and a claim takes over the request whose custom id is its own (<face> face)
    Given a <store> ledger store
    When the rows of a rebuilt ledger of identity "0123456789ab" are loaded into it: the batch "b1" answered alpha, and the custom id "c-beta" whose key was not known
    Then the store's identity is "0123456789ab", the same when it is opened again
    And the store holds rebuilt requests whose keys are not known
    When the requests alpha, beta, gamma are claimed by "worker-2" until 1200 at 1010 on the <face> face, taking over first the rebuilt requests of their custom ids
    Then the claim inserted gamma, and knew alpha, beta, each in its batch, owned by none
    And the store reads these requests:
      | key   | state     | batch | attempts | owner    | until | updated |
      | gamma | pending   |       | 0        | worker-2 | 1200  | 1010    |
    And the requests alpha and beta were answered "Answer alpha" and "Answer beta" in the batch "b1", whose members they are
    And the store holds no rebuilt request whose key is not known

    Examples: in memory and SQLite
      | store  | face  |
      | memory | sync  |
      | memory | async |
      | sqlite | sync  |
      | sqlite | async |

    Examples: in a folder, a store of another package
      | store  | face  |
      | folder | sync  |
      | folder | async |

    @postgres
    Examples: PostgreSQL
      | store    | face  |
      | postgres | sync  |
      | postgres | async |
