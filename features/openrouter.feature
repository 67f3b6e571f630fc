Feature: OpenRouter, live
  As a developer with an OpenRouter key
  I want `provider: openrouter` in live mode, its answers priced at OpenRouter's prices
  So that one key reaches many models through lowtide (its Batch API: features/openrouter_batch.feature)

  Every call goes through the unmodified openai SDK (as OpenRouter documents), built by lowtide from the actor's
  settings (the emulator's OpenRouter base URL, the key from OPENROUTER_API_KEY), to the emulator in process.

  Scenario: A live call answers through Chat Completions, priced at OpenRouter's price of the model, the key never stored
    Given an emulated OpenRouter API
    And an OpenRouter actor "router" in live mode
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the answer was priced at OpenRouter's live price of "openai/gpt-4o-mini"
    And the OpenRouter key is not in the ledger
    And the API received these calls:
      | call                               | count |
      | openrouter.chat.completions.create | 1     |
      | openrouter.models.list             | 1     |

  Scenario: A live call's own budget is kept at OpenRouter's prices: a call over it is refused, unsent
    Given an emulated OpenRouter API
    And an OpenRouter actor "router" in live mode
    When the actor is asked "When is high tide?" with a budget of $0.0000001
    Then the call fails with BudgetExceededError
    And the API received these calls:
      | call                               | count |
      | openrouter.chat.completions.create | 0     |

  Scenario: A model OpenRouter does not list is refused naming the closest it does, unsent
    Given an emulated OpenRouter API
    And an OpenRouter actor "router" in live mode with the model "openai/gpt-4o-mimi"
    When the actor is asked "When is high tide?" with the key "high"
    Then the call fails with ConfigurationError
    And the error message contains "openai/gpt-4o-mini"
    And the API received these calls:
      | call                               | count |
      | openrouter.chat.completions.create | 0     |
