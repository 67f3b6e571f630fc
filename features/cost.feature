Feature: What each call cost
  As a developer paying for an agent's model calls
  I want every response to say what it cost, at the price of the mode it ran in, next to what live would have cost
  So that I can see the batch saving, call by call, and trust the numbers

  Background:
    Given an emulated Anthropic API that also serves the models "claude-3-haiku-20240307, claude-opus-4-1, claude-unknown-9"

  Scenario: A batch answer from claude-sonnet-5-5 is priced at the batch rates, half the live price
    Given an actor "nightly" with:
      """
      model: claude-sonnet-5-5
      batch_processing: batch
      """
    When the actor is asked "Summarize the tide tables for the week"
    Then the response has these fields:
      | field        | value        |
      | cost.pricing | batch        |
      | cost.source  | genai-prices |
      | cost.note    |              |
    And the cost is what the tokens cost at these rates, in dollars per million tokens:
      | input | output | cache write | cache read |
      | 1.00  | 5.00   | 1.25        | 0.05       |
    And the cost is half of its live equivalent, the saving being the other half

  Scenario: A live answer is priced at the live rates, and is its own live equivalent
    Given an actor "chatter" with:
      """
      model: claude-sonnet-5-5
      """
    When the actor is asked "Summarize the tide tables for the week"
    Then the response has these fields:
      | field        | value |
      | cost.pricing | live  |
    And the cost is what the tokens cost at these rates, in dollars per million tokens:
      | input | output | cache write | cache read |
      | 2.00  | 10.00  | 2.50        | 0.10       |
    And the cost's saving is zero

  Scenario: The same call costs half as much in batch mode as in live mode
    Given an actor "switcher" in live mode
    When the actor is asked "Summarize the tide tables for the week" in live mode
    And the actor is asked "Summarize the tide tables for the week" in batch mode
    Then both answers used the same tokens
    And the batch answer cost half of the live answer, and its live equivalent is the live answer's cost

  Scenario: Prompt-cache writes and reads are priced at their own rates
    Given an actor "nightly" whose system prompt is long enough to cache, with:
      """
      model: claude-sonnet-5-5
      batch_processing: batch
      cache_control: {type: ephemeral}
      """
    When the actor runs these prompts as one call of run_many:
      | custom_id | prompt           |
      | first     | High tide today? |
    And the actor runs these prompts as a later call of run_many, the earlier outcomes kept:
      | custom_id | prompt           |
      | second    | High tide today? |
    Then the outcome of "second" read from the prompt cache what "first" wrote
    And the cost of each outcome is what its tokens cost at these rates, in dollars per million tokens:
      | input | output | cache write | cache read |
      | 1.00  | 5.00   | 1.25        | 0.05       |
    And the outcome of "second" cost less than the outcome of "first"

  Scenario Outline: A model genai-prices lists without a batch price gets Anthropic's 50% discount, and a note
    Given an actor "legacy" with:
      """
      model: <model>
      batch_processing: batch
      """
    When the actor is asked "Summarize the tide tables for the week"
    Then the response has these fields:
      | field        | value                                                                                         |
      | cost.pricing | batch                                                                                         |
      | cost.note    | genai-prices lists no batch price for this model; Anthropic's 50% batch discount was applied. |
    And the cost is what the tokens cost at these rates, in dollars per million tokens:
      | input         | output         | cache write | cache read |
      | <batch input> | <batch output> | 0           | 0          |
    And the cost is half of its live equivalent, the saving being the other half

    Examples:
      | model                   | batch input | batch output |
      | claude-3-haiku-20240307 | 0.125       | 0.625        |
      | claude-opus-4-1         | 7.50        | 37.50        |

  Scenario Outline: A model genai-prices does not know has no cost, and the call still succeeds
    Given an actor "prototype" with:
      """
      model: claude-unknown-9
      batch_processing: <mode>
      """
    When the actor is asked "Summarize the tide tables for the week"
    Then the answer is the emulated reply to "Summarize the tide tables for the week"
    And the response has no cost

    Examples:
      | mode  |
      | live  |
      | batch |

  Scenario Outline: Every usage is priced exactly as genai-prices prices it, below and above the long-context tier
    When the usage <usage> of "<model>" is priced in <mode> mode
    Then the price equals genai-prices' own calculation for that usage, model and mode

    Examples:
      | usage                                                                                           | model             | mode  |
      | {"input_tokens": 1200, "output_tokens": 300}                                                    | claude-sonnet-5-5 | batch |
      | {"input_tokens": 150000, "output_tokens": 900, "cache_read_input_tokens": 60000}                 | claude-sonnet-5-5 | batch |
      | {"input_tokens": 250000, "output_tokens": 900}                                                  | claude-sonnet-5-5 | live  |
      | {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 400, "cache_creation": {"ephemeral_5m_input_tokens": 100, "ephemeral_1h_input_tokens": 300}} | claude-haiku-4-5 | live  |
