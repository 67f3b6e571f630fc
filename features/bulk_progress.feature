Feature: Bulk progress
  As a developer running thousands of prompts through batches that can take hours
  I want to see how far a run is, what it has cost and when it should end, on a terminal, in a log or in my own code
  So that I can leave it to run with confidence, or stop it before it costs too much

  Background:
    Given a run "r1" whose progress is:
      | field             | value |
      | items_total       | 5000  |
      | items_done        | 1000  |
      | succeeded         | 980   |
      | failed            | 20    |
      | canceled          | 0     |
      | not_run           | 0     |
      | batches_total     | 5     |
      | batches_done      | 2     |
      | batches_in_flight | 1     |
      | cost_usd          | 1.23  |
      | cost_limit_usd    | 10    |
      | elapsed_seconds   | 62.5  |

  Scenario: One line tells the items and their outcomes, the batches, the cost against the limit, and the time left
    Then the progress line is "run r1: 1000/5000 items (980 ok, 20 failed, 0 expired, 0 canceled, 0 not run) · batches 2/5 done, 1 in flight · $1.23 of $10.00 · ETA 4m10s"

  Scenario: Expired items are counted as expired, apart from the failed ones
    Given a run "r2" whose progress is:
      | field          | value |
      | items_total    | 10    |
      | items_done     | 10    |
      | succeeded      | 6     |
      | failed         | 1     |
      | expired        | 2     |
      | canceled       | 0     |
      | not_run        | 1     |
      | batches_total  | 3     |
      | batches_done   | 3     |
      | cost_limit_usd |       |
    Then the progress line is "run r2: 10/10 items (6 ok, 1 failed, 2 expired, 0 canceled, 1 not run) · batches 3/3 done, 1 in flight · $1.23 spent · done in 1m02s"

  Scenario Outline: The time left comes from the rate at which items have finished so far
    When the run has done <done> of <total> items after <elapsed> seconds
    Then the progress says "<text>", and the seconds left are <seconds>

    Examples:
      | done | total | elapsed | text          | seconds |
      | 0    | 100   | 600     | ETA unknown   | None    |
      | 10   | 100   | 0       | ETA unknown   | None    |
      | 25   | 100   | 60      | ETA 3m00s     | 180     |
      | 50   | 100   | 30      | ETA 30s       | 30      |
      | 1    | 1000  | 10      | ETA 2h46m     | 9990    |
      | 1    | 3     | 30.4    | ETA 1m01s     | 60.8    |
      | 100  | 100   | 3725    | done in 1h02m | 0       |

  Scenario Outline: A batch run's time left is its batches' reckoning, whatever the items' rate would say
    When the batch run has done <done> of <total> items after <elapsed> seconds, <paced> seconds left by its batches
    Then the progress says "<text>", and the seconds left are <seconds>

    Examples:
      | done | total | elapsed | paced | text          | seconds |
      | 1    | 20000 | 1800    | None  | ETA unknown   | None    |
      | 3    | 12    | 70      | 2     | ETA 2s        | 2       |
      | 6    | 12    | 70      | 70    | ETA 1m10s     | 70      |
      | 12   | 12    | 140     | None  | done in 2m20s | 0       |

  Scenario Outline: Money is shown to the cent, and to a hundredth of a cent below one cent
    When the run has spent $<spent> of a limit of <limit>
    Then the progress line shows "<text>"

    Examples:
      | spent  | limit  | text              |
      | 1.234  | $10    | $1.23 of $10.00   |
      | 12.345 | none   | $12.35 spent      |
      | 0.0012 | none   | $0.0012 spent     |
      | 0      | $5     | $0.00 of $5.00    |

  # -- plain lines ------------------------------------------------------------------------------------------------

  Scenario: Plain lines come at once, then at most every interval, and a final line ends the run
    Given a plain progress reporter that prints at most every 30 seconds, by the manual clock
    When the run reports its progress at the seconds 0, 10, 29, 30, 45, 61 and 62
    And the run ends at second 70
    Then the reporter printed the lines of the seconds 0, 30, 61 and 70

  Scenario: An interval of 0 prints every update, and the final line is not printed a second time
    Given a plain progress reporter that prints at most every 0 seconds, by the manual clock
    When the run reports its progress at the seconds 0, 0 and 1
    And the run ends at second 1
    Then the reporter printed the lines of the seconds 0, 0 and 1

  Scenario: The final line is printed once, even when the run ends later than its last update said it all
    Given a plain progress reporter that prints at most every 30 seconds, by the manual clock
    When the run reports its progress at the seconds 0 and 31
    And the run ends at second 45, with nothing new since second 31
    Then the reporter printed the lines of the seconds 0 and 31

  Scenario: The final line is printed when it says something new, even within the interval
    Given a plain progress reporter that prints at most every 30 seconds, by the manual clock
    When the run reports its progress at the seconds 0 and 31
    And the run ends at second 32
    Then the reporter printed the lines of the seconds 0, 31 and 32

  Scenario: A negative interval is refused
    When a plain progress reporter is made to print every -5 seconds
    Then a ConfigurationError is raised
    And the error message contains "The progress interval must be 0 seconds or more, not -5."

  Scenario Outline: A stream that cannot write the middle dot gets bars instead
    Given a plain progress reporter on a stream encoded as <encoding>
    When the run reports its progress at the seconds 0
    Then the reporter printed "run r1: 0/5000 items (0 ok, 0 failed, 0 expired, 0 canceled, 0 not run) <s> batches 2/5 done, 1 in flight <s> $1.23 of $10.00 <s> ETA unknown"

    Examples:
      | encoding | s   |
      | ascii    | \|  |
      | latin-1  | ·   |
      | utf-8    | ·   |

  # -- the rich bar -----------------------------------------------------------------------------------------------

  Scenario: On a terminal a live bar shows the items, the outcomes, the batches, the cost and the time left
    Given a rich progress reporter on a terminal 160 columns wide
    When the run reports its progress
    Then the terminal shows "run r1", "1000/5000 items · ETA 4m10s" and "980 ok, 20 failed, 0 expired, 0 canceled, 0 not run · batches 2/5 done, 1 in flight · $1.23 of $10.00"
    And the terminal never showed the count "0/5000"
    When the run has done 2000 of 5000 items after 100 seconds
    And the run reports its progress
    Then the terminal shows "2000/5000 items · ETA 2m30s"
    When the run has done 5000 of 5000 items after 300 seconds
    And the run is closed twice, then reports its progress again
    Then the terminal shows "5000/5000 items · done in 5m00s"
    And the terminal's last frame is the finished run

  Scenario: A run id that looks like rich markup is shown as it is
    Given a run "[bold]r2[/bold]" whose progress is:
      | field      | value |
      | items_done | 3     |
    And a rich progress reporter on a terminal 160 columns wide
    When the run is closed
    Then the terminal shows "run [bold]r2[/bold]"

  Scenario: On a console that is not a terminal, the rich reporter prints only the final state
    Given a rich progress reporter on a console that is not a terminal
    When the run reports its progress
    Then the console shows nothing
    When the run is closed
    Then the console shows "1000/5000 items · ETA 4m10s"

  # -- choosing a reporter ----------------------------------------------------------------------------------------

  Scenario Outline: The mode and the stream choose the reporter
    Given the environment variable "TERM" is "<TERM>"
    When a reporter is chosen for the mode "<mode>" on <stream><callback>
    Then the reporter is <reporters>

    Examples:
      | mode  | stream            | callback        | TERM  | reporters                          |
      | auto  | a file            |                 | xterm | PlainReporter                      |
      | auto  | a terminal        |                 | xterm | RichReporter                       |
      | auto  | a terminal        |                 | dumb  | PlainReporter                      |
      | auto  | a closed stream   |                 | xterm | PlainReporter                      |
      | auto  | a bare writer     |                 | xterm | PlainReporter                      |
      | rich  | a file            |                 | xterm | RichReporter                       |
      | plain | a terminal        |                 | xterm | PlainReporter                      |
      | none  | a terminal        |                 | xterm | NullReporter                       |
      | none  | a file            | , with a callback | xterm | CallbackReporter                 |
      | auto  | a file            | , with a callback | xterm | PlainReporter and CallbackReporter |
      | auto  | a terminal        | , with a callback | xterm | RichReporter and CallbackReporter  |

  Scenario: Auto mode prints plain lines into a stream that is not a terminal
    When a reporter is chosen for the mode "auto" on a file
    And the run reports its progress, then ends
    Then the file holds the progress line once, without terminal codes

  Scenario: With no stream given, progress goes to standard error, leaving standard output to results
    When a reporter is chosen for the mode "plain" with no stream, and the run reports its progress
    Then standard error holds the progress line and standard output nothing

  Scenario: A mode that does not exist is refused
    When a reporter is chosen for the mode "fancy" on a file
    Then a ConfigurationError is raised
    And the error message contains "Unknown progress mode 'fancy'; use one of auto, rich, plain, none."

  Scenario: A reporter of no kind at all ignores progress
    When a reporter is chosen for the mode "none" on a file
    And the run reports its progress, then ends
    Then the file is empty

  # -- callbacks --------------------------------------------------------------------------------------------------

  Scenario: A callback gets every snapshot, the final one included
    When a reporter is chosen for the mode "none" on a file, with a callback
    And the run reports its progress, then ends
    Then the callback got 2 snapshots of the run "r1"

  Scenario: A callback that raises does not stop the run or the other reporters, and is logged once
    Given a callback that raises every time
    When a reporter is chosen for the mode "plain" every 0 seconds on a file, with that callback
    And the run reports its progress 3 times, then ends
    Then the file holds 3 progress lines
    And the callback was called 4 times and failed 4 times
    And one warning was logged, saying the callback raised and the run goes on
