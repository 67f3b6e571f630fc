Feature: Every ledger store journals many agent runs at once as it journals one
  As a developer whose agent runs a `resume` pass advances by the thousand, on whichever store keeps the ledger
  I want a store to read the journals of many runs, write the intents and results they ask for at one moment, and
  read many runs, in one call each, every one answered as a call of its own would answer it
  So that a pass does not pay a transaction a run, and a third-party store knows what it must answer

  Each scenario runs against each store through the `AgentJournal` role alone (`features/steps/_stores.py` opens it);
  the `folder` rows against a store of another package (features/plugins/lowtide_folder_ledger.py).

  Scenario Outline: Intents and results of many runs written together, journals and runs read together
    Given a <store> store with the agent runs "a" and "b"
    When the intents at a/1, a/0 and b/0 are journaled together
    Then the store answers the intents at positions 1, 0 and 0, as journaled
    When the intent at a/0 named "other" is journaled together with the results "ok" at a/1 and at c/0
    Then the store answers the intent at a/0 named "step", the one it holds
    And the result at a/1 is "ok", and nothing was changed at c/0
    And the journals of a, b and c read together hold positions 0 and 1, position 0, and nothing
    And the runs of a, c and a read together are a alone

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
