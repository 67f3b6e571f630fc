Feature: The ledger's outbox keeps each notice to the user's server until it is taken or given up
  As a developer whose server is told when lowtide's work ends
  I want every notice kept in the ledger before it is tried, once by its id, tried by one process at a time
  So that a notice outlives the process that made it, and no two hosts send it at once or after it was taken

  # Each store plays the `Outbox` role (`ledger/roles.py`): `add_notice` keeps a notice once by its event id, held by
  # the process that made it while it tries it; `due_notices` claims the notices due and held by no live lease;
  # `notice_tried` records tries by the owner holding it: delivered, due again later, or given up.

  Scenario Outline: A notice is kept once, tried by one owner at a time, and never again once taken (<store>)
    Given a <store> ledger store
    When "host-a" keeps the notice "n1" made at 100, held until 200
    Then "host-b" keeping the notice "n1" again does not hold it, and "host-a" keeping it again does
    And no notice is due at 150 for "host-b"
    When "host-a" tried "n1" 6 times at 190, due again at 300
    Then no notice is due at 250 for "host-b"
    And the notices due at 300 for "host-b", held until 400, are n1 after 6 tries
    And no notice is due at 350 for "host-c"
    When "host-c" tried "n1" 1 time at 360, delivered
    Then the notices due at 401 for "host-c", held until 500, are n1 after 6 tries
    When "host-c" tried "n1" 1 time at 410, delivered
    Then no notice is due at 100000 for "host-a"
    And "host-a" keeping the notice "n1" again does not hold it

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

  Scenario Outline: Notices are claimed the earliest due first, a few at a time, and one given up is never due again (<store>)
    Given a <store> ledger store
    When "host-a" keeps the notices n1, n2, n3 made at 100, 50, 75, held until 100
    Then the notices due at 120 for "host-b", 2 at most, held until 200, are n2, n3 after 0 tries
    And the notices due at 120 for "host-c", 2 at most, held until 200, are n1 after 0 tries
    When "host-b" tried "n2" 1 time at 130, given up
    And "host-b" tried "n3" 1 time at 130, due again at 140
    Then the notices due at 150 for "host-a", held until 300, are n3 after 1 tries

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

  Scenario Outline: A copied outbox keeps each notice under its id: one still to send is due from the copy, one taken is never sent again (<store> into <copy>)
    Given a <store> ledger store
    When "host-a" keeps the notices n1, n2 made at 100, 50, held until 100
    And "host-a" tried "n2" 1 time at 60, delivered
    And "host-a" tried "n1" 3 times at 90, due again at 300
    And the store is copied into a new <copy> ledger, which the next steps use
    Then no notice is due at 250 for "host-b"
    And the notices due at 300 for "host-b", held until 400, are n1 after 3 tries
    And "host-a" keeping the notice "n2" again does not hold it

    Examples: in memory and SQLite
      | store  | copy   |
      | memory | sqlite |
      | sqlite | memory |

    Examples: in a folder, a store of another package
      | store  | copy   |
      | folder | sqlite |

    @postgres
    Examples: PostgreSQL
      | store    | copy     |
      | sqlite   | postgres |
      | postgres | sqlite   |
