Feature: An actor answered by the Gemini API's batch mode, durably
  As a developer whose agents run on Gemini models
  I want `provider: gemini` with `batch_processing: batch` to go through Gemini's batch jobs
  So that my calls cost half, with the same ledger, keys, coalescing and exactly-once create as any provider

  Every call below goes through the unmodified google-genai SDK to the emulator's Gemini API, in process.

  Background:
    Given an emulated Gemini API
    And a Gemini actor "tides" with:
      """
      batch_processing: batch
      batch: {coalesce_window: 0.5, poll_interval: 30, reconcile_grace: 60}
      """

  Scenario: Concurrent calls travel in one inline batch job, each answered at batch prices
    When the actor is asked these prompts at once:
      | prompt               | key  |
      | When is high tide?   | high |
      | When is low tide?    | low  |
      | Is the harbour open? | open |
    Then the answer to "high" is the emulated reply to "When is high tide?"
    And the answer to "low" is the emulated reply to "When is low tide?"
    And the answer to "open" is the emulated reply to "Is the harbour open?"
    And the answers came in batches of 3
    And every Gemini answer was priced at batch prices, half the live equivalent
    And the Gemini batch job carries lowtide's intent id and request count in its display name
    And the API received these calls:
      | call                  | count |
      | gemini.files.upload   | 0     |
      | gemini.batches.create | 1     |
    And the ledger holds these requests:
      | key  | state     | model            |
      | high | succeeded | gemini-2.5-flash |
      | low  | succeeded | gemini-2.5-flash |
      | open | succeeded | gemini-2.5-flash |

  Scenario: A batch above the inline size is uploaded as a JSONL file, which is deleted once the answers are stored
    Given the actor sends a batch as an uploaded file above 10 bytes
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | When is low tide?  | low  |
    Then the answer to "high" is the emulated reply to "When is high tide?"
    And the answer to "low" is the emulated reply to "When is low tide?"
    And the answers came in batches of 2
    And every Gemini answer was priced at batch prices, half the live equivalent
    # A file's upload is two calls: its start, then its bytes.
    And the API received these calls:
      | call                  | count |
      | gemini.files.upload   | 2     |
      | gemini.batches.create | 1     |
      | gemini.files.delete   | 1     |
    And the Gemini account holds no input file any more

  Scenario: The same key asked again is answered from the ledger, at no cost and without a call
    When the actor is asked "When is high tide?" with the key "high"
    And the API's call counts are noted
    And the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the API received no calls since they were noted

  Scenario: A create whose answer is lost is found by the intent id in the job's display name, never sent twice
    Given the Gemini API will commit the next batch job but drop the connection before answering
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Gemini API holds 1 batch job
    And the API received these calls:
      | call                  | count |
      | gemini.batches.create | 1     |
    And the Gemini batch job carries lowtide's intent id and request count in its display name

  Scenario: A request Gemini fails alone in a job that succeeds fails alone; its neighbours are answered
    When the actor is asked these prompts at once:
      | prompt                                                 | key  |
      | When is high tide?                                     | high |
      | [[emulator:errored:invalid_request_error]] Which tide? | bad  |
    Then the call for "bad" failed with a BatchRequestErrored saying "INVALID_ARGUMENT"
    And the answer to "high" is the emulated reply to "When is high tide?"

  Scenario: An intent taken over after a crash between upload and create is created from the file it uploaded
    Given the ledger holds a Gemini intent for the key "high" asking "When is high tide?", its input file uploaded by a program that died before creating the batch
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the API received these calls:
      | call                  | count |
      | gemini.files.upload   | 0     |
      | gemini.batches.create | 1     |
      | gemini.files.delete   | 1     |
    And the Gemini batch job was created from the file the dead program uploaded, under its intent id
