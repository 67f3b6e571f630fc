Feature: Adaptive polling: status checks follow how long this ledger's batches usually take
  As a developer whose provider sends no webhooks (Anthropic, Bedrock, Mistral, Groq, Together, Azure)
  I want the status checks of a batch rare while its usual end is far, and frequent around it
  So that its answers come sooner after it ends, with fewer status checks than checking every poll_interval

  # On a virtual clock: the emulated Anthropic API's batches take 610 s; the actor checks every 60 s
  # (`poll_interval`), with `poll_schedule: adaptive`. Three batches of one request before have taught the ledger
  # that such batches take 610 s: the next is looked at 240, 480 and 550 s after its submission, then every 15 s.

  # On every store (`-D store=...`): each reads the batches alike by provider, endpoint and size itself.
  @stores
  Scenario: The fourth batch alike is answered as it ends, with fewer status checks than fixed polling
    Given an emulated Anthropic API on a virtual clock whose batches take 610 seconds
    And an Anthropic actor checking every 60 seconds, "adaptive"
    When the actor is asked 3 questions, one after another
    Then each was answered 50 seconds after its batch ended, after 11 status checks
    When the actor is asked 1 question
    Then it was answered 0 seconds after its batch ended, after 7 status checks
    # Another process (a new engine) reads the history from the ledger.
    When a new actor on the same ledger is asked 1 question
    Then it was answered 0 seconds after its batch ended, after 7 status checks

  Scenario: Fixed polling (the default) ignores the history
    Given an emulated Anthropic API on a virtual clock whose batches take 610 seconds
    And an Anthropic actor checking every 60 seconds, "fixed"
    When the actor is asked 4 questions, one after another
    Then each was answered 50 seconds after its batch ended, after 11 status checks

  Scenario Outline: The schedule: rare before the usual end, often around it, every poll_interval past it
    Then with batches alike taking <usual> s and poll_interval 60 s, <elapsed> s after submission the next look is <sleep> s later

    Examples:
      | usual | elapsed | sleep |
      | none  | 0       | 60    |
      | 610   | 0       | 240   |
      | 610   | 480     | 70    |
      | 610   | 540     | 15    |
      | 610   | 550     | 15    |
      | 610   | 669     | 15    |
      | 610   | 670     | 60    |
      | 70    | 0       | 15    |
      | 70    | 20      | 15    |
