Feature: An actor answered by Amazon Bedrock batch inference, exactly once
  As a developer whose agents run on Bedrock models
  I want `provider: bedrock` with `batch_processing: batch` to go through Bedrock's batch inference jobs
  So that my calls cost half, with the same ledger, keys and exactly-once create as any provider

  Every call goes through the unmodified boto3 to the emulator's AWS account on a loopback socket: the records are
  written to S3, the job is created with the intent id as its clientRequestToken, the output is read back from S3.

  Background:
    Given an emulated AWS account on a socket, whose batch inference jobs take 0 seconds
    And the account takes batch inference jobs of 1 record or more
    And a Bedrock actor "tides" with:
      """
      batch_processing: batch
      batch: {coalesce_window: 0.5, poll_interval: 30, reconcile_grace: 60}
      """

  Scenario: Concurrent calls travel in one job, read back from S3 and joined on recordId, at batch prices
    When the actor is asked these prompts at once:
      | prompt               | key  |
      | When is high tide?   | high |
      | When is low tide?    | low  |
      | Is the harbour open? | open |
    Then the answer to "high" is the emulated reply to "When is high tide?"
    And the answer to "low" is the emulated reply to "When is low tide?"
    And the answer to "open" is the emulated reply to "Is the harbour open?"
    And the answers came in batches of 3
    And every Bedrock answer was priced at batch prices, half the live equivalent
    And the Bedrock job's name and client request token carry lowtide's intent id
    And the API received these calls:
      | call                     | count |
      | bedrock.s3.put_object    | 1     |
      | bedrock.batches.create      | 1     |
      | bedrock.s3.delete_object | 1     |
    And the bucket holds no input any more, and the job's output
    And the ledger holds these requests:
      | key  | state     | model                  |
      | high | succeeded | amazon.nova-micro-v1:0 |
      | low  | succeeded | amazon.nova-micro-v1:0 |
      | open | succeeded | amazon.nova-micro-v1:0 |

  Scenario: A batch below the account's minimum of records is refused before anything is written or sent
    Given a Bedrock actor "small" with:
      """
      batch_processing: batch
      batch: {coalesce_window: 0.5}
      provider_options: {bedrock: {min_records: null}}
      """
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | When is low tide?  | low  |
    Then the call for "high" failed with a InvalidRequestError saying "takes at least 100 records"
    And the call for "low" failed with a InvalidRequestError saying "this batch holds 2. Nothing was sent"
    And the API received these calls:
      | call                  | count |
      | bedrock.s3.put_object | 0     |
      | bedrock.batches.create   | 0     |

  Scenario: An actor without its bucket is refused before anything is recorded or sent, naming the setting
    When a Bedrock batch actor without provider_options.bedrock.s3_bucket is asked "When is high tide?"
    Then a ConfigurationError naming "provider_options.bedrock.s3_bucket" is raised, saying "needs provider_options.bedrock.s3_bucket"
    And the API received no calls at all
    And the ledger holds no request

  Scenario: A job parked by a program that ended is collected by `lowtide collect`, which needs no bucket or role
    Given the API's batches take 600 seconds from now on
    When the actor parks "When is high tide?" with the key "high", in a program that then ends
    And 700 more seconds pass
    And lowtide collects the ended batches of the ledger
    Then lowtide status shows these tickets:
      | key  | state     | batch | attempts |
      | high | collected | yes   | 1        |
    When the actor waits for the result of "high"
    Then the answer is the emulated reply to "When is high tide?"

  Scenario: More requests than the account's maximum per job go in several jobs
    Given a Bedrock actor "capped" with:
      """
      batch_processing: batch
      batch: {coalesce_window: 0.5}
      provider_options: {bedrock: {max_records: 2}}
      """
    When the actor is asked these prompts at once:
      | prompt                   | key   |
      | When is high tide?       | one   |
      | When is low tide?        | two   |
      | Is the harbour open?     | three |
      | Where is the lighthouse? | four  |
      | How deep is the channel? | five  |
    Then the answers came in batches of 2, 2, 1
    And the account holds 3 batch inference jobs

  Scenario: A create whose answer is lost is made again under the same token and answered with the same job
    Given the account will create the next batch inference job but drop the connection before answering
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the account holds 1 batch inference job
    And the account created each of these records once: high
    And the API received these calls:
      | call                  | count |
      | bedrock.s3.put_object | 1     |
      | bedrock.batches.create   | 2     |

  Scenario Outline: A create refused with <status> is made again under the same token; one job, one upload
    Given the account will fail the next "bedrock.batches.create" call with status <status>
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the account holds 1 batch inference job
    And the API received these calls:
      | call                  | count |
      | bedrock.s3.put_object | 1     |
      | bedrock.batches.create   | 2     |

    Examples:
      | status |
      | 429    |
      | 500    |
      | 503    |

  Scenario: An upload whose answer is lost is written again under the same key; one job
    Given the account will store the next object but drop the connection before answering
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the account holds 1 batch inference job
    And the API received these calls:
      | call                  | count |
      | bedrock.s3.put_object | 2     |
      | bedrock.batches.create   | 1     |

  Scenario: An intent taken over after a crash between upload and create is created from the input it wrote
    Given the ledger holds a Bedrock intent for the key "high" asking "When is high tide?", its input written by a program that died before creating the job
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the job was created from the input the dead program wrote, under its intent id
    And the API received these calls:
      | call                  | count |
      | bedrock.s3.put_object | 0     |
      | bedrock.batches.create   | 1     |

  Scenario: An intent whose job was created by a program that died before recording it adopts that same job
    Given the ledger holds a Bedrock intent for the key "high" asking "When is high tide?", whose job was created by a program that died before recording it
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the account holds 1 batch inference job
    And the account created each of these records once: high
    And the job was created from the input the dead program wrote, under its intent id

  Scenario: A job whose token AWS has forgotten is found by its name when the create is made again, not made twice
    Given the ledger holds a Bedrock intent for the key "high" asking "When is high tide?", whose job was created by a program that died before recording it
    And the account has forgotten the client request tokens of its jobs
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the account holds 1 batch inference job
    And the job was created from the input the dead program wrote, under its intent id

  Scenario: An intent whose input object was deleted finds the job its create made by the job's name
    Given the ledger holds a Bedrock intent for the key "high" asking "When is high tide?", whose job was created by a program that died before recording it
    And that input object was deleted since
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the account holds 1 batch inference job
    And the API received these calls:
      | call                   | count |
      | bedrock.batches.create | 0     |
      | bedrock.s3.put_object  | 0     |

  Scenario: A record Bedrock fails alone fails its call alone; the job is PartiallyCompleted, its neighbours answered
    Given the account will fail the record of "bad" with "invalid_request_error"
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | When is low tide?  | bad  |
    Then the call for "bad" failed with a BatchRequestErrored saying "http_400"
    And the answer to "high" is the emulated reply to "When is high tide?"
    And every Bedrock batch inference job ended PartiallyCompleted

  Scenario: A job Bedrock failed as a whole fails each of its requests with the job's message
    Given the account will fail the next batch inference job it creates
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | When is low tide?  | low  |
    Then the call for "high" failed with a BatchRequestErrored saying "The service role cannot read the input."
    And the call for "low" failed with a BatchRequestErrored saying "The service role cannot read the input."
    And every Bedrock batch inference job ended Failed

  Scenario: A job stopped before it ran answers its request as canceled
    Given the API's batches take 100000 seconds from now on
    When the actor parks "When is high tide?" with the key "high"
    And its Bedrock batch inference job is stopped
    And the actor waits for the result of "high"
    Then a BatchRequestCanceled is raised
    And every Bedrock batch inference job ended Stopped

  Scenario: A job not done within its 24 hours expires; its request expires once it has had its attempts
    Given the API's batches take 200000 seconds from now on
    And a Bedrock actor "tides" with:
      """
      batch_processing: batch
      batch: {coalesce_window: 0.5, poll_interval: 3600, max_attempts: 1}
      """
    When the actor is asked "When is high tide?" with the key "high"
    Then a BatchRequestExpired is raised
    And every Bedrock batch inference job ended Expired

  Scenario: A download of the output broken off is fetched again; every answer arrives
    Given the next download of a job's output will break after 1 line
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | When is low tide?  | low  |
    Then the answer to "high" is the emulated reply to "When is high tide?"
    And the answer to "low" is the emulated reply to "When is low tide?"

  Scenario Outline: An output record lowtide cannot read (<kind>) fails its call alone, the line kept; the others are answered
    Given the account will garble the output record of "bad" as <kind>
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | When is low tide?  | bad  |
    Then the call for "bad" failed with a BatchRequestUnreadable saying "<says>"
    And the answer to "high" is the emulated reply to "When is high tide?"

    Examples:
      | kind          | says                                     |
      | bad-json      | not JSON                                 |
      | not-utf8      | not UTF-8                                |
      | unknown-shape | neither a modelOutput nor an error       |

  Scenario: An answer of a model genai-prices does not know has an unknown cost, never $0
    Given the account also serves the model "acme.tide-1-v1:0"
    And a Bedrock actor "acme" with:
      """
      model: acme.tide-1-v1:0
      """
    When the actor is asked "When is high tide?"
    Then the answer is the emulated reply to "When is high tide?"
    And the answer's cost is unknown

  Scenario Outline: Every job status is read in lowtide's words (<status>)
    When a Bedrock job of 10 records is read with the status <status>, <succeeded> succeeded and <errored> errored
    Then it is <phase> with these counts: <counts>

    Examples:
      | status             | succeeded | errored | phase     | counts                           |
      | Submitted          | 0         | 0       | running   | processing=10                    |
      | Validating         | 0         | 0       | running   | processing=10                    |
      | Scheduled          | 0         | 0       | running   | processing=10                    |
      | InProgress         | 4         | 1       | running   | processing=10                    |
      | Stopping           | 4         | 0       | canceling | processing=10                    |
      | Completed          | 10        | 0       | ended     | succeeded=10                     |
      | PartiallyCompleted | 8         | 2       | ended     | succeeded=8, errored=2           |
      | Failed             | 0         | 0       | ended     | errored=10                       |
      | Stopped            | 3         | 1       | ended     | succeeded=3, errored=1, canceled=6 |
      | Expired            | 5         | 0       | ended     | succeeded=5, expired=5           |

  Scenario: A bulk run through Bedrock batch inference, with a dry run first
    When the actor plans a bulk run of 5 prompts, 2 to a batch
    Then the plan has 3 batches with a cost range above $0
    When the actor runs a bulk run of 5 prompts, 2 to a batch
    Then the run's 5 items succeeded in 3 batches
    And the account holds 3 batch inference jobs

  Scenario: A call whose worst case is over its budget is refused before anything is written or sent
    When the actor is asked "When is high tide?" with:
      """
      max_tokens: 4000
      max_cost_usd: 0.000001
      """
    Then a BudgetExceededError is raised
    And the API received these calls:
      | call                   | count |
      | bedrock.s3.put_object  | 0     |
      | bedrock.batches.create | 0     |
      | bedrock.converse       | 0     |

  Scenario: A create Bedrock refuses fails its calls at once, and the input it wrote is deleted
    Given the account will fail the next "bedrock.batches.create" call with status 400
    When the actor is asked "When is high tide?" with the key "high"
    Then an InvalidRequestError is raised
    And the account holds 0 batch inference jobs
    And the bucket holds no input of lowtide's

  Scenario: With keep_uploads, the job's input stays in the bucket once the answers are stored
    Given a Bedrock actor "keeper" with:
      """
      batch_processing: batch
      batch: {coalesce_window: 0.5, poll_interval: 30, keep_uploads: true}
      """
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the bucket still holds the input of the job

  Scenario Outline: The job's input holds each request's Converse body as the ledger stored it, less its modelId (<read>)
    Given a Bedrock actor "keeper" with:
      """
      batch_processing: batch
      batch: {coalesce_window: 0.5, poll_interval: 30, keep_uploads: true}
      extra_params: {requestMetadata: <metadata>}
      """
    When the actor is asked these prompts at once:
      | prompt                        | key  |
      | When is high tide? ☃ é        | high |
      | Is the harbour "open"? \ tab | open |
    Then the answer to "high" is the emulated reply to "When is high tide? ☃ é"
    And the answer to "open" is the emulated reply to "Is the harbour "open"? \ tab"
    And the job's input holds each request's stored Converse body without its modelId, and the job names its model

    Examples:
      | read                                              | metadata                               |
      | orjson: most records                              | {team: harbour, shift: 0.0000001}      |
      | json: an integer beyond 64 bits, read exactly     | {ticket: 123456789012345678901234567}  |
      | json: a NaN, which orjson refuses                 | {team: harbour, tide: .nan}            |

  Scenario: An intent whose input object was deleted, and whose job was never made, is sent anew, once
    Given the ledger holds a Bedrock intent for the key "high" asking "When is high tide?", its input written by a program that died before creating the job
    And that input object was deleted since
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the account holds 1 batch inference job
    And the account created each of these records once: high
    And the API received these calls:
      | call                   | count |
      | bedrock.s3.put_object  | 1     |
      | bedrock.batches.create | 1     |

  Scenario: A parked call canceled through lowtide's Python API is stopped on Bedrock and ends canceled
    Given the API's batches take 100000 seconds from now on
    When the actor parks "When is high tide?" with the key "high", in a program that then ends
    And lowtide cancels the Bedrock key "high"
    And 700 more seconds pass
    And lowtide collects the ended batches of the ledger
    Then lowtide status shows these tickets:
      | key  | state    | batch | attempts |
      | high | canceled | yes   | 1        |
    And every Bedrock batch inference job ended Stopped

  Scenario: A record missing from a completed job's output is said to be lost, and the others are answered
    Given the account will lose the record of "low" from its job's output
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | When is low tide?  | low  |
    Then the answer to "high" is the emulated reply to "When is high tide?"
    And the call for "low" failed with a BatchRequestError saying "ended without a result for request"

  Scenario: The provider's direct batch, outside the ledger, answers a request or raises its error
    When the Bedrock batch provider answers "When is high tide?" alone, outside the ledger
    Then the answer is the emulated reply to "When is high tide?"
    And the ledger holds no request
    When the Bedrock batch provider answers "[[emulator:errored:invalid_request_error]] Which tide?" alone, outside the ledger
    Then a BatchRequestErrored is raised

  Scenario: The provider's direct batch without a bucket is refused before anything is sent
    Given a Bedrock actor "nobucket" with:
      """
      batch_processing: batch
      provider_options: {bedrock: {s3_bucket: null, role_arn: null}}
      """
    When the Bedrock batch provider answers "When is high tide?" alone, outside the ledger
    Then an InvalidRequestError is raised
    And the error message contains "needs provider_options.bedrock.s3_bucket and role_arn"
    And the API received no calls at all

  Scenario: The jobs of the last hours are listed page after page, newest first
    Given the account holds 101 batch inference jobs made by boto3
    When lowtide lists the Bedrock jobs submitted since an hour ago
    Then it listed 101 jobs, newest first
    And the API received these calls:
      | call                 | count |
      | bedrock.batches.list | 2     |


  Scenario Outline: A record's error <error> fails its call as <type>, <retried>
    When the Bedrock output record of "bad" holds the error <error>
    Then its call failed with a BatchRequestErrored of the type "<type>" saying "<says>", <retried>

    Examples:
      | error                                                      | type          | says                     | retried                  |
      | {"errorCode": 429, "errorMessage": "Too many requests."}   | http_429      | Too many requests.       | to be tried again        |
      | {"errorCode": "503", "errorMessage": "Unavailable."}       | http_503      | Unavailable.             | to be tried again        |
      | {"errorCode": 400, "errorMessage": "Malformed input."}     | http_400      | Malformed input.         | not to be tried again    |
      | {"errorCode": "ModelStreamError"}                          | ModelStreamError | Bedrock gave no message. | not to be tried again |
      | {}                                                         | error         | Bedrock gave no message. | not to be tried again    |
