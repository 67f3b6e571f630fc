@stores
Feature: Spend by team and project, and caps that hold across processes and hosts
  As the owner of an organisation's model budget
  I want every request's cost attributed to a team and project, and caps per team or project checked before sending
  So that no team crosses its cap, whatever process or host sends its calls, and every dollar has an owner

  # With max_tokens 4000, a call to claude-sonnet-5-5 can cost at most $0.020028 at batch prices; its emulated answer
  # costs $0.000069.

  Background:
    Given an emulated Anthropic API whose batches take 120 seconds

  Scenario: A team's answered call is attributed, its reservation settled to what the answer cost
    Given an actor "planner" with:
      """
      batch_processing: batch
      max_tokens: 4000
      team: research
      project: tides
      tags: {env: test}
      """
    When the actor is asked "Plan issue 42"
    Then the answer is the emulated reply to "Plan issue 42"
    And the ledger's spend shows team "research", project "tides", actor "planner": 1 request, its answer's cost spent, nothing reserved
    And the audit holds a "create" record of team "research" for the actor "planner"

  Scenario: A call whose worst case would cross its team's cap is refused before anything is recorded or sent
    Given the ledger caps team "research" at $0.015 per day
    And an actor "planner" with:
      """
      batch_processing: batch
      max_tokens: 4000
      team: research
      """
    When the actor is asked "Plan issue 42"
    Then a SpendCapExceededError is raised
    And the error message contains "team 'research''s cap of $0.015 per day"
    And the error message contains "Spent $0.000000 and reserved $0.000000"
    And the error message contains "could add up to $0.020028"
    And the API was sent 0 requests
    And the ledger holds no requests and no batches
    And the audit holds a "refused" record of team "research" for the actor "planner"

  Scenario: A cap of a fraction of a cent reads as it was set, in the refusal, `lowtide spend` and the dashboard
    Given the ledger caps team "research" at $0.000001 per day
    And an actor "planner" with:
      """
      batch_processing: batch
      max_tokens: 4000
      team: research
      """
    When the actor is asked "Plan issue 42"
    Then a SpendCapExceededError is raised
    And the error message contains "team 'research''s cap of $0.000001 per day"
    When the spend report is asked for with `--since 1970-01-01`
    Then its text has the line "  cap: team 'research''s cap of $0.000001 per day"
    And the dashboard's Spend page shows team "research"'s day cap as "$0.000001"

  Scenario: Calls made at once count each other's reservations against their project's cap
    Given the ledger caps project "tides" at $0.03 in all
    And an actor "planner" with:
      """
      batch_processing: batch
      max_tokens: 4000
      project: tides
      """
    When the actor is asked these prompts at once:
      | prompt |
      | one    |
      | two    |
    Then 1 call was answered and 1 was refused with SpendCapExceededError
    And the API was sent 1 request

  Scenario: Calls made at once by a team's actor with a budget: the budget check and its reservation are one step
    Given an actor "planner" with:
      """
      batch_processing: batch
      max_tokens: 4000
      max_cost_usd: 0.03
      team: research
      """
    When the actor is asked "Plan issue 42"
    And the actor is asked these prompts at once:
      | prompt |
      | one    |
      | two    |
    Then 1 call was answered and 1 was refused with BudgetExceededError
    And the API was sent 2 requests
    And the ledger's spend shows team "research": 2 requests, their answers' cost spent, nothing reserved

  Scenario: A team's parked batch cancelled: its reservation let go, the cancel audited and shown by `lowtide spend`
    Given an actor "planner" with:
      """
      batch_processing: batch
      max_tokens: 4000
      team: research
      """
    When the actor parks "Plan issue 42" with the key "k1"
    Then the ledger's spend shows $0.020028 reserved
    When lowtide cancels the Anthropic key "k1"
    Then the ledger's spend shows nothing reserved
    And the audit holds a "cancel" record of team "research" for the actor "planner"
    When the spend report is asked for with `--audit --json`
    Then its JSON's audit holds a "cancel" record of team "research" for the actor "planner", $0.020028

  Scenario: spend_owner attributes the calls inside it to another team, whose cap then holds them
    Given the ledger caps team "ops" at $0.01 per month
    And an actor "planner" with:
      """
      batch_processing: batch
      max_tokens: 4000
      team: research
      """
    When the actor is asked "Plan issue 42" for team "ops"
    Then a SpendCapExceededError is raised
    And the API was sent 0 requests

  Scenario: A reservation let go counts nothing against its cap, and its key asked again is judged anew
    Given the ledger caps team "research" at $0.03 per day
    When the ledger reserves $0.02 for key "k1" of team "research", then releases it
    Then the ledger admits $0.02 for key "k2" of team "research"
    And the ledger refuses $0.02 for key "k3" of team "research", with $0.02 reserved
    And the ledger refuses $0.02 for key "k1" of team "research", with $0.02 reserved

  Scenario: run_many of a team's actor is admitted against its cap all together, or not at all
    Given the ledger caps team "research" at $0.045 per day
    And an actor "planner" with:
      """
      batch_processing: batch
      max_tokens: 4000
      team: research
      """
    When the actor runs "one, two, three" with run_many
    Then a SpendCapExceededError is raised
    And the error message contains "these 3 requests together could add up to $0.0600"
    And the API was sent 0 requests
    And the ledger holds no requests and no batches
    And the audit holds 1 "refused" record and 0 "create" records
    When the actor runs "one, two" with run_many
    Then the run_many call got the emulated replies to "one, two", in order
    And the ledger's spend shows team "research": 2 requests, their answers' cost spent, nothing reserved
    And the audit holds 1 "refused" record and 2 "create" records

  Scenario: run_many inside spend_owner is held by that team's cap, though its actor names no team
    Given the ledger caps team "ops" at $0.03 per month
    And an actor "planner" with:
      """
      batch_processing: batch
      max_tokens: 4000
      """
    When the actor runs "one, two" with run_many for team "ops"
    Then a SpendCapExceededError is raised
    And the API was sent 0 requests

  Scenario: A bulk run sends what its team's cap holds, and the rest as the answers out make room
    Given the ledger caps team "research" at $0.045 per day
    And an actor "planner" with:
      """
      batch_processing: batch
      max_tokens: 4000
      team: research
      """
    And 5 prompts "Review {n}"
    When the actor maps the prompts with 5 items per batch
    Then the run's groups are 5 completed, 0 failed, 0 canceled and 0 not run
    And the API received 3 batches of 2, 2 and 1 requests
    And the ledger's spend shows team "research": 5 requests, their answers' cost spent, nothing reserved

  Scenario: A bulk run whose first request would cross its team's cap sends nothing, each item not run naming the cap
    Given the ledger caps team "research" at $0.015 per day
    And an actor "planner" with:
      """
      batch_processing: batch
      max_tokens: 4000
      team: research
      """
    And 5 prompts "Review {n}"
    When the actor maps the prompts with 5 items per batch
    Then the run's groups are 0 completed, 0 failed, 0 canceled and 5 not run
    And every item not run says "Spend cap reached: team 'research''s cap of $0.015 per day"
    And the API was sent 0 requests
    And the ledger's spend shows nothing reserved

  Scenario: `lowtide spend` reports by day, team, project, actor and model, as JSON and CSV, and sets a cap
    Given an actor "planner" with:
      """
      batch_processing: batch
      max_tokens: 4000
      team: research
      project: tides
      """
    When the actor is asked "Plan issue 42"
    And the spend report is asked for with `--json --set-cap team:research:month:25`
    Then its JSON holds one line of team "research" and the cap team "research" month $25
    When the spend report is asked for with `--csv --since 1970-01-01`
    Then its CSV has the header "day,team,project,actor,model,requests,spent_usd,reserved_usd" and a line of the day holding "research,tides,planner,claude-sonnet-5-5,1,0.000069,0.000000"

  Scenario: A bulk run's time limit cancels its batch: the reservations let go and the cancel audited
    Given an actor "planner" with:
      """
      batch_processing: batch
      max_tokens: 4000
      team: research
      """
    And 1 prompts "Review {n}"
    When the actor maps the prompts with 3 items per batch, 1 batch at a time, and a time limit of 100 seconds
    Then every item was answered with the emulated reply to its prompt, or failed saying "its batch was canceled" or "passed before it was sent"
    And the audit holds 1 "cancel" record
    And the "cancel" audit record is dated by the actor's clock, at or after its time limit
    And the ledger's spend shows nothing reserved
