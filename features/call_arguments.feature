Feature: A call's own arguments are checked before anything is sent
  As a developer calling lowtide from Python
  I want a budget or a key that cannot be right to be refused with a clear error naming it
  So that a slip (a negative budget, an empty or numeric key) is never taken as a limit, or silently replaced

  Background:
    Given an emulated Anthropic API
    And an actor "planner" in batch mode

  Scenario Outline: A budget that is not a finite amount of dollars above 0 is refused, in every mode
    When the actor is <called> "Plan issue 42" with max_cost_usd = <value>
    Then a ConfigurationError is raised
    And the error message is:
      """
      max_cost_usd: a budget must be a finite number of US dollars more than 0 (got <shown>).
      """
    And the error names the field "max_cost_usd"
    And the API received no calls at all
    And the ledger holds no requests and no batches

    Examples:
      | called  | value | shown        |
      | asked   | -1    | int -1       |
      | asked   | 0     | int 0        |
      | asked   | 0.0   | float 0.0    |
      | asked   | nan   | float nan    |
      | asked   | inf   | float inf    |
      | asked   | -inf  | float -inf   |
      | asked   | "5"   | str '5'      |
      | asked   | True  | bool True    |
      | parking | -1    | int -1       |
      | parking | nan   | float nan    |

  Scenario: A live call's budget is checked the same way
    Given an actor "chatter" in live mode
    When the actor is asked "Hello" with max_cost_usd = -0.5
    Then a ConfigurationError is raised
    And the error message is:
      """
      max_cost_usd: a budget must be a finite number of US dollars more than 0 (got float -0.5).
      """
    And the API received no calls at all

  Scenario: A budget given as a Decimal is taken
    When the actor is asked "Plan issue 42" with max_cost_usd = Decimal("0.05")
    Then the answer is the emulated reply to "Plan issue 42"

  Scenario Outline: An actor's budget in its configuration must be finite
    Given a file "actors.yaml" containing:
      """
      name: planner
      model: claude-sonnet-5-5
      max_cost_usd: <value>
      """
    When the actors are loaded from "actors.yaml"
    Then a ConfigurationError is raised
    And the error message contains "max_cost_usd: Input should be a finite number (got <shown>)"

    Examples:
      | value | shown |
      | .inf  | inf   |
      | .nan  | nan   |

  Scenario Outline: A bulk run's cost limit is checked the same way
    When a bulk run is built with max_cost_usd = <value>
    Then a ConfigurationError is raised
    And the error message is:
      """
      max_cost_usd: a budget must be a finite number of US dollars more than 0 (got <shown>).
      """

    Examples:
      | value | shown     |
      | nan   | float nan |
      | -2    | int -2    |

  Scenario Outline: A key that is not a non-empty string is refused, never replaced by a derived one
    When the actor is <called> "Plan issue 42" with key = <value>
    Then a ConfigurationError is raised
    And the error message is:
      """
      key: a key must be a non-empty string naming the call (got <shown>).
      """
    And the error names the field "key"
    And the API received no calls at all
    And the ledger holds no requests and no batches

    Examples:
      | called  | value     | shown          |
      | asked   | ""        | str ''         |
      | asked   | "   "     | str '   '      |
      | asked   | 123       | int 123        |
      | asked   | b"plan"   | bytes b'plan'  |
      | parking | ""        | str ''         |
      | parking | 123       | int 123        |

  Scenario Outline: Looking up a parked call needs a real key too
    When the actor is asked for the <what> of key = <value>
    Then a ConfigurationError is raised
    And the error message is:
      """
      key: a key must be a non-empty string naming the call (got <shown>).
      """

    Examples:
      | what   | value | shown   |
      | result | 42    | int 42  |
      | ticket | ""    | str ''  |
