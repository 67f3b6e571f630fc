Feature: An actor answered by Together AI's Batch API, durably
  As a developer whose agents run on open models served by Together AI
  I want `provider: together` with `batch_processing: batch` to go through Together's Batch API
  So that my calls cost half, with the same ledger, keys, coalescing and exactly-once create as any provider

  Every call below goes through the unmodified together SDK (v3) to the emulator's Together API, in process.
  Together's jobs carry no metadata: lowtide uploads each batch's input file once, under a name made from its intent
  id, and finds a job whose create it never heard back from by that file.

  Background:
    Given an emulated Together API
    And a Together actor "tides" with:
      """
      batch_processing: batch
      batch: {coalesce_window: 0.5, poll_interval: 30, reconcile_grace: 60}
      """

  Scenario: Concurrent calls travel in one job: one file uploaded under the intent's name, one job created, the file deleted after
    When the actor is asked these prompts at once:
      | prompt               | key  |
      | When is high tide?   | high |
      | When is low tide?    | low  |
      | Is the harbour open? | open |
    Then every call was answered with the emulated reply to its prompt
    And the answers came in batches of 3
    And every Together answer was priced at Together's batch prices, half the live equivalent
    And the Together API was sent each of these requests once: high, low, open
    And the API received these calls:
      | call                      | count |
      | together.files.create     | 1     |
      | together.files.put        | 1     |
      | together.files.preprocess | 1     |
      | together.batches.create   | 1     |
      | together.files.delete     | 1     |
    And the Together account holds no input file any more
    And the ledger holds these requests:
      | key  | state     | model                                   |
      | high | succeeded | meta-llama/Llama-3.3-70B-Instruct-Turbo |
      | low  | succeeded | meta-llama/Llama-3.3-70B-Instruct-Turbo |
      | open | succeeded | meta-llama/Llama-3.3-70B-Instruct-Turbo |

  Scenario: With keep_uploads, the input file stays once the answers are stored, named after the intent and its count
    Given a Together actor "tides" with:
      """
      batch_processing: batch
      batch: {coalesce_window: 0.5, poll_interval: 30, keep_uploads: true}
      """
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | When is low tide?  | low  |
    Then every call was answered with the emulated reply to its prompt
    And the Together job was created from an input file named after its intent and request count

  Scenario Outline: A setting Together would refuse (<what>) is refused as the actor loads, before anything is sent
    When a Together actor "bad" is set up with:
      """
      batch_processing: batch
      <setting>
      """
    Then a ConfigurationError is raised
    And the error message contains "<says>"
    And the API received no calls at all

    Examples:
      | what                       | setting                                        | says                              |
      | a min_p above 1            | provider_options: {together: {min_p: 2}}        | provider_options.together.min_p   |
      | an unknown setting         | provider_options: {together: {tide: high}}      | provider_options.together.tide    |
      | top_k below 1              | top_k: 0                                       | the least Together takes          |
      | a temperature out of range | temperature: 3                                 | outside the range Together takes  |

  Scenario: A misspelt model is refused before the call is recorded or anything is sent, naming the closest Together lists
    Given a Together actor "typo" with:
      """
      batch_processing: batch
      model: openai/gpt-oss-12b
      """
    When the actor is asked "When is high tide?" with the key "high"
    Then a ConfigurationError is raised
    And the error message contains "has no model 'openai/gpt-oss-12b'. Did you mean 'openai/gpt-oss-120b'"
    And the ledger holds no requests and no batches
    And the API received these calls:
      | call                     | count |
      | together.models.list     | 1     |
      | together.files.create    | 0     |
      | together.batches.create  | 0     |

  Scenario: An image sent to a Together model that takes text only is refused before anything is sent
    Given a Together actor "viewer" with:
      """
      batch_processing: batch
      model: meta-llama/Llama-3.3-70B-Instruct-Turbo
      """
    When the actor is asked with:
      """
      messages:
        - role: user
          content:
            - {type: text, text: "Read the chart."}
        - role: assistant
          content: "Send it."
        - role: user
          content:
            - {type: image, source: {type: base64, media_type: image/png, data: iVBORw0KGgo=}}
      """
    Then a ConfigurationError is raised
    And the error names the field "messages[2].content[0]"
    And the error message contains "Together's model 'meta-llama/Llama-3.3-70B-Instruct-Turbo' takes text only"
    And the ledger holds no requests and no batches
    And the API received these calls:
      | call                     | count |
      | together.files.create    | 0     |
      | together.batches.create  | 0     |

  Scenario: A call whose worst case is over its budget is refused before anything is sent
    Given a Together actor "tides" with:
      """
      batch_processing: batch
      max_tokens: 4000
      """
    When the actor is asked "When is high tide?" with:
      """
      max_cost_usd: 0.000001
      """
    Then a BudgetExceededError is raised
    And the Together API committed 0 batches
    And the API received these calls:
      | call                     | count |
      | together.files.create | 0     |

  Scenario: Called directly, the Together batch provider answers one request in a batch of its own, outside the ledger
    When the Together batch provider answers "When is high tide?" directly, outside the ledger
    Then the answer is the emulated reply to "When is high tide?"
    And the Together API committed 1 batch
    And the ledger holds no requests and no batches
    When the Together batch provider answers "[[emulator:errored:invalid_request_error]] Which tide?" directly, outside the ledger
    Then a BatchRequestErrored is raised
    And the Together API committed 2 batches

  Scenario: A batch actor built from TOGETHER_API_KEY and TOGETHER_BASE_URL alone answers, and closes the client it made
    Given an emulator on a socket whose Together jobs take 0 seconds, reached through TOGETHER_BASE_URL alone
    And a Together actor "plain" built from the environment alone, in batch mode
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Together actor's own client is closed once the actor is

  Scenario: The same key asked again is answered from the ledger, at no cost and without a call
    When the actor is asked "When is high tide?" with the key "high"
    And the API's call counts are noted
    And the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the API received no calls since they were noted

  Scenario: A create whose answer is lost is found by its input file, named after the intent, never sent twice
    Given the Together API will commit the next batch but drop the connection before answering
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Together API was sent each of these requests once: high
    And the API received these calls:
      | call                    | count |
      | together.batches.create | 1     |
      | together.files.list     | 1     |
      | together.batches.list   | 1     |

  Scenario Outline: A create the API answered with a server error (<status>), and never made, is made again from the file already uploaded
    Given the Together API will fail the next "together.batches.create" call with status <status>
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Together API was sent each of these requests once: high
    And the API received these calls:
      | call                    | count |
      | together.batches.create | 2     |
      | together.files.put      | 1     |
      | together.files.delete   | 1     |
    And the Together account holds no input file any more

    Examples:
      | status |
      | 500    |
      | 503    |

  Scenario: A create refused with a rate limit (429) is sent again once the wait is over, and makes one job
    Given the Together API will fail the next "together.batches.create" call with status 429
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Together API was sent each of these requests once: high
    And the Together API committed 1 batch
    And the API received these calls:
      | call                    | count |
      | together.batches.create | 2     |
      | together.batches.list   | 0     |

  Scenario: A create the API refused fails its calls at once, and deletes the file it uploaded
    Given the Together API will fail the next "together.batches.create" call with status 400
    When the actor is asked "When is high tide?" with the key "high"
    Then an InvalidRequestError is raised
    And the Together API committed 0 batches
    And the Together account holds no input file any more

  Scenario: An upload whose answer is lost is sent again; Together answers the same bytes with the file it holds
    Given the Together API will store the next uploaded file but drop the connection before answering
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Together API was sent each of these requests once: high
    And the API received these calls:
      | call                      | count |
      | together.files.create     | 2     |
      | together.files.put        | 1     |
      | together.files.preprocess | 1     |
      | together.batches.create   | 1     |
    And the Together account holds no input file any more

  Scenario: With keep_uploads, a create the API refused leaves the file it uploaded in place
    Given a Together actor "keeper" with:
      """
      batch_processing: batch
      batch: {coalesce_window: 0.5, poll_interval: 30, keep_uploads: true}
      """
    And the Together API will fail the next "together.batches.create" call with status 400
    When the actor is asked "When is high tide?" with the key "high"
    Then an InvalidRequestError is raised
    And the Together API committed 0 batches
    And the Together account holds 1 input file

  Scenario: A request an expired batch left out of both its files is answered as expired, not as lost
    Given an emulated Together API whose batches take 100000 seconds
    And a Together actor "tides" with:
      """
      batch_processing: batch
      batch: {poll_interval: 3600, max_attempts: 1, max_wait: 200000}
      """
    And the Together API will lose the request "high" from both files of its batch
    When the actor is asked "When is high tide?" with the key "high"
    Then a BatchRequestExpired is raised

  Scenario: An intent taken over after a crash between upload and create is created from the file it uploaded
    Given the ledger holds a Together intent for the key "high" asking "When is high tide?", its input file uploaded by a program that died before creating the batch
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Together API was sent each of these requests once: high
    And the API received these calls:
      | call                    | count |
      | together.files.create   | 0     |
      | together.batches.create | 1     |
      | together.files.delete   | 1     |
    And the Together job was created from the file the dead program uploaded
    And the Together account holds no input file any more

  Scenario: An intent taken over after a crash between create and its record is found by its input file, not created again
    Given the ledger holds a Together intent for the key "high" asking "When is high tide?", its batch created by a program that died before recording it
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Together API was sent each of these requests once: high
    And the API received these calls:
      | call                    | count |
      | together.files.create   | 0     |
      | together.batches.create | 0     |
    And the Together job was created from the file the dead program uploaded

  Scenario: An intent taken over whose uploaded file is gone sends its request again, once
    Given the ledger holds a Together intent for the key "high" asking "When is high tide?", its input file uploaded by a program that died before creating the batch
    And that Together input file was deleted since
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Together API was sent each of these requests once: high
    And the API received these calls:
      | call                    | count |
      | together.files.put      | 1     |
      | together.batches.create | 1     |

  Scenario: A request Together fails alone fails alone; its neighbours are answered, each joined to its call by custom id
    When the actor is asked these prompts at once:
      | prompt                                                 | key  |
      | When is high tide?                                     | high |
      | [[emulator:errored:invalid_request_error]] Which tide? | bad  |
      | When is low tide?                                      | low  |
    Then the call for "bad" failed with a BatchRequestErrored saying "invalid_request_error"
    And the answer to "high" is the emulated reply to "When is high tide?"
    And the answer to "low" is the emulated reply to "When is low tide?"

  Scenario: A job validating, then in progress, is polled until it completes; its call waits on it meanwhile
    Given the API's batches take 600 seconds from now on
    When the actor parks "When is high tide?" with the key "high"
    Then lowtide status shows these batches:
      | state            | requests | counts       |
      | waiting-on-batch | 1        | processing 1 |
    When the actor waits for the result of "high"
    Then the answer is the emulated reply to "When is high tide?"
    And every Together batch ended "COMPLETED"

  Scenario: A job cancelled before it ran answers each request as canceled
    Given an emulated Together API whose batches take 100000 seconds
    And a Together actor "tides" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """
    When the actor parks "When is high tide?" with the key "high"
    And its Together batch is canceled
    And the actor waits for the result of "high"
    Then a BatchRequestCanceled is raised
    And every Together batch ended "CANCELLED"

  Scenario: A job Together failed as a whole fails each request with the job's own reason
    Given Together takes at most 1 request in a batch
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | When is low tide?  | low  |
    Then the call for "high" failed with a BatchRequestErrored saying "batch_failed"
    And the call for "low" failed with a BatchRequestErrored saying "at most 1"
    And every Together batch ended "FAILED"

  Scenario: A job still running after 24 hours expires; its request is sent again until it has had its attempts
    Given an emulated Together API whose batches take 100000 seconds
    And a Together actor "tides" with:
      """
      batch_processing: batch
      batch: {poll_interval: 3600, max_attempts: 2, max_wait: 200000}
      """
    When the actor is asked "When is high tide?" with the key "high"
    Then a BatchRequestExpired is raised
    And the Together API committed 2 batches
    And every Together batch ended "EXPIRED"

  Scenario: A request missing from both files is read for again, then fails alone, saying it came back nowhere
    Given a Together actor "tides" with:
      """
      batch_processing: batch
      batch: {coalesce_window: 0.5, poll_interval: 30, api_retries: 1}
      """
    And the Together API will lose the request "lost" from both files of its batch
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | Where did it go?   | lost |
    Then the call for "lost" failed with a BatchRequestError saying "ended without a result for request lost"
    And the answer to "high" is the emulated reply to "When is high tide?"

  Scenario: Parked Together calls are canceled by lowtide's cancel, and collected by its collect
    Given an emulated Together API whose batches take 600 seconds
    And a Together actor "tides" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """
    When the actor parks "When is high tide?" with the key "high"
    And lowtide cancels the Together key "high"
    And 700 more seconds pass
    And lowtide collects the ended Together batches
    Then lowtide status shows these tickets:
      | key  | state    | batch | attempts |
      | high | canceled | yes   | 1        |

  Scenario: A bulk run through Together's Batch API, with a dry run first
    When the actor plans a bulk run of 5 prompts, 2 to a batch
    Then the plan has 3 batches with a cost range above $0
    When the actor runs a bulk run of 5 prompts, 2 to a batch
    Then the run's 5 items succeeded in 3 batches
    And the Together API committed 3 batches

  Scenario: Together's providers read the together SDK's errors as Groq's are read, without loading the groq SDK
    When a fresh Python imports the together SDK and lowtide's Together batch and live providers
    Then it has imported neither the groq SDK nor the openai SDK
