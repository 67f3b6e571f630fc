Feature: OpenRouter through its Batch API, durably
  As a developer with an OpenRouter key
  I want `provider: openrouter` with `batch_processing: batch` to go through OpenRouter's Batch API
  So that the many models behind one key answer my calls at about half the price, with the ledger, keys and a create
  never paid twice

  Every call goes through the unmodified openai SDK at the emulator's OpenRouter base URL (as OpenRouter documents),
  built by lowtide from the actor's settings, the key from OPENROUTER_API_KEY. A batch is one create holding every
  request inline; OpenRouter keeps no metadata and takes no idempotency key, so a create whose answer was lost is found
  again by OpenRouter's listing of batches and, where several could be it, by the custom ids in their results.

  Scenario: Concurrent calls travel in one batch, answered by custom id at OpenRouter's batch price
    Given an emulated OpenRouter API
    And an OpenRouter actor "router" in batch mode, polling every 30 seconds
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | When is low tide?  | low  |
    Then every call was answered with the emulated reply to its prompt
    And the answers came in batches of 2
    And the OpenRouter API was sent each of these requests once: high, low
    And every answer was priced at OpenRouter's batch price, half of its live one
    And the OpenRouter key is not in the ledger
    And the API received these calls:
      | call                        | count |
      | openrouter.batches.create   | 1     |
      | openrouter.models.list      | 1     |

  Scenario: A request OpenRouter fails alone fails alone; its neighbour is answered, each joined by custom id
    Given an emulated OpenRouter API
    And an OpenRouter actor "router" in batch mode, polling every 30 seconds
    When the actor is asked these prompts at once:
      | prompt                                                 | key  |
      | When is high tide?                                     | high |
      | [[emulator:errored:invalid_request_error]] Which tide? | bad  |
    Then the call for "bad" failed with a BatchRequestErrored saying "invalid_request_error"
    And the answer to "high" is the emulated reply to "When is high tide?"

  Scenario: A batch whose create was committed but whose answer was lost is found in the listing, never paid twice
    Given an emulated OpenRouter API
    And an OpenRouter actor "router" in batch mode, polling every 30 seconds
    And the OpenRouter API will commit the next batch create but drop the connection before answering
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the OpenRouter API was sent each of these requests once: high
    And the OpenRouter API committed 1 batch
    And the ledger holds these batches, oldest first:
      | state     | requests | API batch | note                               |
      | collected | 1        | yes       | reconciled after an unknown create |
    And the API received these calls:
      | call                        | count |
      | openrouter.batches.create   | 1     |

  Scenario: A cancel is refused, saying OpenRouter has none; the batch runs on and is answered
    Given an emulated OpenRouter API
    And the API's batches take 600 seconds from now on
    And an OpenRouter actor "router" in batch mode, polling every 30 seconds
    When the actor parks "When is high tide?" with the key "high"
    And its batch is canceled through the actor's backend
    Then the call fails with InvalidRequestError
    And the error message contains "OpenRouter's Batch API has no cancel"
    When the actor waits for the result of "high"
    Then the answer is the emulated reply to "When is high tide?"

  @real_openrouter
  Scenario: Against OpenRouter itself (only with LOWTIDE_REAL_OPENROUTER=1 and a key): one call answered
    Given the real OpenRouter API, when asked for
    And an OpenRouter actor "router" in batch mode against the real API
    When the actor is asked "Say the word tide." with the key "real-tide"
    Then the call was answered with some text, priced
