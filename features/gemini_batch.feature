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

  Scenario: A batch call naming a model Gemini does not have is refused before anything is recorded or sent
    Given a Gemini actor "typo" with:
      """
      batch_processing: batch
      model: gemini-2.5-flsh
      """
    When the actor is asked "When is high tide?" with the key "typo"
    Then a ConfigurationError is raised
    And the error message contains "Did you mean 'gemini-2.5-flash'"
    And the API received these calls:
      | call                  | count |
      | gemini.files.upload   | 0     |
      | gemini.batches.create | 0     |
    And the ledger holds no requests and no batches

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

  Scenario: A job pending, then running, is polled until it succeeds; its call waits on it meanwhile
    Given the API's batches take 600 seconds from now on
    When the actor parks "When is high tide?" with the key "high"
    Then lowtide status shows these batches:
      | state            | requests | counts       |
      | waiting-on-batch | 1        | processing 1 |
    When 300 more seconds pass
    And lowtide collects the ended Gemini batches
    Then lowtide status shows these tickets:
      | key  | state            | batch | attempts |
      | high | waiting-on-batch | yes   | 1        |
    When the actor waits for the result of "high"
    Then the answer is the emulated reply to "When is high tide?"
    And lowtide status shows these batches:
      | state     | requests | counts      |
      | collected | 1        | succeeded 1 |

  Scenario: A job Gemini failed as a whole fails each of its requests, saying so
    Given the Gemini API will fail the next batch job it creates
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | When is low tide?  | low  |
    Then the call for "high" failed with a BatchRequestErrored saying "failed as a whole, before any request ran"
    And the call for "low" failed with a BatchRequestErrored saying "failed as a whole, before any request ran"
    And lowtide status shows these batches:
      | state     | requests | counts    |
      | collected | 2        | errored 2 |

  Scenario: A job cancelled before it ran answers each of its requests as canceled
    Given the API's batches take 100000 seconds from now on
    When the actor parks "When is high tide?" with the key "high"
    And its Gemini batch job is canceled
    And the actor waits for the result of "high"
    Then a BatchRequestCanceled is raised
    And the Gemini batch job ended "cancelled", still listed by the API

  Scenario: A job still unfinished after 48 hours expires; its request expires once it has had its attempts
    Given the API's batches take 200000 seconds from now on
    And a Gemini actor "tides" with:
      """
      batch_processing: batch
      batch: {poll_interval: 3600, max_attempts: 2, max_wait: 400000}
      """
    When the actor is asked "When is high tide?" with the key "high"
    Then a BatchRequestExpired is raised
    And the Gemini API holds 2 batch jobs
    And every Gemini batch job ended "expired"

  Scenario: A parked call canceled through lowtide's Python API ends canceled; the job stays listed, cancelled
    Given the API's batches take 100000 seconds from now on
    When a Gemini program parks "When is high tide?" with the key "high" and ends
    And lowtide cancels the Gemini key "high"
    And 600 more seconds pass
    And lowtide collects the ended Gemini batches
    Then lowtide status shows these tickets:
      | key  | state    | batch | attempts |
      | high | canceled | yes   | 1        |
    And the Gemini batch job ended "cancelled", still listed by the API

  Scenario: Results from a file come in another order than the requests, and each is joined to its call by key
    Given the actor sends a batch as an uploaded file above 10 bytes
    When the actor is asked these prompts at once:
      | prompt                | key   |
      | When is high tide?    | one   |
      | When is low tide?     | two   |
      | Is the harbour open?  | three |
      | Where is the lighthouse? | four |
      | How deep is the channel? | five |
    Then the answer to "one" is the emulated reply to "When is high tide?"
    And the answer to "two" is the emulated reply to "When is low tide?"
    And the answer to "three" is the emulated reply to "Is the harbour open?"
    And the answer to "four" is the emulated reply to "Where is the lighthouse?"
    And the answer to "five" is the emulated reply to "How deep is the channel?"
    And the Gemini result file listed the answers in another order than the requests

  Scenario: A request Gemini fails alone in a result file fails alone; its neighbours are answered
    Given the actor sends a batch as an uploaded file above 10 bytes
    When the actor is asked these prompts at once:
      | prompt                                                 | key  |
      | When is high tide?                                     | high |
      | [[emulator:errored:rate_limit_error]] Which tide?      | busy |
    Then the call for "busy" failed with a BatchRequestErrored saying "RESOURCE_EXHAUSTED"
    And the answer to "high" is the emulated reply to "When is high tide?"

  Scenario Outline: A result line lowtide cannot read (<kind>) fails its call alone, the line kept; the others are answered
    Given the actor sends a batch as an uploaded file above 10 bytes
    And the Gemini API will garble the result line of "bad" as <kind>
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | When is low tide?  | bad  |
    Then the call for "bad" failed with a BatchRequestUnreadable saying "<says>"
    And the answer to "high" is the emulated reply to "When is high tide?"

    Examples:
      | kind          | says                                  |
      | bad-json      | not JSON                              |
      | unknown-shape | neither a response nor an error       |

  Scenario: Parked, then collected by a later program
    Given the API's batches take 600 seconds from now on
    When a Gemini program parks "When is high tide?" with the key "high" and ends
    And 700 more seconds pass
    And a later Gemini program waits for the result of "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Gemini API created each of these requests once: high

  Scenario: An upload whose answer was lost is found under the intent's name, not uploaded again
    Given the actor sends a batch as an uploaded file above 10 bytes
    And the Gemini API will store the next uploaded file but drop the connection before answering
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Gemini API holds 1 batch job
    And the Gemini account holds no input file any more

  Scenario: An upload that never finished holds the intent's name; the input goes under another, once
    Given the actor sends a batch as an uploaded file above 10 bytes
    And the Gemini API will open the next upload but drop the connection before answering
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Gemini API created each of these requests once: high

  Scenario: A bulk run through Gemini's batch mode, with a dry run first
    When the actor plans a bulk run of 5 prompts, 2 to a batch
    Then the plan has 3 batches with a cost range above $0
    When the actor runs a bulk run of 5 prompts, 2 to a batch
    Then the run's 5 items succeeded in 3 batches
    And the Gemini API holds 3 batch jobs

  Scenario: The provider's direct batch, outside the ledger, answers each request in order
    When the Gemini batch provider answers "When is high tide?" and "When is low tide?" in one batch
    Then the outcomes are the emulated replies to "When is high tide?" and "When is low tide?", in order
    And the ledger holds no request
    When the Gemini batch provider answers "Is the harbour open?" alone
    Then the answer is the emulated reply to "Is the harbour open?"
    When the Gemini batch provider answers "[[emulator:errored:invalid_request_error]] Which tide?" alone
    Then a BatchRequestErrored is raised

  Scenario: An intent taken over whose uploaded file is gone sends its request again, once
    Given the ledger holds a Gemini intent for the key "high" asking "When is high tide?", its input file uploaded by a program that died before creating the batch
    And that Gemini input file was deleted since
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Gemini API created each of these requests once: high

  Scenario: An upload the API refuses fails its calls at once; nothing is created
    Given the actor sends a batch as an uploaded file above 10 bytes
    And the Gemini API will fail the next "gemini.files.upload" call with status 400
    When the actor is asked "When is high tide?" with the key "high"
    Then an InvalidRequestError is raised
    And the Gemini API holds 0 batch jobs

  Scenario: A create the API refuses fails its calls at once, and deletes the file it uploaded
    Given the actor sends a batch as an uploaded file above 10 bytes
    And the Gemini API will fail the next "gemini.batches.create" call with status 400
    When the actor is asked "When is high tide?" with the key "high"
    Then an InvalidRequestError is raised
    And the Gemini API holds 0 batch jobs
    And the Gemini account holds no input file any more

  Scenario: With keep_uploads, the input file stays once the answers are stored
    Given a Gemini actor "tides" with:
      """
      batch_processing: batch
      batch: {coalesce_window: 0.5, poll_interval: 30, keep_uploads: true}
      """
    And the actor sends a batch as an uploaded file above 10 bytes
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Gemini account still holds the input file of the job

  Scenario: A result file whose download breaks off is fetched again from the start; each answer is stored once
    Given the actor sends a batch as an uploaded file above 10 bytes
    And the next download of the Gemini result file will break after 1 line
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | When is low tide?  | low  |
    Then the answer to "high" is the emulated reply to "When is high tide?"
    And the answer to "low" is the emulated reply to "When is low tide?"
    And the API received these calls:
      | call                  | count |
      | gemini.files.download | 2     |

  Scenario: A prompt Gemini blocks fails its call alone, not sent again
    When the actor is asked these prompts at once:
      | prompt                                     | key     |
      | When is high tide?                         | high    |
      | Hello [[emulator:blocked:SAFETY]]          | blocked |
    Then the call for "blocked" failed with a BatchRequestErrored saying "SAFETY"
    And the answer to "high" is the emulated reply to "When is high tide?"
    And the Gemini API holds 1 batch job

  Scenario: A key that is not a plain id travels under a digest of it, and its answer comes back to it
    When the actor is asked "When is high tide?" with the key "tide table #1 (Brest)"
    Then the answer is the emulated reply to "When is high tide?"

  Scenario: A call whose worst case is over its budget is refused before anything is sent
    Given a Gemini actor "tides" with:
      """
      batch_processing: batch
      max_tokens: 4000
      """
    When the actor is asked "When is high tide?" with:
      """
      max_cost_usd: 0.000001
      """
    Then a BudgetExceededError is raised
    And the Gemini API holds 0 batch jobs

  Scenario: A system prompt, tools and extra parameters travel inline, each where Gemini's REST body holds it
    Given a Gemini actor "tides" with:
      """
      batch_processing: batch
      system_prompt: You answer questions about the tides.
      extra_params: {generationConfig: {topK: 5}}
      """
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Gemini batch job held a request with a system instruction and topK 5
    And the API received these calls:
      | call                  | count |
      | gemini.files.upload   | 0     |

  Scenario Outline: A call whose extra parameters hold a field the SDK does not know (<where>) goes in a file, as it is; Gemini refuses it alone
    Given a Gemini actor "tides" with:
      """
      batch_processing: batch
      batch: {coalesce_window: 0.5, poll_interval: 30, max_attempts: 1}
      extra_params: <extra>
      """
    When the actor is asked "When is high tide?" with the key "high"
    Then a BatchRequestErrored is raised
    And the error message contains "<field>"
    And the API received these calls:
      | call                  | count |
      | gemini.files.upload   | 2     |
      | gemini.batches.create | 1     |

    Examples:
      | where                  | extra                            | field     |
      | at the top             | {tideMode: spring}               | tideMode  |
      | in the generation config | {generationConfig: {tideDepth: 3}} | tideDepth |

  Scenario: A structured answer is parsed from a batch answer
    When the Gemini actor is asked "Plan a voyage" for a Voyage
    Then the Gemini answer is parsed into a Voyage

  Scenario: A request missing from a succeeded job's results is read for again, then fails alone, saying it came back nowhere
    Given the Gemini API will lose the request "lost" from its job's results
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | Where did it go?   | lost |
    Then the call for "lost" failed with a BatchRequestError saying "ended without a result for request lost"
    And the answer to "high" is the emulated reply to "When is high tide?"

  Scenario: A create whose answer is lost is found by its display name among the jobs of earlier calls
    When the actor is asked "When is low tide?" with the key "low"
    And 7200 more seconds pass
    And the Gemini API will commit the next batch job but drop the connection before answering
    And the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Gemini API holds 2 batch jobs
    And the Gemini API created each of these requests once: low, high
