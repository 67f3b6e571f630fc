Feature: Clocks
  As a developer testing code that waits on batches
  I want time to be a dependency: the real clock in production, a manual one in tests
  So that hours of polling run in no time, and the waits are exactly what I can assert on

  Scenario: The manual clock moves forward at once when asked to sleep, and records each wait
    Given a manual clock
    When the clock sleeps 30 seconds, then 0.5 seconds
    Then the manual clock says 30.5 seconds have passed
    And the manual clock recorded the waits 30, 0.5

  Scenario: The manual clock never moves backwards
    Given a manual clock
    When the manual clock is moved back 5 seconds
    Then it refuses with "time cannot move backwards"
    And the manual clock says 0 seconds have passed

  Scenario: The system clock tells the real time and really waits
    Given the system clock
    Then the system clock tells the time within a second of the real time
    And the system clock can wait 0 seconds
