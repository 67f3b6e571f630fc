Feature: An answer is stored with its text once, and reads back as the response it was
  As an operator of a ledger that keeps hundreds of thousands of answers
  I want each stored answer to hold its text once, in its blocks, rather than beside them a second time
  So that a batch's results write half the bytes they did, while every reader (the engine, a bulk run, the dashboard,
  a copy) sees each response as it was answered, and a ledger an earlier lowtide wrote reads as it always did

  The results arrive as Anthropic's results lines would bring them, shaped by its batch codec and stored as the engine
  stores them (`policy.result_row`); the request "alpha" is claimed by the actor "planner" and sent in the batch "b1".

  Scenario Outline: An answer's text is stored once and put back from its blocks when it is read
    Given a <store> ledger store
    And the requests alpha are claimed by "worker-1" until 1100 at 1000
    And the batch "b1" is recorded holding alpha by "worker-1" until 1100 at 1010
    And "b1" is created as the API's batch "msgbatch_1" at 1020
    When the result of alpha in "b1" arrives at 1100 answering in blocks <blocks>
    Then the stored answer of alpha holds its text once
    And alpha's record, its answer from "b1" and a copy of the ledger read back the response as it was answered

    Examples: in memory and SQLite
      | store  | blocks                                     |
      | memory | "Blue whales sing near 20 Hz."             |
      | sqlite | "Blue whales sing near 20 Hz."             |
      | sqlite | "Blue whales " + "sing " + "near 20 Hz. é" |

    @postgres
    Examples: PostgreSQL
      | store    | blocks                                     |
      | postgres | "Blue whales sing near 20 Hz."             |
      | postgres | "Blue whales " + "sing " + "near 20 Hz. é" |

  Scenario Outline: An answer an earlier lowtide stored, its text beside its blocks, reads as it did
    Given a <store> ledger store
    And the requests alpha are claimed by "worker-1" until 1100 at 1000
    And the batch "b1" is recorded holding alpha by "worker-1" until 1100 at 1010
    And "b1" is created as the API's batch "msgbatch_1" at 1020
    When an earlier lowtide stored the result of alpha in "b1" at 1100, answering in blocks "Blue whales " + "sing"
    Then the stored answer of alpha holds its text twice, as it was stored
    And alpha's record, its answer from "b1" and a copy of the ledger read back the response as it was answered

    Examples: in memory and SQLite
      | store  |
      | memory |
      | sqlite |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: A stored answer reads back as Python's json reads it, whatever its JSON holds
    # Read by orjson, several times faster, wherever orjson gives the same value; by json otherwise (an integer
    # beyond 64 bits, which orjson would make a float, a NaN or an infinity, which it refuses).
    When a stored answer whose tool input holds <value> is read back
    Then it reads as Python's json reads it, value for value and type for type, its text put back

    Examples:
      | value                              |
      | 123456789012345678901234567890     |
      | 18446744073709551616               |
      | -9223372036854775809               |
      | 9223372036854775807                |
      | 12345678901234567.89               |
      | 3.141592653589793238462643383279   |
      | 1e400                              |
      | NaN                                |
      | -0.0                               |
      | 1E5                                |
      | "Île-de-Bréhat \ud83c\udf0a"       |
      | {"deep": [1, [2.5, [null, true]]]} |
