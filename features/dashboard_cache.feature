Feature: The dashboard answers at once, however large the ledger: what it counted is kept and counted again in the background
  A run of a million items takes seconds of a core to count. `lowtide dashboard` keeps what its views counted
  (`Cached`) and hands it out while the next count is made in the background: only the first reader of a view waits
  for it, a view is counted again at most every five times as long as it took, and each run says when it was
  counted. A small ledger, quick to count, is counted again by the reader that finds it stale, so it is shown as it
  is now. The Runs page does not even wait for a run's first count longer than its patience: a run still being
  counted is shown as such, and with its counts on the next refresh. Here the counting's cost is a clock moved by the count itself, and the background is run by hand.

  Scenario: Readers of a fresh value share one count
    Given a dashboard cache whose counts each take 3 seconds
    When "runs" is read 5 times
    Then "runs" was counted 1 time
    And every read of "runs" gave count 1

  Scenario: A stale value that was slow to count is handed out at once while one count is made in the background
    Given a dashboard cache whose counts each take 3 seconds
    And "runs" was read once
    When 20 seconds pass on the counting clock
    And "runs" is read 4 times
    Then every read of "runs" gave count 1
    And 1 count of "runs" waits in the background
    When the counts waiting in the background are made
    And "runs" is read 1 time
    Then the last read of "runs" gave count 2
    And "runs" was counted 2 times

  Scenario: A value is kept fresh for five times as long as it took to count
    Given a dashboard cache whose counts each take 3 seconds
    And "runs" was read once
    When 14 seconds pass on the counting clock
    And "runs" is read 1 time
    Then no count of "runs" waits in the background
    When 2 seconds pass on the counting clock
    And "runs" is read 1 time
    Then 1 count of "runs" waits in the background

  Scenario: A value quick to count is counted again by the reader that finds it stale
    Given a dashboard cache whose counts each take 0.01 seconds
    And "runs" was read once
    When 2 seconds pass on the counting clock
    And "runs" is read 1 time
    Then the last read of "runs" gave count 2
    And no count of "runs" waits in the background

  Scenario: A final value is kept until its version changes, then counted again in the background
    Given a dashboard cache whose counts each take 3 seconds
    And "run:r1" was read once as version 1, final
    When 3600 seconds pass on the counting clock
    And "run:r1" is read 1 time as version 1
    Then the last read of "run:r1" gave count 1
    And no count of "run:r1" waits in the background
    When "run:r1" is read 1 time as version 2
    Then the last read of "run:r1" gave count 1
    And 1 count of "run:r1" waits in the background
    When the counts waiting in the background are made
    And "run:r1" is read 1 time as version 2
    Then the last read of "run:r1" gave count 2

  Scenario: A count that fails in the background is logged, and the next reader counts again and is told why
    Given a dashboard cache whose counts each take 3 seconds
    And "failures" was read once
    When 20 seconds pass on the counting clock
    And "failures" is read 1 time
    And the ledger becomes unreadable
    And the counts waiting in the background are made
    Then the dashboard logged "could not count failures again"
    And reading "failures" fails with "the ledger is unreadable"

  Scenario: Readers arriving while the first count is made wait for it rather than counting again
    Given a dashboard cache whose first count of "runs" is held until released
    When 3 threads read "runs" while its first count is held
    And the first count is released
    Then "runs" was counted 1 time
    And every thread read "runs" as count 1

  Scenario: A page that must not wait is told a value is not counted yet, and the count goes on in the background
    Given a dashboard cache whose counts each take 3 seconds
    When "runs" is read by a page that does not wait
    Then the page was told "runs" is not counted yet
    And 1 count of "runs" waits in the background
    When "runs" is read by a page that does not wait
    Then the page was told "runs" is not counted yet
    And 1 count of "runs" waits in the background
    When the counts waiting in the background are made
    And "runs" is read by a page that does not wait
    Then the last read of "runs" gave count 1
    And "runs" was counted 1 time

  Scenario: A quick count made again in the background is waited for no longer than the page's patience
    Given a dashboard cache whose counts each take 0.01 seconds
    When "money" is read by a page that does not wait
    And the counts waiting in the background are made
    And 2 seconds pass on the counting clock
    And "money" is read by a page that does not wait
    Then the last read of "money" gave count 1
    And 1 count of "money" waits in the background
    When the counts waiting in the background are made
    And "money" is read by a page that does not wait
    Then the last read of "money" gave count 2

  Scenario: A first count that failed in the background is told to the next page, which starts it again after
    Given a dashboard cache whose counts each take 3 seconds
    When the ledger becomes unreadable
    And "failures" is read by a page that does not wait
    And the counts waiting in the background are made
    Then the dashboard logged "could not count failures again"
    And reading "failures" by a page that does not wait fails with "the ledger is unreadable"
    When the ledger becomes readable again
    And "failures" is read by a page that does not wait
    And the counts waiting in the background are made
    And "failures" is read by a page that does not wait
    Then the last read of "failures" gave count 1

  Scenario: The Runs page is answered with what was last counted, and says when that was
    Given the dashboard's ledger in memory, read by a dashboard whose counts of a run take 3 seconds
    When the Runs page is read
    Then the run "reviews-live" is shown as being counted, with its 10 items
    When the counts waiting in the background are made
    And the Runs page is read
    Then the run "reviews-live" shows 4 succeeded and 6 waiting, counted 6 seconds before the page
    When the run in progress's waiting batch is answered
    And 20 seconds pass on the counting clock
    And the Runs page is read
    Then the run "reviews-live" shows 4 succeeded and 6 waiting, counted 26 seconds before the page
    When the counts waiting in the background are made
    And the Runs page is read
    Then the run "reviews-live" shows 10 succeeded and 0 waiting, counted 3 seconds before the page
    And the run "reviews-live" is finished
