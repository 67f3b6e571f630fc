Feature: The dashboard says when a run should end, and draws its intervals honestly
  As someone watching a bulk run of many batches on `lowtide dashboard`
  I want its ETA to count the batches still to send, as many at once as the run allows, at the pace its batches kept
  So that a run with most of its items unsent never reads "0s" while hours of work remain

  A batch run's pace is the mean time from sent to ended of its ended batches; a live run's, the rate of its
  answers. Times here are seconds from now; each batch is the run's (its items, sent and ended times).

  Scenario: Items not yet sent wait for places among the batches out, and take the pace each
    Given a run that sends 2000 items a batch, 3 at once, with 14000 items waiting
    And its batches:
      | sent | ended | items |
      | -300 | -200  | 2000  |
      | -300 | -210  | 2000  |
      | -300 | -190  | 2000  |
      | -50  |       | 2000  |
      | -40  |       | 2000  |
      | -30  |       | 2000  |
    Then its ETA is 250 seconds

  Scenario: A run whose items are all out ends when its last batch should
    Given a run that sends 2000 items a batch, 3 at once, with 3000 items waiting
    And its batches:
      | sent | ended | items |
      | -900 | -300  | 2000  |
      | -400 |       | 2000  |
      | -100 |       | 1000  |
    Then its ETA is 500 seconds

  Scenario: A batch that outlived the pace is due now, and the batches behind it start from now
    Given a run that sends 100 items a batch, 1 at once, with 200 items waiting
    And its batches:
      | sent  | ended | items |
      | -1000 | -900  | 100   |
      | -500  |       | 100   |
    Then its ETA is 100 seconds

  Scenario: An ended batch not yet collected is counted as ending now
    Given a run that sends 100 items a batch, 1 at once, with 100 items waiting
    And its batches:
      | sent | ended | items | out |
      | -300 | -200  | 100   | no  |
      | -150 | -140  | 100   | yes |
    Then its ETA is 0 seconds

  Scenario: With no batch size in its options, the run's largest batch is the size its unsent items go in
    Given a run that sends at most 2 batches at once, with 300 items waiting
    And its batches:
      | sent | ended | items |
      | -100 | -40   | 100   |
    Then its ETA is 120 seconds

  Scenario: More batches out than the run allows (resumed with other settings): places free only as they drop below it
    Given a run that sends 100 items a batch, 2 at once, with 500 items waiting
    And its batches:
      | sent | ended | items |
      | -200 | -100  | 100   |
      | -90  |       | 100   |
      | -80  |       | 100   |
      | -70  |       | 100   |
      | -60  |       | 100   |
    Then its ETA is 130 seconds

  Scenario: No ETA before a batch of the run has ended
    Given a run that sends 100 items a batch, 2 at once, with 300 items waiting
    And its batches:
      | sent | ended | items |
      | -60  |       | 100   |
    Then it has no ETA

  Scenario: A live run's ETA is its waiting items at the rate of its answers
    Given a live run whose 300 answers came over the last 600 seconds, with 150 items waiting
    Then its ETA is 300 seconds

  Scenario: The Runs page gives the run in progress the ETA of its batch still out
    Given the dashboard's ledger in memory, read by a dashboard at its own time
    When the Runs page is read
    Then the run "reviews-live" shows an ETA of 1200 seconds
    And the run "reviews-finished" shows no ETA

  Scenario: A run's chart has every interval from its first answer to its last, empty ones as zero
    Given the dashboard's ledger in memory, read by a dashboard at its own time
    And the run in progress's waiting batch is answered 40 minutes later
    When the Runs page is read
    Then the chart of "reviews-live" has 41 intervals of a minute, 39 of them empty
    And the chart of "reviews-live" counts 10 answers in all

  Scenario Outline: Small costs are shown to two significant digits, so that small batches' costs differ
    Then the dashboard shows $<dollars> as "<shown>"

    Examples:
      | dollars   | shown     |
      | 0         | $0        |
      | 0.00003   | $0.000030 |
      | 0.0000451 | $0.000045 |
      | 0.006     | $0.0060   |
      | 0.12346   | $0.1235   |
      | 1234.5    | $1,234.50 |
