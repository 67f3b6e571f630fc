@stores
Feature: Live calls' spend charged to their team and project, under the same caps as batch calls
  As the owner of an organisation's model budget
  I want a live call's cost attributed to its team and project and held by their caps, as a batch call's is
  So that no team crosses its cap by calling live, and every dollar live calls cost has an owner

  # With max_tokens 4000, a live call to claude-sonnet-5-5 can cost at most about $0.04 at live prices (twice the
  # batch worst case of $0.020028); its emulated answer costs $0.000138.

  Background:
    Given an emulated Anthropic API whose batches take 120 seconds

  Scenario: A team's live call is attributed, its reservation settled to what the answer cost
    Given an actor "chatter" with:
      """
      batch_processing: live
      max_tokens: 4000
      team: research
      project: tides
      """
    When the actor is asked "Plan issue 42"
    Then the answer is the emulated reply to "Plan issue 42"
    And the ledger's spend shows team "research", project "tides", actor "chatter": 1 request, its answer's cost spent, nothing reserved
    And the audit holds a "create" record of team "research" for the live call, at its live worst case

  Scenario: A live call whose worst case would cross its team's cap is refused before it is sent
    Given the ledger caps team "research" at $0.03 per day
    And an actor "chatter" with:
      """
      batch_processing: live
      max_tokens: 4000
      team: research
      """
    When the actor is asked "Plan issue 42"
    Then a SpendCapExceededError is raised
    And the error message contains "team 'research''s cap of $0.03 per day"
    And the API received 0 batches and 0 live calls
    And the ledger's spend shows nothing reserved
    And the audit holds 1 "refused" record and 0 "create" records

  Scenario: What live calls spent counts against the cap, so a later call that would cross it is refused
    Given an actor "chatter" with:
      """
      batch_processing: live
      max_tokens: 4000
      team: research
      """
    When the actor is asked "one"
    And the ledger caps team "research" at the live call's worst case and what the first answer cost, less $0.000001
    And the actor is asked "two"
    Then a SpendCapExceededError is raised
    And the API received 0 batches and 1 live calls

  Scenario: A live call that fails unanswered is let go: nothing spent, nothing reserved
    Given an actor "chatter" with:
      """
      batch_processing: live
      live: {retries: {rate_limited: 0, overloaded: 0, server: 0}}
      max_tokens: 4000
      team: research
      """
    And the API will fail the next "messages.create" call with status 400
    When the actor is asked "Hello"
    Then the call fails with InvalidRequestError
    And the ledger's spend shows nothing reserved and nothing spent
    And the audit holds 1 "release" record

  Scenario: A live call whose answer was lost once the API took it is kept at its worst case: it may have been billed
    Given an actor "chatter" with:
      """
      batch_processing: live
      live: {retries: {connection: 0}}
      max_tokens: 4000
      team: research
      """
    And the API will answer the next "messages.create" call, then drop the connection before the answer
    When the actor is asked "Hello"
    Then the call fails with APIConnectionError
    And the ledger's spend shows team "research": the live call's worst case spent 1 time, nothing reserved
    And the audit holds 0 "release" record

  Scenario: A live call answered on its second attempt, after the first's answer was lost, counts both
    Given an actor "chatter" with:
      """
      batch_processing: live
      live: {retries: {connection: 1}}
      max_tokens: 4000
      team: research
      """
    And the API will answer the next "messages.create" call, then drop the connection before the answer
    When the actor is asked "Hello"
    Then the answer is the emulated reply to "Hello"
    And the ledger's spend shows team "research": the live call's worst case spent 1 time and its answer's cost, nothing reserved

  Scenario: run_many of live calls inside spend_owner is charged to that team
    Given an actor "chatter" with:
      """
      batch_processing: live
      max_tokens: 4000
      """
    When the actor runs "a, b, c" with run_many for team "ops"
    Then the ledger's spend shows team "ops": 3 requests, their answers' cost spent, nothing reserved
