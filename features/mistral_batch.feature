Feature: An actor answered by Mistral's Batch API, durably
  As a developer whose agents run on Mistral models
  I want `provider: mistral` with `batch_processing: batch` to go through Mistral's batch jobs
  So that my calls cost half, with the same ledger, keys, coalescing and exactly-once create as any provider

  Every call below goes through the unmodified mistralai SDK to the emulator's Mistral API, in process.

  Background:
    Given an emulated Mistral API
    And a Mistral actor "tides" with:
      """
      batch_processing: batch
      batch: {coalesce_window: 0.5, poll_interval: 30, reconcile_grace: 60}
      """

  Scenario: Every status of a Mistral batch job reads as lowtide's phase, its unfinished requests counted as it ended them
    Then the Mistral job statuses read as these phases:
      | status                 | phase     | counts                     |
      | QUEUED                 | running   | processing 3, succeeded 1  |
      | RUNNING                | running   | processing 3, succeeded 1  |
      | CANCELLATION_REQUESTED | canceling | processing 3, succeeded 1  |
      | SUCCESS                | ended     | succeeded 4                |
      | FAILED                 | ended     | succeeded 1, errored 3     |
      | TIMEOUT_EXCEEDED       | ended     | succeeded 1, expired 3     |
      | CANCELLED              | ended     | succeeded 1, canceled 3    |
      | SOMETHING_NEW          | running   | processing 3, succeeded 1  |

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
    And every Mistral answer was priced at batch prices, half the live equivalent
    And the Mistral batch job carries lowtide's intent id in its metadata, asked to end within 24 hours
    And the API received these calls:
      | call                      | count |
      | mistral.files.upload      | 0     |
      | mistral.batches.create | 1     |
    And the ledger holds these requests:
      | key  | state     | model                |
      | high | succeeded | mistral-small-latest |
      | low  | succeeded | mistral-small-latest |
      | open | succeeded | mistral-small-latest |

  Scenario Outline: An inline job holds each request's body as the ledger stored it (<read>)
    Given a Mistral actor "exact" with:
      """
      batch_processing: batch
      batch: {coalesce_window: 0.5, poll_interval: 30}
      extra_params: <extra>
      """
    When the actor is asked these prompts at once:
      | prompt                     | key  |
      | When is high tide? ☃ é     | high |
      | Is the harbour "open"? \\ | open |
    Then the answer to "high" is the emulated reply to "When is high tide? ☃ é"
    And the Mistral job holds each request's body as the ledger stored it

    Examples:
      | read                                          | extra                                     |
      | orjson: most requests                         | {random_seed: 7, top_p: 0.0000001}        |
      | json: an integer beyond 64 bits, read exactly | {random_seed: 123456789012345678901234567} |

  Scenario: A batch above the inline size is uploaded as a JSONL file, which is deleted once the answers are stored
    Given the actor sends a Mistral batch as an uploaded file above 10 bytes
    When the actor is asked these prompts at once:
      | prompt                   | key   |
      | When is high tide?       | one   |
      | When is low tide?        | two   |
      | Is the harbour open?     | three |
      | Where is the lighthouse? | four  |
    Then the answer to "one" is the emulated reply to "When is high tide?"
    And the answer to "four" is the emulated reply to "Where is the lighthouse?"
    And every Mistral answer was priced at batch prices, half the live equivalent
    And a Mistral output file listed the answers in another order than the requests
    And the API received these calls:
      | call                      | count |
      | mistral.files.upload      | 1     |
      | mistral.batches.create | 1     |
      | mistral.files.delete      | 1     |
    And the Mistral account holds no input file any more

  Scenario: A batch call naming a model Mistral does not have is refused before anything is recorded or sent
    Given a Mistral actor "typo" with:
      """
      batch_processing: batch
      model: mistral-smal-latest
      """
    When the actor is asked "When is high tide?" with the key "typo"
    Then a ConfigurationError is raised
    And the error message contains "Did you mean 'mistral-small-latest'"
    And the API received these calls:
      | call                      | count |
      | mistral.batches.create | 0     |
    And the ledger holds no requests and no batches

  Scenario: A create whose answer is lost is found by the intent id in the job's metadata, never sent twice
    Given the Mistral API will commit the next batch job but drop the connection before answering
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Mistral API holds 1 batch job
    And the Mistral API created each of these requests once: high
    And the API received these calls:
      | call                      | count |
      | mistral.batches.create | 1     |

  Scenario: A list refusing the metadata filter is read whole instead; the lost create is still found once
    Given the Mistral API will commit the next batch job but drop the connection before answering
    And the Mistral API will fail the next "mistral.batches.list" call with status 422
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Mistral API holds 1 batch job
    And the Mistral API created each of these requests once: high

  Scenario Outline: A create answered <status> is reconciled by the job list, then made once
    Given the Mistral API will fail the next "mistral.batches.create" call with status <status>
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Mistral API holds 1 batch job
    And the Mistral API created each of these requests once: high
    And the API received these calls:
      | call                      | count |
      | mistral.batches.create | 2     |

    Examples:
      | status |
      | 500    |
      | 503    |
      | 429    |

  Scenario: A create the API refuses (400) fails its calls at once, and deletes the file it uploaded
    Given the actor sends a Mistral batch as an uploaded file above 10 bytes
    And the Mistral API will fail the next "mistral.batches.create" call with status 400
    When the actor is asked "When is high tide?" with the key "high"
    Then an InvalidRequestError is raised
    And the Mistral API holds 0 batch jobs
    And the Mistral account holds no input file any more

  Scenario: A create the API refuses (400) with its requests inline fails its calls at once; nothing is left behind
    Given the Mistral API will fail the next "mistral.batches.create" call with status 400
    When the actor is asked "When is high tide?" with the key "high"
    Then an InvalidRequestError is raised
    And the Mistral API holds 0 batch jobs
    And the Mistral account holds 0 input files

  Scenario: With batch.keep_uploads, the uploaded input file is kept once the answers are stored
    Given a Mistral actor "keeper" with:
      """
      batch_processing: batch
      batch: {coalesce_window: 0.5, poll_interval: 30, reconcile_grace: 60, keep_uploads: true}
      """
    And the actor sends a Mistral batch as an uploaded file above 10 bytes
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Mistral account holds 1 input file

  Scenario: With batch.keep_uploads, the file of a create the API refuses (400) is kept too
    Given a Mistral actor "keeper" with:
      """
      batch_processing: batch
      batch: {coalesce_window: 0.5, poll_interval: 30, reconcile_grace: 60, keep_uploads: true}
      """
    And the actor sends a Mistral batch as an uploaded file above 10 bytes
    And the Mistral API will fail the next "mistral.batches.create" call with status 400
    When the actor is asked "When is high tide?" with the key "high"
    Then an InvalidRequestError is raised
    And the Mistral account holds 1 input file

  Scenario: An intent taken over after a crash between upload and create is created from the file it uploaded
    Given the actor sends a Mistral batch as an uploaded file above 10 bytes
    And the ledger holds a Mistral intent for the key "high" asking "When is high tide?", its input file uploaded by a program that died before creating the job
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the API received these calls:
      | call                      | count |
      | mistral.files.upload      | 0     |
      | mistral.batches.create | 1     |
      | mistral.files.delete      | 1     |
    And the Mistral batch job was created from the file the dead program uploaded, under its intent id

  Scenario: An intent taken over whose uploaded file is gone sends its request again, once
    Given the actor sends a Mistral batch as an uploaded file above 10 bytes
    And the ledger holds a Mistral intent for the key "high" asking "When is high tide?", its input file uploaded by a program that died before creating the job
    And that Mistral input file was deleted since
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Mistral API created each of these requests once: high

  Scenario: An intent taken over after a crash between create and its record is adopted by its metadata, not sent again
    Given the ledger holds a Mistral intent for the key "high" asking "When is high tide?", whose job a program created and died before recording
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Mistral API holds 1 batch job
    And the Mistral API created each of these requests once: high
    And the API received these calls:
      | call                      | count |
      | mistral.batches.create | 0     |

  Scenario: A job queued, then running, is polled until it succeeds; its call waits on it meanwhile
    Given the API's batches take 600 seconds from now on
    When the actor parks "When is high tide?" with the key "high"
    Then lowtide status shows these batches:
      | state            | requests | counts       |
      | waiting-on-batch | 1        | processing 1 |
    When the actor waits for the result of "high"
    Then the answer is the emulated reply to "When is high tide?"
    And lowtide status shows these batches:
      | state     | requests | counts      |
      | collected | 1        | succeeded 1 |
    And every Mistral batch job ended "SUCCESS"

  Scenario: A job Mistral failed as a whole fails each of its requests, saying why
    Given the Mistral API will fail the next batch job it creates
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | When is low tide?  | low  |
    Then the call for "high" failed with a BatchRequestErrored saying "The model crashed on the whole job."
    And the call for "low" failed with a BatchRequestErrored saying "The model crashed on the whole job."
    And every Mistral batch job ended "FAILED"

  Scenario: A job cancelled before it ran answers each of its requests as canceled
    Given the API's batches take 100000 seconds from now on
    When the actor parks "When is high tide?" with the key "high"
    And its Mistral batch job is canceled
    And the actor waits for the result of "high"
    Then a BatchRequestCanceled is raised
    And every Mistral batch job ended "CANCELLED"

  Scenario: A parked call canceled through lowtide's Python API ends canceled; the job stays listed, cancelled
    Given the API's batches take 100000 seconds from now on
    When a Mistral program parks "When is high tide?" with the key "high" and ends
    And lowtide cancels the Mistral key "high"
    And lowtide collects the ended Mistral batches
    Then lowtide status shows these tickets:
      | key  | state    | batch | attempts |
      | high | canceled | yes   | 1        |
    And every Mistral batch job ended "CANCELLED"

  Scenario: Parked by one program, collected by a later one, created once
    Given the API's batches take 600 seconds from now on
    When a Mistral program parks "When is high tide?" with the key "high" and ends
    And 700 more seconds pass
    And a later Mistral program waits for the result of "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Mistral API created each of these requests once: high

  Scenario: A job still running when its timeout_hours end times out; its request expires once it has had its attempts
    Given the API's batches take 20000 seconds from now on
    And a Mistral actor "tides" with:
      """
      batch_processing: batch
      batch: {poll_interval: 600, max_attempts: 2, max_wait: 7200}
      """
    When the actor is asked "When is high tide?" with the key "high"
    Then a BatchRequestExpired is raised
    And the Mistral API holds 2 batch jobs
    And every Mistral batch job ended "TIMEOUT_EXCEEDED"

  Scenario: A request Mistral fails alone fails alone; its neighbours are answered
    When the actor is asked these prompts at once:
      | prompt                                                 | key  |
      | When is high tide?                                     | high |
      | [[emulator:errored:invalid_request_error]] Which tide? | bad  |
    Then the call for "bad" failed with a BatchRequestErrored saying "invalid_request_error"
    And the answer to "high" is the emulated reply to "When is high tide?"

  Scenario Outline: A result line lowtide cannot read (<kind>) fails its call alone; the others are answered
    Given the Mistral API will garble the result line of "bad" as <kind>
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | When is low tide?  | bad  |
    Then the call for "bad" failed with a BatchRequestUnreadable saying "<says>"
    And the answer to "high" is the emulated reply to "When is high tide?"

    Examples:
      | kind          | says                            |
      | bad-json      | not JSON                        |
      | unknown-shape | neither a response nor an error |

  Scenario: A request missing from a succeeded job's results is read for again, then fails alone
    Given the Mistral API will lose the request "lost" from its job's results
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | Where did it go?   | lost |
    Then the call for "lost" failed with a BatchRequestError saying "ended without a result for request lost"
    And the answer to "high" is the emulated reply to "When is high tide?"

  Scenario: An output file whose download breaks off is fetched again from the start; each answer is stored once
    Given the next download of a Mistral result file will break after 1 line
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | When is low tide?  | low  |
    Then the answer to "high" is the emulated reply to "When is high tide?"
    And the answer to "low" is the emulated reply to "When is low tide?"
    And the API received these calls:
      | call                  | count |
      | mistral.files.content | 2     |

  Scenario: A bulk run through Mistral's batch jobs, with a dry run first, each job within Mistral's limits
    Then the Mistral codec keeps every job within 100000 requests and 512 MB
    When the actor plans a bulk run of 5 prompts, 2 to a batch
    Then the plan has 3 batches with a cost range above $0
    When the actor runs a bulk run of 5 prompts, 2 to a batch
    Then the run's 5 items succeeded in 3 batches
    And the Mistral API holds 3 batch jobs

  Scenario: The provider's direct batch, outside the ledger, answers each request in order
    When the Mistral batch provider answers "When is high tide?" and "When is low tide?" in one batch
    Then the outcomes are the emulated replies to "When is high tide?" and "When is low tide?", in order
    And the ledger holds no request

  Scenario: A call whose worst case is over its budget is refused before anything is sent
    Given a Mistral actor "tides" with:
      """
      batch_processing: batch
      max_tokens: 4000
      """
    When the actor is asked "When is high tide?" with:
      """
      max_cost_usd: 0.000001
      """
    Then a BudgetExceededError is raised
    And the Mistral API holds 0 batch jobs

  Scenario: The provider's direct batch of one request answers it, or raises the error its request ended with
    When the Mistral batch provider answers "When is high tide?" alone
    Then the answer is the emulated reply to "When is high tide?"
    When the Mistral batch provider answers "[[emulator:errored:invalid_request_error]] Which tide?" alone
    Then a BatchRequestErrored is raised
    And the ledger holds no request

  Scenario: A response model is asked of a batch job as JSON of its schema, and each answer is parsed into it
    When the Mistral actor is asked "Plan a voyage" for a Voyage
    Then the Mistral answer is parsed into a Voyage
    And every Mistral batch job ended "SUCCESS"
