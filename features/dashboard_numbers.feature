Feature: The dashboard's numbers agree with the run's own summary, and a request's page shows its prompt, never a key
  As someone watching a run on `lowtide dashboard`
  I want its counts, worst case and answers to be the numbers `lowtide status` gives, and a request's prompt on its page
  So that the page tells the truth mid-run and after, and never shows a key

  `waiting`: in a batch the API has; `pending`: not yet in one (unsent, or its batch's create in flight); the worst
  case still out counts both, and says how many of them no cost limit priced; `answers` never counts a failure.

  Scenario: A request's page shows its prompt and hides every field that holds a credential
    Given the dashboard's ledger in memory, read by a dashboard at its own time
    And a request "keyed-1" sent with the prompt "Summarise the review" and the header "x-api-key: sk-ant-test-0123456789"
    When the page of request "keyed-1" is read
    Then its prompt shows "Summarise the review" and the model's limit of 64 tokens
    And nothing on the page holds "sk-ant-test-0123456789"

  Scenario Outline: During and after a run, the dashboard counts its items as `lowtide status` does, and its worst case out
    Given the dashboard's ledger in a <store> store, read by a dashboard at its own time
    And a run caught mid-way: 2 items in a batch the API has, 1 in a batch being created, 3 not yet in a batch
    Then the Runs page and `lowtide status` agree on the run: 0 succeeded, 0 failed, 2 waiting, 4 pending
    And the Runs page shows the run in progress with $0.06 of worst case still out
    When the batch the API has ends with one answer and one failure
    Then the Runs page and `lowtide status` agree on the run: 1 succeeded, 1 failed, 0 waiting, 4 pending
    And the Runs page shows the run in progress with $0.04 of worst case still out
    And the Money page counts 1 answer and 1 failure for the actor "splitter", not 2 answers

    Examples:
      | store  |
      | memory |
      | sqlite |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |

  Scenario Outline: A run with no cost limit shows its items out as not priced, not as $0 of worst case
    Given the dashboard's ledger in a <store> store, read by a dashboard at its own time
    And a run with no cost limit caught mid-way: 2 items in a batch the API has, 1 in a batch being created, 3 not yet in a batch
    Then the Runs page shows the run in progress with no worst case priced and 6 items out not priced
    When the batch the API has ends with one answer and one failure
    Then the Runs page shows the run in progress with no worst case priced and 4 items out not priced

    Examples:
      | store  |
      | memory |
      | sqlite |

    @postgres
    Examples: PostgreSQL
      | store    |
      | postgres |
