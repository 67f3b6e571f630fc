@stores
Feature: Budgets: a request that could cross its budget is never sent
  As a developer letting an agent spend money on its own
  I want a spending limit per call or per actor, checked against the worst a request can cost before it is sent
  So that no call, and no actor over all its calls, can cost more than I allowed

  # With max_tokens 4000, a call to claude-sonnet-5-5 can cost at most a little over $0.02 at batch prices
  # ($0.020028: its estimated input, and 4,000 output tokens at $5 a million); its emulated answer costs $0.000069.
  # Before a budget is checked, lowtide asks the API's models endpoint whether the model exists (once).

  Background:
    Given an emulated Anthropic API whose batches take 120 seconds, which also serves "claude-unknown-9"

  Scenario: A call whose worst case is over its own budget is refused, and nothing is sent or recorded
    Given an actor "planner" with:
      """
      batch_processing: batch
      max_tokens: 4000
      """
    When the actor is asked "Plan issue 42" with:
      """
      max_cost_usd: 0.01
      """
    Then a BudgetExceededError is raised
    And the budget error is for "this call to actor 'planner'", with a limit of $0.01, nothing spent, and the worst case of "Plan issue 42"
    And the error message contains "Nothing was sent."
    And the API was only asked about the model
    And the ledger holds no requests and no batches

  Scenario: A call whose worst case fits its own budget is sent
    Given an actor "planner" with:
      """
      batch_processing: batch
      max_tokens: 4000
      """
    When the actor is asked "Plan issue 42" with:
      """
      max_cost_usd: 0.05
      """
    Then the answer is the emulated reply to "Plan issue 42"

  Scenario: The actor's budget counts what its answers already cost
    Given an actor "planner" with:
      """
      batch_processing: batch
      max_tokens: 4000
      max_cost_usd: 0.02005
      """
    When the actor is asked "Plan issue 42"
    Then the answer is the emulated reply to "Plan issue 42"
    When the API's call counts are noted
    And the actor is asked "Plan issue 43"
    Then a BudgetExceededError is raised
    And the budget error is for "actor 'planner'", with a limit of $0.02005, what its answers cost spent, and the worst case of "Plan issue 43"
    And the API received no calls since they were noted
    And the ledger holds 1 request, whose key starts with "auto-"

  Scenario: The actor's budget counts the worst case of its calls not yet answered
    Given an actor "planner" with:
      """
      batch_processing: batch
      max_tokens: 4000
      max_cost_usd: 0.03
      """
    Given the actor parked "Plan issue 42" with the key "plan-issue-42", in a program that then ended
    When the actor is asked "Plan issue 43" with the key "plan-issue-43"
    Then a BudgetExceededError is raised
    And the budget error is for "actor 'planner'", with a limit of $0.03, the worst case of the parked call spent, and the worst case of "Plan issue 43"
    And the API received these calls:
      | call           | count |
      | batches.create | 1     |

  Scenario: Calls made at once cannot cross the actor's budget together
    Given an actor "planner" with:
      """
      batch_processing: batch
      max_tokens: 4000
      max_cost_usd: 0.03
      """
    When the actor is asked these prompts at once:
      | key           | prompt        |
      | plan-issue-42 | Plan issue 42 |
      | plan-issue-43 | Plan issue 43 |
    Then 1 call was answered and 1 was refused with BudgetExceededError
    And the API was sent 1 request

  # A team's calls wait on the ledger for its caps between the budget's check and its reservation: a store across
  # the network (PostgreSQL) lets the other call of the moment be checked meanwhile.
  Scenario: Calls of a team's actor made at once cannot cross the actor's budget together, while their caps are awaited
    Given an actor "planner" with:
      """
      batch_processing: batch
      max_tokens: 4000
      max_cost_usd: 0.03
      team: research
      """
    When the actor is asked these prompts at once:
      | key           | prompt        |
      | plan-issue-42 | Plan issue 42 |
      | plan-issue-43 | Plan issue 43 |
    Then 1 call was answered and 1 was refused with BudgetExceededError
    And the API was sent 1 request

  Scenario: Two run_many calls of a team's actor made at once cannot cross the actor's budget together
    Given an actor "planner" with:
      """
      batch_processing: batch
      max_tokens: 4000
      max_cost_usd: 0.03
      team: research
      """
    When the actor's run_many is called twice at once, with "Plan issue 42" and with "Plan issue 43"
    Then 1 call was answered and 1 was refused with BudgetExceededError
    And the API was sent 1 request

  Scenario: A stored answer is returned even when the budget is spent, as it costs nothing more
    Given an actor "planner" with:
      """
      batch_processing: batch
      max_tokens: 4000
      max_cost_usd: 0.02005
      """
    When the actor is asked "Plan issue 42"
    And the actor is asked "Plan issue 43"
    Then a BudgetExceededError is raised
    When the API's call counts are noted
    And the actor is asked "Plan issue 42"
    Then the answer is the same answer as the first one
    And the API received no calls since they were noted

  Scenario: Budgets apply to each actor's own spending
    Given an actor "planner" with:
      """
      batch_processing: batch
      max_tokens: 4000
      max_cost_usd: 0.02005
      """
    And an actor "reviewer" with:
      """
      batch_processing: batch
      max_tokens: 4000
      max_cost_usd: 0.02005
      """
    When actor "planner" is asked "Plan issue 42"
    And actor "reviewer" is asked "Review issue 42"
    Then the answer is the emulated reply to "Review issue 42"

  Scenario Outline: A budget on a model without a known price cannot be kept, so the call is refused
    Given an actor "pilot" with:
      """
      model: claude-unknown-9
      batch_processing: batch
      <actor budget>
      """
    When the actor is asked "Plan issue 42" with:
      """
      <call budget>
      """
    Then a ConfigurationError is raised
    And the error message contains "No price is known for model 'claude-unknown-9', so a budget cannot be checked."
    And the error names the field "max_cost_usd"
    And the API was only asked about the model

    Examples:
      | actor budget     | call budget      |
      | max_cost_usd: 1  | {}               |
      | max_tokens: 1024 | max_cost_usd: 1  |

  Scenario: Without a budget, a model without a known price is answered, with no cost
    Given an actor "pilot" with:
      """
      model: claude-unknown-9
      batch_processing: batch
      """
    When the actor is asked "Plan issue 42"
    Then the answer is the emulated reply to "Plan issue 42"
    And the response has no cost

  Scenario: A live call's budget is checked at live prices before anything is sent
    # The same call fits $0.03 at batch prices (see above) but not at live prices, which are twice as high.
    Given an actor "planner" with:
      """
      batch_processing: live
      max_tokens: 4000
      """
    When the actor is asked "Plan issue 42" with:
      """
      max_cost_usd: 0.03
      """
    Then a BudgetExceededError is raised
    And the error message contains "Nothing was sent."
    And the API was only asked about the model

  Scenario: A live call within its budget is answered
    Given an actor "planner" with:
      """
      batch_processing: live
      max_tokens: 4000
      """
    When the actor is asked "Plan issue 42" with:
      """
      max_cost_usd: 0.5
      """
    Then the answer is the emulated reply to "Plan issue 42"
