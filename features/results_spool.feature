Feature: A run's spool of result lines, found again after a kill, never trusted past damage, never written over a user's file
  As a user whose long bulk run was stopped and started again
  I want the result lines an earlier go spooled found again as far as they are whole, the rest made again from the
  ledger, and a file of mine at the spool's place left as it was
  So that a restart neither loses nor doubles a line, nor a single byte of a file lowtide did not write

  Scenario: A second go finds the lines the first go spooled, with what they add to the run's report
    Given a spool kept for run "run-1" of 3 items, holding the lines of items 0 and 2
    When the run's next go opens the spool
    Then the next go finds the lines of items 0 and 2, and no line for item 1
    And the report is given 2 successes from the spool

  Scenario: A record damaged on disk ends what is read: the records after it are made again, and the file cut back
    Given a spool kept for run "run-1" of 3 items, holding the lines of items 0, 1 and 2
    And a byte of the spool's record of item 1 is changed on disk
    When the run's next go opens the spool
    Then the next go finds the lines of items 0, and no line for item 1, 2
    And the report is given 1 success from the spool
    And the spool file ends after the record of item 0

  Scenario: An item spooled twice is counted once: the later line stands
    Given a spool kept for run "run-1" of 3 items, holding the lines of items 0 and 0
    When the run's next go opens the spool
    Then the next go finds the later line of item 0
    And the report is given 1 success from the spool

  Scenario: A file of the user's at the spool's place is left alone: the run spools to a temporary file instead
    Given a file of the user's at the spool's place of run "run-1" holding "my notes, not a spool"
    When the run's next go opens the spool
    And the go spools the line of item 0
    Then the next go finds the lines of items 0, and no line for item 1, 2
    And the user's file still holds "my notes, not a spool"

  Scenario: A spool whose folder is gone falls back to a temporary file, and the go still keeps its lines
    Given the spool's folder of run "run-1" does not exist
    When the run's next go opens the spool
    And the go spools the line of item 0
    Then the next go finds the lines of items 0, and no line for item 1, 2
    And the spool kept no file
