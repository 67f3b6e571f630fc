Feature: Deprecated models are pointed out, once, with what to use instead
  As a developer whose actors name models that Anthropic retires one day
  I want to be told, once per model, that a model is deprecated, when it reaches its end of life and what replaces it
  So that I move my actors before their calls start failing, without a warning on every call

  Background:
    Given an emulated Anthropic API
    And Python's warnings are recorded
    And the warnings of "lowtide.providers.anthropic.checks" are kept

  Scenario: A deprecated model is warned about once in a process, however many actors and calls name it
    Given an actor "nightly" with:
      """
      model: claude-sonnet-4-5
      batch_processing: batch
      """
    And an actor "chatter" with:
      """
      model: claude-sonnet-4-5
      """
    When actor "nightly" is asked "Plan issue 42"
    And actor "nightly" is asked "Plan issue 43"
    And actor "chatter" is asked "Plan issue 44"
    Then the answer is the emulated reply to "Plan issue 44"
    And Python warned of these deprecated models, once each:
      | warning                                                                                 |
      | Model 'claude-sonnet-4-5' is deprecated (end of life: 2026-11-30); use 'claude-sonnet-5-5' instead. |
    And "lowtide.providers.anthropic.checks" warned once: "Model 'claude-sonnet-4-5' is deprecated (end of life: 2026-11-30); use 'claude-sonnet-5-5' instead."

  Scenario: Each deprecated model is warned about on its own
    Given an actor "nightly" with:
      """
      model: claude-sonnet-4-5
      batch_processing: batch
      """
    And an actor "pinned" with:
      """
      model: claude-sonnet-4-5-20250929
      batch_processing: batch
      """
    When actor "nightly" is asked "Plan issue 42"
    And actor "pinned" is asked "Plan issue 43"
    Then Python warned of these deprecated models, once each:
      | warning                                                                                          |
      | Model 'claude-sonnet-4-5' is deprecated (end of life: 2026-11-30); use 'claude-sonnet-5-5' instead.          |
      | Model 'claude-sonnet-4-5-20250929' is deprecated (end of life: 2026-11-30); use 'claude-sonnet-5-5' instead. |

  Scenario: A current model is not warned about
    Given an actor "nightly" in batch mode
    When the actor is asked "Plan issue 42"
    Then Python warned of no deprecated model
    And "lowtide.providers.anthropic.checks" warned of nothing

  Scenario: With the models endpoint out of reach, lowtide's own table still warns
    Given the API's models endpoint refuses connections
    And an actor "chatter" with:
      """
      model: claude-sonnet-4-5
      """
    When the actor is asked "Plan issue 42"
    Then the answer is the emulated reply to "Plan issue 42"
    And Python warned of these deprecated models, once each:
      | warning                                                                                 |
      | Model 'claude-sonnet-4-5' is deprecated (end of life: 2026-11-30); use 'claude-sonnet-5-5' instead. |

  Scenario Outline: A model the API deprecates before lowtide's table knows it is warned about with the API's dates
    Given the models endpoint describes "claude-opus-4-6" as deprecated, with the end of life <end of life>
    And an actor "architect" with:
      """
      model: claude-opus-4-6
      batch_processing: batch
      """
    When the actor is asked "Design the harbour's new quay"
    Then the answer is the emulated reply to "Design the harbour's new quay"
    And Python warned of these deprecated models, once each:
      | warning   |
      | <warning> |

    Examples:
      | end of life            | warning                                                                                                        |
      | "2027-02-05T00:00:00Z" | Model 'claude-opus-4-6' is deprecated (end of life: 2027-02-05); see https://docs.anthropic.com/en/docs/resources/model-deprecations. |
      | not yet announced      | Model 'claude-opus-4-6' is deprecated (end of life not yet announced); see https://docs.anthropic.com/en/docs/resources/model-deprecations. |

  Scenario Outline: A model the API has retired is refused, with what is known of its end
    Given the models endpoint describes "<model>" as retired, with the end of life <end of life>
    And an actor "architect" with:
      """
      model: <model>
      batch_processing: batch
      """
    When the actor is asked "Design the harbour's new quay"
    Then a ConfigurationError is raised
    And the error message is:
      """
      <message>
      """
    And the ledger holds no requests and no batches

    Examples:
      | model                 | end of life            | message                                                                                                                              |
      | claude-opus-4-6       | "2026-10-01T00:00:00Z" | model: 'claude-opus-4-6' was retired on 2026-10-01 and the API no longer serves it; see https://docs.anthropic.com/en/docs/resources/model-deprecations. |
      | claude-opus-4-6       | not yet announced      | model: 'claude-opus-4-6' was retired and the API no longer serves it; see https://docs.anthropic.com/en/docs/resources/model-deprecations.               |
      | claude-mythos-preview | not yet announced      | model: 'claude-mythos-preview' was retired on 2026-06-30 and the API no longer serves it; use 'claude-mythos-5-2' instead.                              |

  Scenario: lowtide's table of deprecations is the SDK's, and each replacement is a current model
    Then lowtide's table of deprecations holds every model of the SDK's tables of deprecated models, with the same end of life
    And every replacement in lowtide's table is a model the emulator serves, not deprecated, that genai-prices prices
