Feature: A cost lowtide cannot know is reported as unknown, never as $0
  As a developer using a model genai-prices has no price for yet
  I want lowtide to say once that its cost is unknown, and show it as unknown where a cost would be
  So that I never read $0 and believe a run was free

  # claude-mythos-5-1 is a model the API serves but genai-prices has no price for.

  Background:
    Given an emulated Anthropic API
    And the warnings of "lowtide.pricing" are kept

  Scenario: Answers from a model without a known price have no cost, and that is reported once in a process
    Given an actor "scout" with:
      """
      model: claude-mythos-5-1
      batch_processing: batch
      """
    And an actor "lookout" with:
      """
      model: claude-mythos-5-1
      """
    When actor "scout" is asked "Scan the harbour logs"
    And actor "scout" is asked "Scan the quay logs"
    And actor "lookout" is asked "Scan the beach logs"
    Then the answer is the emulated reply to "Scan the beach logs"
    And every answer so far has no cost
    And "lowtide.pricing" warned once: "No price is known for model 'claude-mythos-5-1': its cost is unknown, not $0, and is not recorded."

  Scenario: A model with a price is not reported
    Given an actor "planner" in batch mode
    When the actor is asked "Plan issue 42"
    Then every answer so far is priced
    And "lowtide.pricing" warned of nothing

  Scenario: The dry run of a run on a model without a known price shows its cost as unknown
    Given an actor "scout" with:
      """
      model: claude-mythos-5-1
      batch_processing: batch
      """
    When the actor plans, in Python, with 2 items per batch:
      """
      ["Scan 0", "Scan 1", "Scan 2"]
      """
    Then the plan's batches cost:
      | batch | cost    |
      | 1     | unknown |
      | 2     | unknown |
    And the plan says "estimated cost: unknown (no price for model 'claude-mythos-5-1')"
    And the plan as JSON has no cost for the run, nor for any batch, and names the model 'claude-mythos-5-1'

  Scenario: In a run mixing models, only the batches holding a request without a known price have an unknown cost
    Given an actor "reader" in batch mode
    When the actor plans, in Python, with 2 items per batch:
      """
      ["Review 0", "Review 1", "Review 2", {"prompt": "Review 3", "model": "claude-mythos-5-1"}]
      """
    Then the plan's batches cost:
      | batch | cost    |
      | 1     | priced  |
      | 2     | unknown |
    And the plan says "estimated cost: unknown (no price for model 'claude-mythos-5-1')"

  Scenario: A dry run from the command line prints the unknown cost
    Given a file "actor.yaml" containing:
      """
      name: scout
      model: claude-mythos-5-1
      batch_processing: batch
      """
    And a JSONL file "jobs.jsonl" of 3 prompts
    When "lowtide run jobs.jsonl --actor actor.yaml --dry-run" runs in the scenario's folder
    Then the command exits with 0
    And the command printed "request(s), "
    And the command printed " bytes, cost unknown"
    And the command printed "estimated cost: unknown (no price for model 'claude-mythos-5-1')"
    And the command printed "dry run: nothing was sent"

  Scenario: A run with a cost limit on a model without a known price is refused before it is recorded
    Given an actor "scout" with:
      """
      model: claude-mythos-5-1
      batch_processing: batch
      """
    When the actor maps, in Python, with a cost limit of $5:
      """
      ["Scan 0", "Scan 1"]
      """
    Then a ConfigurationError is raised
    And the error message is:
      """
      Job 0: no price is known for model 'claude-mythos-5-1', so the cost limit cannot be kept.
      """
    And the ledger has no run

  Scenario: With a cost limit, a misspelt model is told as misspelt, not as a model without a price
    Given an actor "reader" in batch mode
    When the actor maps, in Python, with a cost limit of $5:
      """
      [{"prompt": "Review 0", "model": "claude-sonet-5-5"}]
      """
    Then a ConfigurationError is raised
    And the error message contains "Job 0: model: the API at http://emulator.invalid has no model 'claude-sonet-5-5'. Did you mean"
    And the ledger has no run
