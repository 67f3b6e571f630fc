@stores
Feature: An actor answered by OpenAI's Batch API, durably
  As a developer whose agents run on OpenAI models
  I want `provider: openai` with `batch_processing: batch` to go through OpenAI's Batch API
  So that my calls cost half, with the same ledger, keys, coalescing and exactly-once create as any provider

  Background:
    Given an emulated OpenAI API
    And an OpenAI actor "tides" with:
      """
      batch_processing: batch
      batch: {coalesce_window: 0.5, poll_interval: 30, reconcile_grace: 60}
      """

  Scenario Outline: Concurrent calls travel in one batch: one file uploaded, one batch created, the file deleted after
    Given an OpenAI actor "tides" with:
      """
      batch_processing: batch
      provider_options: {openai: {endpoint: <endpoint>}}
      batch: {coalesce_window: 0.5, poll_interval: 30}
      """
    When the actor is asked these prompts at once:
      | prompt                 | key   |
      | When is high tide?     | high  |
      | When is low tide?      | low   |
      | Is the harbour open?   | open  |
    Then every call was answered with the emulated reply to its prompt
    And the answers came in batches of 3
    And every answer was priced at batch prices, half the live equivalent
    And the OpenAI API was sent each of these requests once: high, low, open
    And the OpenAI batch was created for "<url>" with lowtide's intent id in its metadata
    And the API received these calls:
      | call                   | count |
      | openai.files.create    | 1     |
      | openai.batches.create  | 1     |
      | openai.files.delete    | 1     |
    And the OpenAI account holds no input file any more
    And the ledger holds these requests:
      | key  | state     | model        |
      | high | succeeded | gpt-5.4-mini |
      | low  | succeeded | gpt-5.4-mini |
      | open | succeeded | gpt-5.4-mini |

    Examples:
      | endpoint         | url                  |
      | responses        | /v1/responses        |
      | chat_completions | /v1/chat/completions |

  Scenario: A batch takes one model: calls to two models at once travel in two batches
    Given an OpenAI actor "nano" with:
      """
      model: gpt-5.4-nano
      batch_processing: batch
      batch: {coalesce_window: 0.5, poll_interval: 30}
      """
    When these calls are made at once:
      | prompt             | key  | actor |
      | When is high tide? | high | tides |
      | When is low tide?  | low  | nano  |
      | Is it windy?       | wind | nano  |
    Then every call was answered with the emulated reply to its prompt
    And the answers came in batches of 2, 1
    And every OpenAI batch holds requests for one model

  Scenario: The same key asked again is answered from the ledger, at no cost and without a call
    When the actor is asked "When is high tide?" with the key "high"
    And the API's call counts are noted
    And the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the API received no calls since they were noted

  Scenario: A create whose answer is lost is found by its intent id, never sent twice
    Given the OpenAI API will commit the next batch but drop the connection before answering
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the OpenAI API was sent each of these requests once: high
    And the API received these calls:
      | call                  | count |
      | openai.batches.create | 1     |
      | openai.batches.list   | 1     |

  Scenario: A create the API answered with a server error, and never made, is made again from the file already uploaded
    Given the OpenAI API will fail the next "openai.batches.create" call with status 500
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the OpenAI API was sent each of these requests once: high
    And the API received these calls:
      | call                  | count |
      | openai.batches.create | 2     |
      | openai.files.create   | 1     |
      | openai.files.delete   | 1     |
    And the OpenAI account holds no input file any more

  Scenario: A create the API refused fails its calls at once, and deletes the file it uploaded
    Given the OpenAI API will fail the next "openai.batches.create" call with status 400
    When the actor is asked "When is high tide?" with the key "high"
    Then an InvalidRequestError is raised
    And the OpenAI API committed 0 batches
    And the OpenAI account holds no input file any more

  Scenario: An intent taken over after a crash between upload and create is created from the file it uploaded
    Given the ledger holds an OpenAI intent for the key "high" asking "When is high tide?", its input file uploaded by a program that died before creating the batch
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the OpenAI API was sent each of these requests once: high
    And the API received these calls:
      | call                  | count |
      | openai.files.create   | 0     |
      | openai.batches.create | 1     |
      | openai.files.delete   | 1     |
    And the OpenAI batch was created from the file the dead program uploaded, under its intent id
    And the OpenAI account holds no input file any more

  Scenario: An intent taken over whose uploaded file is gone sends its request again, once
    Given the ledger holds an OpenAI intent for the key "high" asking "When is high tide?", its input file uploaded by a program that died before creating the batch
    And that input file was deleted since
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the OpenAI API was sent each of these requests once: high
    And the API received these calls:
      | call                  | count |
      | openai.files.create   | 1     |
      | openai.batches.create | 1     |
    And the OpenAI account holds no input file any more

  Scenario: A request OpenAI fails alone fails alone; its neighbours are answered
    When the actor is asked these prompts at once:
      | prompt                                                      | key   |
      | When is high tide?                                          | high  |
      | [[emulator:errored:invalid_request_error]] Which tide?      | bad   |
    Then the call for "bad" failed with a BatchRequestErrored saying "invalid_request_error"
    And the answer to "high" is the emulated reply to "When is high tide?"

  Scenario: A batch canceled before it ran answers each request as canceled
    Given an emulated OpenAI API whose batches take 100000 seconds
    And an OpenAI actor "tides" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """
    When the actor parks "When is high tide?" with the key "high"
    And its OpenAI batch is canceled
    And the actor waits for the result of "high"
    Then a BatchRequestCanceled is raised

  Scenario: A batch OpenAI failed as a whole fails each request with the batch's own reason
    Given OpenAI takes at most 1 request in a batch
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | When is low tide?  | low  |
    Then the call for "high" failed with a BatchRequestErrored saying "too_many_tasks"
    And the call for "low" failed with a BatchRequestErrored saying "too_many_tasks"

  Scenario: A structured answer is parsed from a batch answer
    When the OpenAI actor is asked "Record today's high tide" for a TideRecord
    Then the answer parsed into a TideRecord with a string port and a number height_m

  Scenario: Parked, then collected by a later program
    When a program parks "When is high tide?" with the key "high" and ends
    And 600 more seconds pass
    And a later program waits for the result of "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the OpenAI API was sent each of these requests once: high

  Scenario: A bulk run through OpenAI's Batch API, with a dry run first
    When the actor plans a bulk run of 5 prompts, 2 to a batch
    Then the plan has 3 batches with a cost range above $0
    When the actor runs a bulk run of 5 prompts, 2 to a batch
    Then the run's 5 items succeeded in 3 batches
    And the OpenAI API committed 3 batches

  Scenario: The call's direct batch, outside the ledger, answers each request in order
    When the OpenAI batch provider answers "When is high tide?" and "When is low tide?" in one batch
    Then the outcomes are the emulated replies to "When is high tide?" and "When is low tide?", in order
    And the ledger holds no request

  Scenario: With keep_uploads, the input file stays once the answers are stored
    Given an OpenAI actor "tides" with:
      """
      batch_processing: batch
      batch: {coalesce_window: 0.5, poll_interval: 30, keep_uploads: true}
      """
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the API received these calls:
      | call                | count |
      | openai.files.create | 1     |
      | openai.files.delete | 0     |
    And the OpenAI account still holds the input file of the batch

  Scenario: A batch whose every request failed completes with an error file alone; each request fails with its error
    When the actor is asked these prompts at once:
      | prompt                                                 | key  |
      | [[emulator:errored:invalid_request_error]] Which tide? | bad  |
      | [[emulator:errored:invalid_request_error]] Which port? | worse |
    Then the call for "bad" failed with a BatchRequestErrored saying "invalid_request_error"
    And the call for "worse" failed with a BatchRequestErrored saying "invalid_request_error"
    And the OpenAI batch has an error file and no output file

  Scenario: A batch that expires sends its requests again in a later batch, until they have had their attempts
    Given an emulated OpenAI API whose batches take 100000 seconds
    And an OpenAI actor "tides" with:
      """
      batch_processing: batch
      batch: {poll_interval: 3600, max_attempts: 2, max_wait: 200000}
      """
    When the actor is asked "When is high tide?" with the key "high"
    Then a BatchRequestExpired is raised
    And the OpenAI API committed 2 batches
    And every OpenAI batch ended "expired"

  Scenario: Parked OpenAI calls are collected, or canceled, by lowtide's collect and cancel
    Given an emulated OpenAI API whose batches take 600 seconds
    And an OpenAI actor "tides" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """
    When a program parks "When is high tide?" with the key "high" and ends
    And a program parks "When is low tide?" with the key "low" and ends
    And lowtide cancels the OpenAI key "low"
    And 700 more seconds pass
    And lowtide collects the ended OpenAI batches
    Then lowtide status shows these tickets:
      | key  | state     | batch | attempts |
      | high | collected | yes   | 1        |
      | low  | canceled  | yes   | 1        |

  Scenario: A request missing from both files is read for again, then fails alone, saying it came back nowhere
    Given an OpenAI actor "tides" with:
      """
      batch_processing: batch
      batch: {coalesce_window: 0.5, poll_interval: 30, api_retries: 1}
      """
    And the OpenAI API will lose the request "lost" from both files of its batch
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | Where did it go?   | lost |
    Then the call for "lost" failed with a BatchRequestError saying "ended without a result for request lost"
    And the answer to "high" is the emulated reply to "When is high tide?"
    And the API received these calls:
      | call                 | count |
      | openai.files.content | 2     |
