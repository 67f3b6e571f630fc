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

  Scenario Outline: A bulk run of <provider> holds its plain answers as their fields, and builds the same responses
    Given an actor of <provider> in batch mode against the emulator, on an in-memory ledger
    When it maps the prompts "one", "two" and "three" in batch mode
    Then every item holds its answer as a TextAnswer, not as a response
    And every item's response, built when read, equals the one validated from its own JSON
    And every item's text, usage, cost and batch id are those of its response

    Examples:
      | provider  |
      | anthropic |
      | openai    |

  Scenario: An answer of several text blocks, some giving null citations, is built as validation builds it
    Given a text answer of the blocks "Calm " (with null citations) and "seas." (without)
    When its response is built
    Then its response equals the one validated from the same fields, with the same fields set in each part

  Scenario Outline: An Anthropic results line of one text block is held as its fields only when it is text alone
    Given an Anthropic results line whose one content block is <block>
    When the Anthropic line is read into its outcome
    Then the outcome is <held>, its response equal to the one validated from the JSON the ledger stores
    And the ledger stores the block as it came, and the text "Calm seas."

    Examples:
      | block                                                              | held                 |
      | {"type": "text", "text": "Calm seas."}                             | a TextAnswer         |
      | {"type": "text", "text": "Calm seas.", "citations": null}          | a TextAnswer         |
      | {"type": "text", "text": "Calm seas.", "citations": []}            | a validated response |
      | {"type": "text", "text": "Calm seas.", "tint": "blue"}             | a validated response |

  Scenario Outline: A bulk run of <provider> read back from the ledger holds its answers as their fields too
    Given an actor of <provider> in batch mode against the emulator, on an in-memory ledger
    When it maps the prompts "one", "two" and "three" in batch mode
    And it maps the same prompts again, the run read back from the ledger
    Then the second run sent nothing and holds every answer as a TextAnswer
    And every item's response equals the first run's, and the one validated from its own JSON

    Examples:
      | provider  |
      | anthropic |
      | openai    |

  Scenario Outline: A stored answer that is not text alone is read back validated, as it was stored
    Given the stored answer <answer>
    When it is read back from the ledger's JSON
    Then it is an ActorResponse equal to the one validated from that JSON

    Examples:
      | answer                                                                                                                   |
      | with a tool call                                                                                                         |
      | with a text block citing a document                                                                                      |
      | with a text block whose citations are an empty list                                                                      |
      | with a field a later lowtide added                                                                                       |
