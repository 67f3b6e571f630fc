Feature: Thousands of plain-prompt calls at once
  As a developer who sends thousands of prompts to one batch-mode actor with asyncio.gather
  I want each call to cost little while it waits, and to mean exactly what the same call written out in full means
  So that a big fan-out is fast and small, and never pays twice for one request

  Background:
    Given an emulated Anthropic API whose batches take 120 seconds
    And an actor "planner" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      system_prompt: Answer as a harbour master.
      temperature: 0.2
      """

  Scenario: A prompt given alone and the same prompt written out as messages are one request
    When the actor is asked "Summarize the tide tables"
    And the API's call counts are noted
    And the actor is asked with:
      """
      messages: [{role: user, content: Summarize the tide tables}]
      """
    Then the answer is the same answer as the first one
    And the API received no calls since they were noted
    And the ledger holds 1 request, whose key starts with "auto-"

  Scenario: A prompt alone sends what the same call written out in full sends
    When the actor is asked "Plan the cron move" with the key "cron"
    Then the batch holds exactly the request "cron" with these params:
      """
      model: claude-sonnet-5-5
      max_tokens: 1024
      system: Answer as a harbour master.
      temperature: 0.2
      messages: [{role: user, content: Plan the cron move}]
      """

  Scenario: The same key asked at once for two different requests answers the first and refuses the second
    When the actor is asked these prompts at once:
      | key  | prompt              |
      | cron | Plan the cron move  |
      | cron | Plan the flag cache |
    Then the call for "cron" failed with a ConfigurationError saying "already names a different request"
    And the API was sent each of these requests once: cron

  Scenario: The same key asked twice at once, in a batch the API refuses, fails both calls with the API's error
    Given the API will fail the next "batches.create" call with status 403
    When the actor is asked these prompts at once:
      | key  | prompt             |
      | cron | Plan the cron move |
      | cron | Plan the cron move |
    Then the call for "cron" failed with a PermissionDeniedError saying "permission"
    And the API received these calls:
      | call           | count |
      | batches.create | 1     |
