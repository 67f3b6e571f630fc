Feature: An actor answered by Vertex AI's batch prediction jobs, durably
  As a developer whose company runs Gemini on Google Cloud
  I want `provider: vertex` with `batch_processing: batch` and a bucket to go through Vertex AI's batch jobs
  So that my calls cost half, with the same ledger, keys, coalescing and exactly-once create as any provider

  Every call below goes through the unmodified google-genai SDK (`vertexai=True`) and google-cloud-storage, built by
  lowtide from the actor's settings, to the emulator on a loopback socket: Vertex AI's routes and the Cloud Storage
  JSON API on one port, reached anonymously.

  Background:
    Given an emulated Vertex AI and Cloud Storage on a socket, whose jobs take 60 seconds
    And a Vertex batch actor "tides" with:
      """
      batch: {coalesce_window: 0.5, poll_interval: 30, reconcile_grace: 60}
      """

  Scenario: Concurrent calls travel in one job over Cloud Storage, each answered at batch prices
    When the actor is asked these prompts at once:
      | prompt               | key  |
      | When is high tide?   | high |
      | When is low tide?    | low  |
      | Is the harbour open? | open |
    Then the answer to "high" is the emulated reply to "When is high tide?"
    And the answer to "low" is the emulated reply to "When is low tide?"
    And the answer to "open" is the emulated reply to "Is the harbour open?"
    And the answers came in batches of 3
    And every Vertex answer was priced at batch prices, half the live equivalent
    And the Vertex batch job carries lowtide's intent id and request count in its display name
    And the bucket holds the job's answers under "lowtide/lt_", and no input file
    And the API received these calls:
      | call                   | count |
      | vertex.storage.objects.insert | 1     |
      | vertex.batches.create  | 1     |
      | vertex.storage.objects.delete | 1     |
    And the ledger holds these requests:
      | key  | state     | model            |
      | high | succeeded | gemini-2.5-flash |
      | low  | succeeded | gemini-2.5-flash |
      | open | succeeded | gemini-2.5-flash |

  Scenario: A create whose answer is lost is found by the intent id in the job's display name, never sent twice
    Given Vertex AI will commit the next batch job but drop the connection before answering
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And Vertex AI holds 1 batch job
    And each custom id was sent to Vertex AI once
    And the API received these calls:
      | call                  | count |
      | vertex.batches.create | 1     |
    And the Vertex batch job carries lowtide's intent id and request count in its display name

  Scenario: A request Vertex AI fails alone in a job fails alone; its neighbours are answered
    When the actor is asked these prompts at once:
      | prompt                                                 | key  |
      | When is high tide?                                     | high |
      | [[emulator:errored:invalid_request_error]] Which tide? | bad  |
    Then the call for "bad" failed with a BatchRequestErrored saying "Emulated invalid_request_error requested by a marker"
    And the answer to "high" is the emulated reply to "When is high tide?"

  Scenario: A job Vertex AI failed as a whole fails each of its requests, saying so
    Given Vertex AI will fail the next batch job it creates
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | When is low tide?  | low  |
    Then the call for "high" failed with a BatchRequestErrored saying "Internal error occurred"
    And the call for "low" failed with a BatchRequestErrored saying "Internal error occurred"

  Scenario: A job cancelled before it ran answers its request as canceled
    # A day's job: with the background's 60 seconds, the parked call's poller (two 30-second sleeps of the scenario's
    # clock) could see the job end before the step that cancels it ran (1 full run in 3 under load).
    Given the emulated API's batches now take 24 hours
    When the actor parks "When is high tide?" with the key "high"
    And its Vertex batch job is cancelled in the console
    And the actor waits for the result of "high"
    Then a BatchRequestCanceled is raised
    And Vertex AI holds 1 batch job

  Scenario: A batch actor without a bucket is refused as it loads, saying what to give
    When a Vertex batch actor "bucketless" is configured with:
      """
      vertex: {bucket: null}
      """
    Then a ConfigurationError is raised
    And the error names the field "provider_options.vertex.bucket"
    And the error message contains "Cloud Storage"

  Scenario: An intent taken over after a crash between writing its input and creating the job is created from it
    Given the ledger holds a Vertex intent for the key "high" asking "When is high tide?", its input written to the bucket by a program that died before creating the job
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the API received these calls:
      | call                   | count |
      | vertex.storage.objects.insert | 0     |
      | vertex.batches.create  | 1     |
      | vertex.storage.objects.delete | 1     |
    And the Vertex batch job was created from the file the dead program wrote, under its intent id

  Scenario: An intent taken over whose input is gone from the bucket sends its request again, once
    Given the ledger holds a Vertex intent for the key "high" asking "When is high tide?", its input written to the bucket by a program that died before creating the job
    And that input was deleted from the bucket since
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And Vertex AI holds 1 batch job
    And each custom id was sent to Vertex AI once

  Scenario: A create Vertex AI refuses fails its calls at once, and deletes the input it wrote
    Given Vertex AI will fail the next "vertex.batches.create" call with status 400
    When the actor is asked "When is high tide?" with the key "high"
    Then an InvalidRequestError is raised
    And Vertex AI holds 0 batch job
    And the bucket holds no file any more

  Scenario: A write Cloud Storage refuses fails its calls at once; nothing is created
    Given Vertex AI will fail the next "vertex.storage.objects.insert" call with status 403
    When the actor is asked "When is high tide?" with the key "high"
    Then a PermissionDeniedError is raised
    And Vertex AI holds 0 batch job

  Scenario: A batch above 8 MiB is written to Cloud Storage in a resumable upload, and answered
    When the actor is asked 3 prompts of 3000000 characters at once
    Then every call was answered with the emulated reply to its prompt
    And the answers came in batches of 3
    And the API received these calls:
      | call                   | count |
      | vertex.storage.objects.insert | 2     |
      | vertex.batches.create  | 1     |
