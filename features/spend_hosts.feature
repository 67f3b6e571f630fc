@postgres
Feature: A team's cap holds across every host of a PostgreSQL ledger
  As the owner of a team's budget whose programs run on many hosts
  I want each host's admissions judged against what every other host has reserved, in one transaction each
  So that hosts racing together can never spend past the cap

  Scenario: Three hosts racing for a team's cap admit exactly what fits, and no more
    Given a PostgreSQL ledger capping team "research" at $1.00 in all
    When 3 hosts, each with its own connections, reserve 20 requests of $0.10 each for team "research" at once
    Then 10 requests were admitted and 50 refused
    And the ledger holds $1.00 reserved for team "research", and an audit record for each of the 60

  Scenario: Three hosts racing to reserve whole batches admit only whole batches that fit together
    Given a PostgreSQL ledger capping team "research" at $1.00 in all
    When 3 hosts, each with its own connections, reserve 5 groups of 4 requests of $0.10 each for team "research" at once
    Then 2 groups were admitted and 13 refused
    And the ledger holds $0.80 reserved for team "research", and an audit record for each of the 21
