Feature: An actor answered by Claude on Vertex AI's batch prediction jobs, durably
  As a developer whose company runs Claude on Google Cloud
  I want `provider: vertex_claude` with `batch_processing: batch` and a bucket to go through Vertex AI's batch jobs
  So that my calls cost Vertex AI's batch price, with the same ledger, keys and exactly-once create as any provider

  Every call below goes through the unmodified google-genai SDK (`vertexai=True`: the job routes) and
  google-cloud-storage (the job's files), and the anthropic SDK's `AsyncAnthropicVertex` (the model looked up before
  sending), built by lowtide from the actor's settings, to the emulator on a loopback socket, reached anonymously.

  Background:
    Given an emulated Vertex AI and Cloud Storage on a socket, whose jobs take 60 seconds
    And a Vertex Claude batch actor "tides" with:
      """
      batch: {coalesce_window: 0.5, poll_interval: 30, reconcile_grace: 60}
      """

  Scenario: Concurrent calls travel in one job of Anthropic Messages bodies over Cloud Storage, at batch prices
    When the actor is asked these prompts at once:
      | prompt               | key  |
      | When is high tide?   | high |
      | When is low tide?    | low  |
      | Is the harbour open? | open |
    Then the answer to "high" is the emulated reply to "When is high tide?"
    And the answer to "low" is the emulated reply to "When is low tide?"
    And the answer to "open" is the emulated reply to "Is the harbour open?"
    And the answers came in batches of 3
    And every Vertex Claude answer was priced at Vertex AI's batch prices, half the live equivalent
    And the Vertex batch job ran "publishers/anthropic/models/claude-sonnet-4-6@20260217" on lines of Anthropic Messages bodies, each named by its custom id
    And the Vertex batch job carries lowtide's intent id and request count in its display name
    And the bucket holds the job's answers under "lowtide/lt_", and no input file
    And the API received these calls:
      | call                          | count |
      | vertex.claude.models.get      | 1     |
      | vertex.storage.objects.insert | 1     |
      | vertex.batches.create         | 1     |
      | vertex.storage.objects.delete | 1     |
      | vertex.claude.raw_predict     | 0     |
    And the ledger holds these requests:
      | key  | state     | model                      |
      | high | succeeded | claude-sonnet-4-6@20260217 |
      | low  | succeeded | claude-sonnet-4-6@20260217 |
      | open | succeeded | claude-sonnet-4-6@20260217 |

  Scenario: A create whose answer is lost is found by the intent id in the job's display name, never paid twice
    Given Vertex AI will commit the next batch job but drop the connection before answering
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And Vertex AI holds 1 batch job
    And each custom id was sent to Vertex AI once
    And the API received these calls:
      | call                  | count |
      | vertex.batches.create | 1     |
    And the Vertex batch job carries lowtide's intent id and request count in its display name

  Scenario: A request the model refuses in a job fails alone, not retried; its neighbours are answered
    When the actor is asked these prompts at once:
      | prompt                                                 | key  |
      | When is high tide?                                     | high |
      | [[emulator:errored:invalid_request_error]] Which tide? | bad  |
    Then the call for "bad" failed with a BatchRequestErrored saying "Emulated invalid_request_error requested by a marker"
    And the answer to "high" is the emulated reply to "When is high tide?"
    And Vertex AI holds 1 batch job

  Scenario: A job Vertex AI failed as a whole fails each of its requests with the job's own words, not sent again
    Given Vertex AI will fail the next batch job it creates
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | When is low tide?  | low  |
    Then the call for "high" failed with a BatchRequestErrored saying "Internal error occurred"
    And the call for "low" failed with a BatchRequestErrored saying "Internal error occurred"
    And Vertex AI holds 1 batch job

  Scenario: A call that outlives its max_wait has lowtide cancel its job: a BatchTimeoutError saying so
    Given a Vertex Claude batch actor "impatient" with:
      """
      batch: {coalesce_window: 0.5, poll_interval: 10, max_wait: 30, on_timeout: cancel}
      """
    When the actor is asked "When is high tide?" with the key "high"
    Then a BatchTimeoutError is raised
    And the timeout error says the batch was canceled
    And Vertex AI holds 1 batch job
    And the API received these calls:
      | call                  | count |
      | vertex.batches.cancel | 1     |

  Scenario: A job cancelled in the console before it ran answers its request as canceled
    When the actor parks "When is high tide?" with the key "high"
    And its Vertex batch job is cancelled in the console
    And the actor waits for the result of "high"
    Then a BatchRequestCanceled is raised
    And Vertex AI holds 1 batch job

  Scenario: An intent taken over after a crash between writing its input and creating the job is created from it
    Given the ledger holds a Vertex Claude intent for the key "high" asking "When is high tide?", its input written to the bucket by a program that died before creating the job
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the API received these calls:
      | call                          | count |
      | vertex.storage.objects.insert | 0     |
      | vertex.batches.create         | 1     |
      | vertex.storage.objects.delete | 1     |
    And the Vertex batch job was created from the file the dead program wrote, under its intent id
    And the Vertex batch job ran "publishers/anthropic/models/claude-sonnet-4-6@20260217" on lines of Anthropic Messages bodies, each named by its custom id

  Scenario: A batch actor without a bucket is refused as it loads, saying what to give
    When a Vertex Claude batch actor "bucketless" is configured with:
      """
      vertex_claude: {bucket: null}
      """
    Then a ConfigurationError is raised
    And the error names the field "provider_options.vertex_claude.bucket"
    And the error message contains "Cloud Storage"

  Scenario: A Claude model Vertex AI does not serve is refused before anything is written or created
    Given a Vertex Claude batch actor "lost" with:
      """
      model: claude-sonet-4-6@20260217
      """
    When the actor is asked "When is high tide?" with the key "high"
    Then a ConfigurationError is raised
    And the error names the field "model"
    And the API received these calls:
      | call                          | count |
      | vertex.storage.objects.insert | 0     |
      | vertex.batches.create         | 0     |
