Feature: Answers built without a second validation are the answers validation gives
  As a developer comparing, storing and serialising the answers lowtide hands me
  I want an answer lowtide built directly from a batch result to be the one pydantic's validation would give
  So that equality, `model_dump(exclude_unset=True)`, JSON and copies behave the same, however it was built

  Scenario Outline: A plain text answer from <provider>'s batch API
    Given an actor of <provider> in batch mode against the emulator, on an in-memory ledger
    When it is asked "Say something plain" in batch mode
    Then the answer, its content blocks and its ids each have the fields set validation would give them
    And the answer equals the one validated from its own JSON

    Examples:
      | provider  |
      | anthropic |
      | openai    |
