Feature: Fireworks AI, live through its Chat Completions
  As a developer with a Fireworks key
  I want `provider: fireworks` in live mode, priced, its models checked before anything is sent
  So that Fireworks' open models answer my calls without code of my own

  Every call goes through the official fireworks SDK (`fireworks-ai`), built by lowtide from the actor's settings (the
  emulator's Fireworks base URL, the key from FIREWORKS_API_KEY), to the emulator's Fireworks wire in process.
  Batch mode, through Fireworks' Batch Inference API: features/fireworks_batch.feature.

  Scenario: A live call answers through Chat Completions at Fireworks' prices, the key never stored
    Given an emulated Fireworks API
    And a Fireworks actor "fw" in live mode
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And every answer was priced at Fireworks' live prices, by genai-prices
    And the Fireworks key is in neither the ledger nor the error messages
    And the API received these calls:
      | call                              | count |
      | fireworks.chat.completions.create | 1     |
      | fireworks.models.retrieve         | 1     |

  Scenario: A model genai-prices does not price is answered at an unknown cost, never $0
    Given an emulated Fireworks API
    And a Fireworks actor "fw" in live mode with the model "accounts/fireworks/models/qwen3-8b"
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the answer's cost is unknown, not $0

  Scenario: A model Fireworks does not serve is refused naming the closest it does, before anything is sent
    Given an emulated Fireworks API
    And a Fireworks actor "fw" in live mode with the model "accounts/fireworks/models/gpt-oss-2b"
    When the actor is asked "When is high tide?" with the key "high"
    Then the call fails with ConfigurationError
    And the error message contains "accounts/fireworks/models/gpt-oss-20b"
    And the Fireworks key is in neither the ledger nor the error messages
    And the API received these calls:
      | call                              | count |
      | fireworks.chat.completions.create | 0     |

  Scenario: A failed request comes back as the API's error, the key never in it
    Given an emulated Fireworks API
    And a Fireworks actor "fw" in live mode
    And the Fireworks API will fail the next chat completion with status 400
    When the actor is asked "When is high tide?" with the key "high"
    Then the call fails with InvalidRequestError
    And the Fireworks key is in neither the ledger nor the error messages
