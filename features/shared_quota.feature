Feature: One live quota for every process on a ledger
  As an operator running several live workers on one machine with one API key
  I want their rate limits counted together, as the provider counts them
  So that together they stay under the key's limits, and a 429 one of them meets pauses them all

  Each "process" here is a quota of its own over its own connection to one ledger, on a virtual clock: two
  processes of lowtide in all but the process boundary (the Robot suite `live_rate_limits.robot` runs real ones).
  The ledger is a SQLite file, or (`@postgres`, `nox -s postgres`) a PostgreSQL database shared by many hosts.

  Scenario Outline: Two processes on one ledger together stay under the requests per minute
    Given two processes on one <store> ledger, each with a live quota of 30 requests per minute for the same key
    When each process admits 45 calls at once, each call ending at once
    Then all 90 calls were admitted
    And at every moment, at most 30 calls plus one every 2 seconds since the start were admitted in all
    And each process had its 45 calls admitted

    Examples: SQLite
      | store  |
      | SQLite |

    @postgres
    Examples: PostgreSQL
      | store      |
      | PostgreSQL |

  Scenario: The same two processes counting alone would admit twice the limit at once
    Given two processes, each with a live quota of 30 requests per minute for the same key, kept in the process
    When each process admits 45 calls at once, each call ending at once
    Then 60 calls were admitted within the first second

  Scenario Outline: Tokens per minute are shared too, and a call's refund reaches the other process
    Given two processes on one <store> ledger, each with a live quota of 1000 input tokens per minute for the same key
    When process A admits a call of 800 input tokens that ends having used 200
    And process B admits a call of 700 input tokens
    Then process B's call was admitted at once

    Examples: SQLite
      | store  |
      | SQLite |

    @postgres
    Examples: PostgreSQL
      | store      |
      | PostgreSQL |

  Scenario Outline: A 429 met by one process pauses the other, which then starts slowly
    Given two processes on one <store> ledger, each with a live quota of 600 requests per minute for the same key
    When process A is paused for 20 seconds by a 429
    And process B admits 10 calls at once, each call ending at once
    Then process B's first call was admitted 20 seconds after the pause began
    And process B's observers saw the pause start and end
    And process B's concurrency fell back to its ramp start after the pause

    Examples: SQLite
      | store  |
      | SQLite |

    @postgres
    Examples: PostgreSQL
      | store      |
      | PostgreSQL |

  Scenario Outline: Limits one process learned from the API's headers hold the other
    Given two processes on one <store> ledger, neither with a configured limit
    When process A learns from the headers a limit of 10 requests per minute, 10 left
    And process B admits 13 calls at once, each call ending at once
    Then process B admitted 9 calls at once (process A's call took the tenth), and the 13th 24 seconds later
    And process B knows the limit of 10 requests per minute

    Examples: SQLite
      | store  |
      | SQLite |

    @postgres
    Examples: PostgreSQL
      | store      |
      | PostgreSQL |

  Scenario Outline: A process killed mid-call holds its budget for no longer than the refill takes
    Given two processes on one <store> ledger, each with a live quota of 10 requests per minute for the same key
    When process A admits 10 calls and is killed before any ends
    And process B admits 1 call
    Then process B's call was admitted 6 seconds after the start

    Examples: SQLite
      | store  |
      | SQLite |

    @postgres
    Examples: PostgreSQL
      | store      |
      | PostgreSQL |

  Scenario Outline: Updates of one scope from many processes at once are never lost
    Given 4 processes on one <store> ledger
    When each process updates the same scope 150 times, all at once
    Then the scope counted 600 updates

    Examples: SQLite
      | store  |
      | SQLite |

    @postgres
    Examples: PostgreSQL
      | store      |
      | PostgreSQL |

  Scenario Outline: An update that fails midway changes nothing and leaves the scope free for the others
    Given 2 processes on one <store> ledger
    When the first process's update of the scope fails midway
    And the first process updates the scope once more
    Then the scope counted 1 updates
    When the first process's update of the scope fails midway
    Then the other process updates the scope at once
    And the scope counted 1 updates
    And each process's store names the ledger it shares, without a password

    Examples: SQLite
      | store  |
      | SQLite |

    @postgres
    Examples: PostgreSQL
      | store      |
      | PostgreSQL |

  Scenario: Live calls keep their quota in the actor's ledger, and no secret with it
    Given a live API emulated on a virtual clock, answering each call in 2 seconds
    And a live actor with:
      """
      live: {rpm: 100}
      """
    When 5 live calls are made at once
    Then all 5 calls are answered
    And the actor's ledger holds one shared quota scope, in which the API key does not appear

  Scenario: share_quota false keeps the quota in the process, and live calls never touch the ledger
    Given a live API emulated on a virtual clock, answering each call in 2 seconds
    And a live actor with:
      """
      live: {rpm: 100, share_quota: false}
      """
    When 5 live calls are made at once
    Then all 5 calls are answered
    And no ledger was opened for the actor
