Feature: Every ledger store answers the dashboard's views alike
  As a user watching a ledger in `lowtide dashboard`, whichever store keeps it
  I want each store to count a run's items, page its batches, sum its spend, group its failures and tell one request's
  history the same way, through `LedgerStore.views` alone
  So that the page says the same thing of the same ledger in memory, in a SQLite file or in PostgreSQL

  The ledger is `features/support/dashboard_ledgers.py`'s, written through the store's own methods at a fixed time:
  a finished run (4 answered, 1 failed, 1 expired), a run in progress (4 answered, 6 waiting, a $5 cost limit), and
  a parked call in another provider's batch, waiting longest.

  Scenario Outline: The views of one ledger, in each store
    Given a <store> ledger store holding the dashboard's ledger
    Then the run "reviews-live" counts 4 succeeded and 6 waiting, spent $0.006, worst case out $0.06
    And the run "reviews-finished" counts 4 succeeded, 1 failed and 1 expired
    And the batches come waiting longest first: batch-parked, batch-live-2, batch-live-1, batch-fin
    And the batch "batch-fin" shows 6 results costing $0.006, $0.012 at live prices
    And spend by provider is anthropic 10 answers $0.012
    And the failures group as BatchRequestErrored/invalid_request_error 1, BatchRequestExpired/expired 1
    And the request found by the parked call's custom id is "parked-call-1", waiting-on-batch in batch-parked
    And the request "fin-4" has one failed result from batch-fin, in run reviews-finished item 4
    And no request is found for "no-such-key"
    And the results over time come in 2 buckets of 6 and 4 answers
    When the run in progress's last batch is answered
    Then the run "reviews-live" counts 10 succeeded and 0 waiting, spent $0.015, worst case out $0

    Examples: in memory and SQLite
      | store  |
      | memory |
      | sqlite |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: The money's sums are kept as results are stored, and copied with the ledger, in each store
    Given a <store> ledger store holding the dashboard's ledger
    When a live answer costing $0.002 is stored for run "quick-look" by actor "summarizer" on model "model-large"
    Then spend by provider reads "anthropic 10 answers $0.012; live 1 answers $0.002"
    And spend by actor reads "reviewer 10 answers $0.012; summarizer 1 answers $0.002"
    And spend by model reads "model-small 10 answers $0.012; model-large 1 answers $0.002"
    And the money's sums read the same as a scan of every result
    When the ledger is copied into a new <copy> ledger store
    Then the copy's money reads the same as the original's

    Examples: in memory and SQLite
      | store  | copy   |
      | memory | sqlite |
      | sqlite | memory |

    @postgres
    Examples: PostgreSQL
      | store    | copy     |
      | postgres | sqlite   |
      | sqlite   | postgres |

  Scenario Outline: A batch's results stored again after a crash are counted and priced once, in each store
    Given a <store> ledger store holding the dashboard's ledger
    When the run in progress's last batch is answered, its results stored again by a collection replayed after a crash
    Then spend by provider reads "anthropic 16 answers $0.021"
    And the batch "batch-live-2" shows 6 results costing $0.009, $0.018 at live prices
    And the money's sums read the same as a scan of every result
    When the ledger is copied into a new <copy> ledger store
    Then the copy's money reads the same as the original's

    Examples: in memory and SQLite
      | store  | copy   |
      | memory | sqlite |
      | sqlite | memory |

    @postgres
    Examples: PostgreSQL
      | store    | copy     |
      | postgres | sqlite   |
      | sqlite   | postgres |

  Scenario Outline: A ledger whose sums counted a replayed batch's results twice has them made again, when it is opened
    Given a sqlite ledger store holding the dashboard's ledger
    When the run in progress's last batch is answered, its results stored again by a collection replayed after a crash
    And the ledger is taken back to schema <version>, its sums counting every result stored, and opened again
    Then spend by provider reads "anthropic 16 answers $0.021"
    And the money's sums read the same as a scan of every result

    Examples: SQLite
      | version |
      | 9       |

  Scenario Outline: A ledger written before the money's sums were kept has them made once, when it is opened
    Given a <store> ledger store holding the dashboard's ledger
    When the run in progress's last batch is answered
    And the ledger is taken back to the schema before its sums of results, and opened again
    Then spend by provider reads "anthropic 16 answers $0.021"
    And the money's sums read the same as a scan of every result

    Examples: SQLite
      | store  |
      | sqlite |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |
