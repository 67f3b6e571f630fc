Feature: Fireworks AI through its Batch Inference API, durably
  As a developer with a Fireworks key
  I want `provider: fireworks` with `batch_processing: batch` to go through Fireworks' Batch Inference API
  So that Fireworks' open models answer my calls at half the price, with the ledger, keys and exactly-once create

  Every call goes through the official fireworks SDK (`fireworks-ai`), built by lowtide from the actor's settings (the
  emulator's Fireworks base URL, the key from FIREWORKS_API_KEY, the account from provider_options), to the
  emulator's Fireworks wire in process, on its clock. A batch is an input dataset, then a batch inference job created
  under an id lowtide makes from the intent, then the job's output dataset read through its signed URLs.

  Scenario: Concurrent calls travel in one job named for the intent, answered by custom id at Fireworks' batch prices
    Given an emulated Fireworks API
    And a Fireworks actor "fw" in batch mode
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | When is low tide?  | low  |
    Then every call was answered with the emulated reply to its prompt
    And the answers came in batches of 2
    And the Fireworks API was sent each of these requests once: high, low
    And every answer was priced at Fireworks' batch prices, half of its live ones
    And Fireworks' job is named for lowtide's intent and its 2 requests, in the actor's account
    And the Fireworks key is in neither the ledger nor the error messages
    And the API received these calls:
      | call                         | count |
      | fireworks.datasets.create    | 1     |
      | fireworks.datasets.upload    | 1     |
      | fireworks.batch_jobs.create  | 1     |
      | fireworks.datasets.download  | 1     |
      | fireworks.datasets.delete    | 1     |
      | fireworks.models.retrieve    | 1     |

  Scenario: A job whose create was committed but whose answer was lost is made again under its id, never paid twice
    Given an emulated Fireworks API
    And a Fireworks actor "fw" in batch mode
    And the Fireworks API will commit the next job create but drop the connection before answering
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Fireworks API was sent each of these requests once: high
    And the Fireworks account holds 1 batch inference job
    And the API received these calls:
      | call                         | count |
      | fireworks.datasets.upload    | 1     |
      | fireworks.batch_jobs.create  | 2     |
      | fireworks.batch_jobs.get     | 1     |

  Scenario: An intent taken over after a crash between upload and create is created from the dataset it uploaded
    Given an emulated Fireworks API
    And a Fireworks actor "fw" in batch mode
    And the ledger holds a Fireworks intent for the key "high" asking "When is high tide?", its dataset uploaded by a program that died before creating the job
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Fireworks API was sent each of these requests once: high
    And the Fireworks job was created from the dataset the dead program uploaded
    And the API received these calls:
      | call                         | count |
      | fireworks.datasets.create    | 0     |
      | fireworks.datasets.upload    | 0     |
      | fireworks.batch_jobs.create  | 1     |
      | fireworks.datasets.delete    | 1     |

  Scenario: A request Fireworks fails alone fails alone; its neighbour is answered, each joined by custom id
    Given an emulated Fireworks API
    And a Fireworks actor "fw" in batch mode
    When the actor is asked these prompts at once:
      | prompt                                                 | key  |
      | When is high tide?                                     | high |
      | [[emulator:errored:invalid_request_error]] Which tide? | bad  |
    Then the call for "bad" failed with a BatchRequestErrored saying "invalid_request_error"
    And the answer to "high" is the emulated reply to "When is high tide?"

  Scenario: A job canceled while it runs is deleted (Fireworks has no cancel); its request ends canceled, unanswered
    Given an emulated Fireworks API whose batches take 600 seconds
    And a Fireworks actor "fw" in batch mode
    When the actor parks "When is high tide?" with the key "high"
    And its batch is canceled through the actor's backend
    Then the batch is being canceled
    And the Fireworks account holds 0 batch inference jobs
    And Fireworks' deleted job has ended with 1 request canceled and none answered
    And the API received these calls:
      | call                         | count |
      | fireworks.batch_jobs.delete  | 1     |

  Scenario: A batch collected on a host set to another account is read in the account it was created in
    Given an emulated Fireworks API whose batches take 600 seconds
    And a Fireworks actor "fw" in batch mode
    When the actor parks "When is high tide?" with the key "high"
    Then the ledger names the Fireworks job by its account, and records the account as the create's first step
    When 700 more seconds pass
    And lowtide collects the ended Fireworks batches on a host whose FIREWORKS_ACCOUNT_ID is "other-inc"
    Then lowtide status shows these tickets:
      | key  | state     | batch | attempts |
      | high | collected | yes   | 1        |
    And the Fireworks account "tides-inc" holds 1 batch inference jobs and no input dataset
    When the actor waits for the result of "high"
    Then the answer is the emulated reply to "When is high tide?"

  Scenario: A batch canceled from a host set to another account is deleted in the account it was created in
    Given an emulated Fireworks API whose batches take 100000 seconds
    And a Fireworks actor "fw" in batch mode
    When the actor parks "When is high tide?" with the key "high"
    And lowtide cancels the Fireworks key "high" on a host whose FIREWORKS_ACCOUNT_ID is "other-inc"
    And lowtide collects the ended Fireworks batches on a host whose FIREWORKS_ACCOUNT_ID is "other-inc"
    Then the Fireworks account "tides-inc" holds 0 batch inference jobs and no input dataset
    And lowtide status shows these tickets:
      | key  | state    | batch | attempts |
      | high | canceled | yes   | 1        |

  Scenario: A batch actor with no account is refused before anything is recorded or sent, saying what to set
    Given an emulated Fireworks API
    And a Fireworks actor "fw" in batch mode with no account
    When the actor is asked "When is high tide?" with the key "high"
    Then the call fails with ConfigurationError
    And the error message contains "provider_options.fireworks.account_id"
    And the error message contains "FIREWORKS_ACCOUNT_ID"
    And the API received these calls:
      | call                         | count |
      | fireworks.datasets.create    | 0     |
      | fireworks.batch_jobs.create  | 0     |

  @real_fireworks
  Scenario: Against Fireworks itself (only with LOWTIDE_REAL_FIREWORKS=1, a key and an account): one call answered
    Given the real Fireworks API, when asked for
    And a Fireworks actor "fw" in batch mode against the real API
    When the actor is asked "Say the word tide." with the key "real-tide"
    Then the call was answered with some text, priced
