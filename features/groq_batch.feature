Feature: An actor answered by Groq's Batch API, durably
  As a developer whose agents run on models served by Groq
  I want `provider: groq` with `batch_processing: batch` to go through Groq's Batch API
  So that my calls cost half, with the same ledger, keys, coalescing and exactly-once create as any provider

  Every call below goes through the unmodified groq SDK to the emulator's Groq API (`/openai/v1/...`), in process.

  Background:
    Given an emulated Groq API
    And a Groq actor "tides" with:
      """
      batch_processing: batch
      batch: {coalesce_window: 0.5, poll_interval: 30, reconcile_grace: 60}
      provider_options: {groq: {completion_window: 3d}}
      """

  Scenario: Concurrent calls travel in one batch: one file uploaded, one batch created within the actor's window, the file deleted after
    When the actor is asked these prompts at once:
      | prompt               | key  |
      | When is high tide?   | high |
      | When is low tide?    | low  |
      | Is the harbour open? | open |
    Then every call was answered with the emulated reply to its prompt
    And the answers came in batches of 3
    And every Groq answer was priced at Groq's batch prices, half the live equivalent
    And the Groq API was sent each of these requests once: high, low, open
    And the Groq batch was created with lowtide's intent id in its metadata, within "3d"
    And the API received these calls:
      | call                | count |
      | groq.files.create   | 1     |
      | groq.batches.create | 1     |
      | groq.files.delete   | 1     |
    And the Groq account holds no input file any more
    And the ledger holds these requests:
      | key  | state     | model                |
      | high | succeeded | llama-3.1-8b-instant |
      | low  | succeeded | llama-3.1-8b-instant |
      | open | succeeded | llama-3.1-8b-instant |

  Scenario Outline: A setting Groq would refuse (<what>) is refused as the actor loads, before anything is sent
    When a Groq actor "bad" is set up with:
      """
      batch_processing: batch
      <setting>
      """
    Then a ConfigurationError is raised
    And the error message contains "<says>"
    And the API received no calls at all

    Examples:
      | what                      | setting                                          | says                                        |
      | a window past 7 days      | provider_options: {groq: {completion_window: 8d}} | Groq takes a completion window from 24h to 7d |
      | a window under 24 hours   | provider_options: {groq: {completion_window: 12h}} | Groq takes a completion window from 24h to 7d |
      | a window in other words   | provider_options: {groq: {completion_window: a week}} | written as hours (36h) or days (3d)     |
      | top_k                     | top_k: 5                                         | Groq has no top_k                            |
      | a temperature out of range | temperature: 3                                   | outside the range Groq takes                |

  Scenario: A misspelt model is refused before the call is recorded or anything is sent, naming the closest Groq lists
    Given a Groq actor "typo" with:
      """
      batch_processing: batch
      model: llama-3.3-70b-versatle
      """
    When the actor is asked "When is high tide?" with the key "high"
    Then a ConfigurationError is raised
    And the error message contains "has no model 'llama-3.3-70b-versatle'. Did you mean 'llama-3.3-70b-versatile'"
    And the ledger holds no requests and no batches
    And the API received these calls:
      | call                     | count |
      | groq.models.retrieve     | 1     |
      | groq.files.create        | 0     |
      | groq.batches.create      | 0     |

  Scenario Outline: An image sent to a Groq model that takes text only is refused before anything is sent (<mode>)
    Given a Groq actor "viewer" with:
      """
      batch_processing: <mode>
      model: llama-3.1-8b-instant
      """
    When the actor is asked with:
      """
      messages:
        - role: user
          content:
            - {type: text, text: "What does this chart say?"}
            - {type: image, source: {type: url, url: "https://example.com/tides.png"}}
      """
    Then a ConfigurationError is raised
    And the error names the field "messages[0].content[1]"
    And the error message contains "Groq's model 'llama-3.1-8b-instant' takes text only; it cannot read an image (send it to one that does, such as 'meta-llama/llama-4-scout-17b-16e-instruct')"
    And the ledger holds no requests and no batches
    And the API received these calls:
      | call                         | count |
      | groq.files.create            | 0     |
      | groq.batches.create          | 0     |
      | groq.chat.completions.create | 0     |

    Examples:
      | mode  |
      | batch |
      | live  |

  Scenario: A call whose worst case is over its budget is refused before anything is sent
    Given a Groq actor "tides" with:
      """
      batch_processing: batch
      max_tokens: 4000
      """
    When the actor is asked "When is high tide?" with:
      """
      max_cost_usd: 0.000001
      """
    Then a BudgetExceededError is raised
    And the Groq API committed 0 batches
    And the API received these calls:
      | call                     | count |
      | groq.files.create     | 0     |

  Scenario: With keep_uploads, the input file stays once the answers are stored
    Given a Groq actor "tides" with:
      """
      batch_processing: batch
      batch: {coalesce_window: 0.5, poll_interval: 30, keep_uploads: true}
      """
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | When is low tide?  | low  |
    Then every call was answered with the emulated reply to its prompt
    And the Groq account still holds the batch's input file

  Scenario: Called directly, the Groq batch provider answers one request in a batch of its own, outside the ledger
    When the Groq batch provider answers "When is high tide?" directly, outside the ledger
    Then the answer is the emulated reply to "When is high tide?"
    And the Groq API committed 1 batch
    And the ledger holds no requests and no batches
    When the Groq batch provider answers "[[emulator:errored:invalid_request_error]] Which tide?" directly, outside the ledger
    Then a BatchRequestErrored is raised
    And the Groq API committed 2 batches

  Scenario: A batch actor built from GROQ_API_KEY and GROQ_BASE_URL alone answers, and closes the client it made
    Given an emulator on a socket whose Groq batches take 0 seconds, reached through GROQ_BASE_URL alone
    And a Groq actor "plain" built from the environment alone, in batch mode
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Groq actor's own client is closed once the actor is

  Scenario: The same key asked again is answered from the ledger, at no cost and without a call
    When the actor is asked "When is high tide?" with the key "high"
    And the API's call counts are noted
    And the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the API received no calls since they were noted

  Scenario: A create whose answer is lost is found by the intent id in the batch's metadata, never sent twice
    Given the Groq API will commit the next batch but drop the connection before answering
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Groq API was sent each of these requests once: high
    And the API received these calls:
      | call                | count |
      | groq.batches.create | 1     |
      | groq.batches.list   | 1     |

  Scenario Outline: A create the API answered with a server error (<status>), and never made, is made again from the file already uploaded
    Given the Groq API will fail the next "groq.batches.create" call with status <status>
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Groq API was sent each of these requests once: high
    And the API received these calls:
      | call                | count |
      | groq.batches.create | 2     |
      | groq.files.create   | 1     |
      | groq.files.delete   | 1     |
    And the Groq account holds no input file any more

    Examples:
      | status |
      | 500    |
      | 503    |

  Scenario: A create refused with a rate limit (429) is sent again once the wait is over, and makes one batch
    Given the Groq API will fail the next "groq.batches.create" call with status 429
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Groq API was sent each of these requests once: high
    And the Groq API committed 1 batch
    And the API received these calls:
      | call                | count |
      | groq.batches.create | 2     |
      | groq.batches.list   | 0     |

  Scenario: A create the API refused fails its calls at once, and deletes the file it uploaded
    Given the Groq API will fail the next "groq.batches.create" call with status 400
    When the actor is asked "When is high tide?" with the key "high"
    Then an InvalidRequestError is raised
    And the Groq API committed 0 batches
    And the Groq account holds no input file any more

  Scenario: With keep_uploads, a create the API refused leaves the file it uploaded in place
    Given a Groq actor "keeper" with:
      """
      batch_processing: batch
      batch: {coalesce_window: 0.5, poll_interval: 30, keep_uploads: true}
      """
    And the Groq API will fail the next "groq.batches.create" call with status 400
    When the actor is asked "When is high tide?" with the key "high"
    Then an InvalidRequestError is raised
    And the Groq API committed 0 batches
    And the Groq account holds 1 input file

  Scenario: A request an expired batch left out of both its files is answered as expired, not as lost
    Given an emulated Groq API whose batches take 100000 seconds
    And a Groq actor "tides" with:
      """
      batch_processing: batch
      batch: {poll_interval: 3600, max_attempts: 1, max_wait: 200000}
      """
    And the Groq API will lose the request "high" from both files of its batch
    When the actor is asked "When is high tide?" with the key "high"
    Then a BatchRequestExpired is raised

  Scenario: An intent taken over after a crash between upload and create is created from the file it uploaded
    Given the ledger holds a Groq intent for the key "high" asking "When is high tide?", its input file uploaded by a program that died before creating the batch
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Groq API was sent each of these requests once: high
    And the API received these calls:
      | call                | count |
      | groq.files.create   | 0     |
      | groq.batches.create | 1     |
      | groq.files.delete   | 1     |
    And the Groq batch was created from the file the dead program uploaded, under its intent id
    And the Groq account holds no input file any more

  Scenario: An intent taken over after a crash between create and its record is found by its intent id, not created again
    Given the ledger holds a Groq intent for the key "high" asking "When is high tide?", its batch created by a program that died before recording it
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Groq API was sent each of these requests once: high
    And the API received these calls:
      | call                | count |
      | groq.files.create   | 0     |
      | groq.batches.create | 0     |
    And the Groq batch was created from the file the dead program uploaded, under its intent id

  Scenario: An intent taken over whose uploaded file is gone sends its request again, once
    Given the ledger holds a Groq intent for the key "high" asking "When is high tide?", its input file uploaded by a program that died before creating the batch
    And that Groq input file was deleted since
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Groq API was sent each of these requests once: high
    And the API received these calls:
      | call                | count |
      | groq.files.create   | 1     |
      | groq.batches.create | 1     |

  Scenario: A request Groq fails alone fails alone; its neighbours are answered, each joined to its call by custom id
    When the actor is asked these prompts at once:
      | prompt                                                 | key  |
      | When is high tide?                                     | high |
      | [[emulator:errored:invalid_request_error]] Which tide? | bad  |
      | When is low tide?                                      | low  |
    Then the call for "bad" failed with a BatchRequestErrored saying "invalid_request_error"
    And the answer to "high" is the emulated reply to "When is high tide?"
    And the answer to "low" is the emulated reply to "When is low tide?"

  Scenario: A batch pending, then in progress, is polled until it completes; its call waits on it meanwhile
    Given the API's batches take 600 seconds from now on
    When the actor parks "When is high tide?" with the key "high"
    Then lowtide status shows these batches:
      | state            | requests | counts       |
      | waiting-on-batch | 1        | processing 1 |
    When the actor waits for the result of "high"
    Then the answer is the emulated reply to "When is high tide?"
    And every Groq batch ended "completed"

  Scenario: A batch canceled before it ran answers each request as canceled
    Given an emulated Groq API whose batches take 100000 seconds
    And a Groq actor "tides" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """
    When the actor parks "When is high tide?" with the key "high"
    And its Groq batch is canceled
    And the actor waits for the result of "high"
    Then a BatchRequestCanceled is raised
    And every Groq batch ended "cancelled"

  Scenario: A batch Groq failed as a whole fails each request with the batch's own reason
    Given Groq takes at most 1 request in a batch
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | When is low tide?  | low  |
    Then the call for "high" failed with a BatchRequestErrored saying "too_many_tasks"
    And the call for "low" failed with a BatchRequestErrored saying "too_many_tasks"
    And every Groq batch ended "failed"

  Scenario: A batch that outlives its 24-hour window expires; its request is sent again until it has had its attempts
    Given an emulated Groq API whose batches take 100000 seconds
    And a Groq actor "tides" with:
      """
      batch_processing: batch
      batch: {poll_interval: 3600, max_attempts: 2, max_wait: 200000}
      provider_options: {groq: {completion_window: 24h}}
      """
    When the actor is asked "When is high tide?" with the key "high"
    Then a BatchRequestExpired is raised
    And the Groq API committed 2 batches
    And every Groq batch ended "expired"

  Scenario: A batch slower than a day completes within the actor's 3-day window, not expired
    Given an emulated Groq API whose batches take 100000 seconds
    And a Groq actor "tides" with:
      """
      batch_processing: batch
      batch: {poll_interval: 3600, max_wait: 200000}
      provider_options: {groq: {completion_window: 3d}}
      """
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And every Groq batch ended "completed"

  Scenario: A request missing from both files is read for again, then fails alone, saying it came back nowhere
    Given a Groq actor "tides" with:
      """
      batch_processing: batch
      batch: {coalesce_window: 0.5, poll_interval: 30, api_retries: 1}
      """
    And the Groq API will lose the request "lost" from both files of its batch
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | Where did it go?   | lost |
    Then the call for "lost" failed with a BatchRequestError saying "ended without a result for request lost"
    And the answer to "high" is the emulated reply to "When is high tide?"

  Scenario: Parked Groq calls are collected, or canceled, by lowtide's collect and cancel
    Given an emulated Groq API whose batches take 600 seconds
    And a Groq actor "tides" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """
    When the actor parks "When is high tide?" with the key "high"
    And lowtide cancels the Groq key "high"
    And 700 more seconds pass
    And lowtide collects the ended Groq batches
    Then lowtide status shows these tickets:
      | key  | state    | batch | attempts |
      | high | canceled | yes   | 1        |

  Scenario: A bulk run through Groq's Batch API, with a dry run first
    When the actor plans a bulk run of 5 prompts, 2 to a batch
    Then the plan has 3 batches with a cost range above $0
    When the actor runs a bulk run of 5 prompts, 2 to a batch
    Then the run's 5 items succeeded in 3 batches
    And the Groq API committed 3 batches
