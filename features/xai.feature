Feature: xAI, live and through its own Batch API
  As a developer with an xAI key
  I want `provider: xai` in live and batch mode, with the ledger, keys and exactly-once create of the others
  So that Grok answers my calls at the batch discount without code of my own for xAI's named batches

  Every call goes through the unmodified openai SDK (as xAI documents), built by lowtide from the actor's settings
  (the emulator's xAI base URL, the key from XAI_API_KEY), to the emulator's xAI wire in process, on its clock.

  Scenario: Concurrent calls travel in one named batch, answered by their ids and priced at xAI's batch prices
    Given an emulated xAI API
    And an xAI actor "grok" in batch mode
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | When is low tide?  | low  |
    Then every call was answered with the emulated reply to its prompt
    And the answers came in batches of 2
    And the xAI API was sent each of these requests once: high, low
    And every answer was priced at xAI's batch prices, half of its live ones
    And xAI's batch is named for lowtide's intent and its 2 requests
    And the API received these calls:
      | call                    | count |
      | xai.batches.create      | 1     |
      | xai.batches.add         | 1     |
      | xai.batches.results     | 1     |
      | xai.models.retrieve     | 1     |

  Scenario: A live call answers through Chat Completions at xAI's live prices, the key never stored
    Given an emulated xAI API
    And an xAI actor "grok" in live mode
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And every answer was priced at xAI's live prices
    And the xAI key is in neither the ledger nor the error messages
    And the API received these calls:
      | call                        | count |
      | xai.chat.completions.create | 1     |
      | xai.batches.create          | 0     |

  Scenario: A batch whose add was committed but whose answer was lost is found by its name, never sent twice
    Given an emulated xAI API
    And an xAI actor "grok" in batch mode
    And the xAI API will commit the next add of requests but drop the connection before answering
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the xAI API was sent each of these requests once: high
    And the API received these calls:
      | call               | count |
      | xai.batches.create | 1     |
      | xai.batches.add    | 1     |
      | xai.batches.list   | 1     |

  Scenario: A batch whose add failed on the server is given up, its empty batch canceled, its requests sent in another
    Given an emulated xAI API
    And an xAI actor "grok" in batch mode
    And the xAI API will fail the next add of requests with status 500
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the xAI API was sent each of these requests once: high
    And the xAI API holds 2 batches, the first canceled and empty
    And the API received these calls:
      | call               | count |
      | xai.batches.create | 2     |
      | xai.batches.add    | 2     |
      | xai.batches.cancel | 1     |

  Scenario: A batch canceled while it runs ends canceled, its unanswered request a canceled one
    Given an emulated xAI API whose batches take 600 seconds
    And an xAI actor "grok" in batch mode
    When the actor parks "When is high tide?" with the key "high"
    And its batch is canceled through the actor's backend
    Then the batch is being canceled
    And once the cancel has settled, xAI's batch has ended with 1 request canceled and none answered
    And the API received these calls:
      | call               | count |
      | xai.batches.cancel | 1     |

  Scenario: An actor given no base URL addresses xAI's own, never OpenAI's with the xAI key
    Given an xAI actor "grok" in live mode with no base URL
    Then its live calls go to "https://api.x.ai/v1/"

  Scenario: A model xAI does not serve is refused naming the closest it does, before anything is recorded or sent
    Given an emulated xAI API
    And an xAI actor "grok" in batch mode with the model "grok-3-mimi"
    When the actor is asked "When is high tide?" with the key "high"
    Then the call fails with ConfigurationError
    And the error message contains "grok-3-mini"
    And the API received these calls:
      | call               | count |
      | xai.batches.create | 0     |
