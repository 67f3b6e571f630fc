@stores @deadlines
Feature: Deadlines across venues: the cheapest route that makes it, and late work moved
  As a developer whose results are due by a given time
  I want to give a bulk run a deadline and have lowtide choose the cheapest route expected to meet it
  So that a late batch never makes me miss it, and nothing is paid twice or lost on the way

  Background:
    Given an emulated Anthropic API whose batches take 60 seconds
    And an actor "reader" with:
      """
      batch_processing: batch
      max_tokens: 64
      batch: {poll_interval: 10, max_attempts: 1}
      """

  Scenario: A deadline in the past is refused before anything is sent
    Given 3 prompts "Review {n}"
    When the actor maps the prompts with the deadline "2020-01-01T00:00:00+00:00"
    Then the run was refused with a ConfigurationError saying "is in the past"
    And the API received no calls at all

  Scenario: A deadline no route can meet is refused, naming each venue's expected time
    Given 40 prompts "Review {n}"
    When the actor maps the prompts with the deadline "45s"
    Then the run was refused with a ConfigurationError saying "No route can meet the deadline"
    And the run was refused with a ConfigurationError saying "batch about 24h00m"
    And the API was only asked about the model
    And the ledger has no run

  Scenario: With no history in the ledger, a deadline inside a day goes live; the dry run says so and sends nothing
    Given 5 prompts "Review {n}"
    When the actor plans the prompts with the deadline "2h"
    Then the plan's route is "live"
    And the plan says "no history in this ledger"
    And the plan says "-> live"
    And the API received no calls at all

  Scenario: The live route: every item answered by a live call, none in a batch
    Given 5 prompts "Review {n}"
    When the actor maps the prompts with the deadline "2h"
    Then the run's groups are 5 completed, 0 failed, 0 canceled and 0 not run
    And the API received 0 batches and 5 live calls

  Scenario: With a history of fast batches, the batch route is chosen, and an on-time batch is not moved
    Given the ledger's history holds 3 batches of this provider that took 60 seconds
    And 5 prompts "Review {n}"
    When the actor plans the prompts with the deadline "2h"
    Then the plan's route is "batch"
    And the plan says "90th percentile of this ledger's last 3 batch(es)"
    When the actor maps the prompts with the deadline "2h"
    Then the run's groups are 5 completed, 0 failed, 0 canceled and 0 not run
    And the API received 4 batches and 0 live calls

  Scenario: A batch made late: canceled in time, only the requests it did not answer sent live, the rest kept
    Given the ledger's history holds 3 batches of this provider that took 60 seconds
    And the emulated API's batches now take 3 hours
    And 10 prompts "Review {n}"
    When the actor maps the prompts with the deadline "2h"
    Then the run's groups are 10 completed, 0 failed, 0 canceled and 0 not run
    And every result is the emulated reply to its own prompt
    And the late batch answered some items before its cancel took, and they were not sent again
    And only the items the batch's results show canceled were sent live, each once
    And no item was paid for twice
    And the run ended before its deadline

  Scenario: OpenAI's flex tier: batch prices, answered live, the route when no batch is expected in time
    Given an emulated OpenAI API
    And an OpenAI actor "tides" with:
      """
      batch_processing: batch
      batch: {poll_interval: 10}
      """
    And 4 prompts "Tide {n}"
    When the actor plans the prompts with the deadline "2h"
    Then the plan's route is "flex"
    And the plan says "-> flex"
    When the actor maps the prompts with the deadline "2h"
    Then the run's groups are 4 completed, 0 failed, 0 canceled and 0 not run
    And the OpenAI API answered 4 live calls at the flex tier and created no batch

  Scenario: A call's deadline: in the past, refused before anything is sent
    When the actor is asked "When is high tide?" with the deadline "2020-01-01T00:00:00+00:00"
    Then the call was refused with a ConfigurationError saying "is in the past"
    And the API received no calls at all

  Scenario: A call's deadline with no history of batches: answered live, at once
    When the actor is asked "When is high tide?" with the deadline "2h"
    Then the call was answered with the emulated reply to "When is high tide?"
    And the API received 0 batches and 1 live calls

  Scenario: A call's deadline that a batch is expected to meet: answered by a batch, at half price
    Given the ledger's history holds 3 batches of this provider that took 60 seconds
    When the actor is asked "When is high tide?" with the deadline "2h"
    Then the call was answered with the emulated reply to "When is high tide?"
    And the API received 4 batches and 0 live calls

  Scenario: Calls whose batch is late: canceled in time, the answered kept, only the canceled sent live, before the deadline
    Given the ledger's history holds 3 batches of this provider that took 60 seconds
    And the emulated API's batches now take 3 hours
    When the actor is asked 10 prompts "Tide {n}" at once with the deadline "2h", and 1 without
    Then every call was answered with the emulated reply to its own prompt
    And the calls with the deadline travelled in one batch of their own, the call without it in another
    And the late batch answered some calls before its cancel took, and only the calls it canceled were sent live, once
    And the calls with the deadline were all answered before it
    And the call without the deadline was answered by its batch, never canceled

  Scenario: run_many with a deadline whose batch is late: the answered kept, only the canceled sent live, in time
    Given the ledger's history holds 3 batches of this provider that took 60 seconds
    And the emulated API's batches now take 3 hours
    When the actor runs 10 prompts "Ebb {n}" with run_many and the deadline "2h"
    Then every outcome is the emulated reply to its own prompt
    And the late batch answered some requests before its cancel took, and only those it canceled were sent live, once
    And run_many returned before its deadline

  Scenario: run_many with a deadline and no history of batches: every request answered live, at once
    When the actor runs 3 prompts "Ebb {n}" with run_many and the deadline "2h"
    Then every outcome is the emulated reply to its own prompt
    And the API received 0 batches and 3 live calls

  Scenario: The emulator makes its next batches late when asked over HTTP, and refuses a bad number
    When the emulator is asked over HTTP to make its batches take 10800 seconds
    Then the emulator answered 200 and its batches now take 10800 seconds
    When the emulator is asked over HTTP to make its batches take -5 seconds
    Then the emulator answered 400 and its batches now take 10800 seconds

  Scenario: Items the API canceled in their batch go by the faster route once, in the same run or when it is started again
    Given the ledger's history holds 3 batches of this provider that took 60 seconds
    And 4 prompts "Review {n}"
    And the first attempts of items 1 and 2 of run "tides" end as canceled in their batch
    When the actor maps the prompts as run "tides"
    Then the run's groups are 2 completed, 0 failed, 2 canceled and 0 not run
    When the prompts are mapped as run "tides" by the deadline "2h"
    Then the run's groups are 4 completed, 0 failed, 0 canceled and 0 not run
    And items 1 and 2 were answered live under their second attempts' keys, and nothing else was sent live
    Given the first attempts of items 3 of run "swell" end as canceled in their batch
    When the prompts are mapped as run "swell" by the deadline "2h"
    Then the run's groups are 4 completed, 0 failed, 0 canceled and 0 not run
    And items 3 were answered live under their second attempts' keys, and nothing else was sent live

  Scenario: A batch route's dry run says when its late work would move, and that none of it is paid twice
    Given the ledger's history holds 3 batches of this provider that took 60 seconds
    And 5 prompts "Review {n}"
    When the actor plans the prompts with the deadline "2h"
    Then the plan says "if late: at 1h58m from now its unanswered requests are canceled"
    And the plan says "none is paid twice"

  Scenario: A run recorded with a deadline keeps it when resumed with none of its own
    Given 5 prompts "Review {n}"
    When the actor records the prompts as run "tides" with the deadline "2h"
    And the actor maps the prompts as run "tides"
    Then the run's groups are 5 completed, 0 failed, 0 canceled and 0 not run
    And the API received 0 batches and 5 live calls

  Scenario: A run resumed after its recorded deadline has passed is refused, asking for a new one
    Given 5 prompts "Review {n}"
    When the actor records the prompts as run "tides" with the deadline "2h"
    And 3 hours pass on the scenario's clock
    And the actor maps the prompts as run "tides"
    Then the run was refused with a ConfigurationError saying "was given the deadline '2h'"
    And the run was refused with a ConfigurationError saying "which has passed: give it a new one"
    And the API received no calls at all
    When the prompts are mapped as run "tides" by the deadline "2h"
    Then the run's groups are 5 completed, 0 failed, 0 canceled and 0 not run
