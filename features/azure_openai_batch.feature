@stores
Feature: An actor answered by Azure OpenAI's global batch deployments, durably
  As a developer whose agents run on Azure OpenAI
  I want `provider: azure_openai` with `batch_processing: batch` to go through Azure's Batch API at my deployment
  So that my calls cost half, with the same ledger, keys, coalescing and exactly-once create as any provider

  Background:
    Given an emulated Azure OpenAI API
    And an Azure OpenAI actor "tides" with:
      """
      batch_processing: batch
      batch: {coalesce_window: 0.5, poll_interval: 30, reconcile_grace: 60}
      """

  Scenario: A batch's lines name the deployment at Azure's url; the served model prices them; one deployment a batch
    When the Azure batch input of these requests is encoded: high, low
    Then each line names the deployment "tide-batch" at "/chat/completions", its custom id and nothing else

  Scenario Outline: A stored request is grouped by its deployment however its JSON is read (<read>)
    Given an Azure OpenAI actor "grouped" with:
      """
      batch_processing: batch
      extra_params: <extra>
      """
    When the Azure batch input of these requests is encoded: high, low
    Then each line names the deployment "tide-batch" at "/chat/completions", its custom id and nothing else

    Examples:
      | read                                              | extra                                   |
      | orjson: most requests                             | {metadata: {team: harbour ☃}}           |
      | orjson, an integer beyond 64 bits read as a float | {seed: 123456789012345678901234567}     |
      | json: a NaN, which orjson refuses                 | {metadata: {team: harbour}, tide: .nan} |

  Scenario: Concurrent calls travel in one batch: one file uploaded, one batch created, the file deleted after
    When the actor is asked these prompts at once:
      | prompt               | key  |
      | When is high tide?   | high |
      | When is low tide?    | low  |
      | Is the harbour open? | open |
    Then every call was answered with the emulated reply to its prompt
    And the answers came in batches of 3
    And every answer was priced at Azure's batch prices for gpt-4o-mini-2024-07-18
    And the Azure OpenAI API was sent each of these requests once: high, low, open
    And the Azure batch was created for "/chat/completions" with lowtide's intent id in its metadata
    And the API received these calls:
      | call                        | count |
      | azure_openai.files.create   | 1     |
      | azure_openai.batches.create | 1     |
      | azure_openai.files.delete   | 1     |
    And the Azure resource holds no input file any more
    And the ledger holds these requests:
      | key  | state     | model       |
      | high | succeeded | tide-batch  |
      | low  | succeeded | tide-batch  |
      | open | succeeded | tide-batch  |

  Scenario: Two deployments travel in two batches
    Given an Azure OpenAI actor "other" with:
      """
      model: tide-batch-2
      batch_processing: batch
      batch: {coalesce_window: 0.5, poll_interval: 30}
      """
    When these calls are made at once:
      | prompt             | key  | actor |
      | When is high tide? | high | tides |
      | When is low tide?  | low  | other |
    Then the Azure OpenAI API committed 2 batches

  Scenario Outline: Every status of an Azure batch is mapped
    Then an Azure batch whose status is "<status>" is <phase>, its requests counted as <counts>

    Examples:
      | status      | phase     | counts                                  |
      | validating  | running   | processing 1, succeeded 2, errored 1    |
      | in_progress | running   | processing 1, succeeded 2, errored 1    |
      | finalizing  | running   | processing 1, succeeded 2, errored 1    |
      | cancelling  | canceling | processing 1, succeeded 2, errored 1    |
      | completed   | ended     | succeeded 2, errored 2                  |
      | failed      | ended     | succeeded 2, errored 2                  |
      | cancelled   | ended     | succeeded 2, errored 1, canceled 1      |
      | expired     | ended     | succeeded 2, errored 1, expired 1       |

  Scenario: A create whose answer is lost is found by its intent id in the metadata, never sent twice
    Given the Azure OpenAI API will commit the next batch but drop the connection before answering
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Azure OpenAI API was sent each of these requests once: high
    And the API received these calls:
      | call                        | count |
      | azure_openai.files.create   | 1     |
      | azure_openai.batches.create | 1     |

  Scenario Outline: A create the API answered with <status>, and never made, is made again from the file already uploaded
    Given the Azure OpenAI API will fail the next "azure_openai.batches.create" call with status <status>
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Azure OpenAI API was sent each of these requests once: high
    And the API received these calls:
      | call                        | count |
      | azure_openai.files.create   | 1     |
      | azure_openai.batches.create | 2     |
    And the Azure resource holds no input file any more

    Examples:
      | status |
      | 500    |
      | 503    |
      | 429    |

  Scenario: A create the API refused fails its calls at once, and deletes the file it uploaded
    Given the Azure OpenAI API will fail the next "azure_openai.batches.create" call with status 400
    When the actor is asked "When is high tide?" with the key "high"
    Then an InvalidRequestError is raised
    And the Azure OpenAI API committed 0 batches
    And the Azure resource holds no input file any more

  Scenario: An intent taken over after a crash between upload and create is created from the file it uploaded
    Given the ledger holds an Azure intent for the key "high" asking "When is high tide?", its input file uploaded by a program that died before creating the batch
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the Azure OpenAI API was sent each of these requests once: high
    And the Azure batch was created from the file the dead program uploaded, under its intent id
    And the Azure resource holds no input file any more

  Scenario: A download of the output file cut short is read again from the start; every answer stored once
    Given the next download of an Azure batch's file will break after 1 line
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | When is low tide?  | low  |
    Then every call was answered with the emulated reply to its prompt
    And the API received these calls:
      | call                       | count |
      | azure_openai.files.content | 2     |

  Scenario: A resource holding as many files as Azure allows refuses the batch before anything is uploaded
    Given the Azure OpenAI resource holds as many files as it may
    When the actor is asked "When is high tide?" with the key "high"
    Then an InvalidRequestError is raised
    And the API received these calls:
      | call                      | count |
      | azure_openai.files.list   | 1     |
      | azure_openai.files.create | 0     |

  Scenario: A batch naming a deployment the resource lacks fails as a whole; each request says why
    Given the deployment "tide-batch" is not in the Azure resource
    When the actor is asked "When is high tide?" with the key "high"
    Then a BatchRequestErrored is raised
    And every Azure batch ended "failed"

  Scenario: A batch canceled before it ran answers each request as canceled
    Given an emulated Azure OpenAI API whose batches take 100000 seconds
    And an Azure OpenAI actor "tides" with:
      """
      batch_processing: batch
      batch: {coalesce_window: 0.5, poll_interval: 30}
      """
    When the actor parks "When is high tide?" with the key "high"
    And its Azure batch is canceled
    And the actor waits for the result of "high"
    Then a BatchRequestCanceled is raised

  Scenario: A job running past 24 hours is polled on (Azure does not expire it) and answered
    Given an emulated Azure OpenAI API whose batches take 108000 seconds
    And an Azure OpenAI actor "tides" with:
      """
      batch_processing: batch
      batch: {poll_interval: 3600}
      """
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And every Azure batch ended "completed"

  Scenario: A job Azure says expired keeps what it finished; its other requests go again in a later batch
    Given an emulated Azure OpenAI API whose batches take 100000 seconds
    And the Azure resource expires batches still running after 24 hours
    And an Azure OpenAI actor "tides" with:
      """
      batch_processing: batch
      batch: {poll_interval: 3600, max_attempts: 2, max_wait: 200000}
      """
    When the actor is asked "When is high tide?" with the key "high"
    Then a BatchRequestExpired is raised
    And the Azure OpenAI API committed 2 batches
    And every Azure batch ended "expired"

  Scenario: An actor's own max_wait still bounds the wait
    Given an emulated Azure OpenAI API whose batches take 108000 seconds
    And an Azure OpenAI actor "tides" with:
      """
      batch_processing: batch
      batch: {poll_interval: 3600, max_wait: 7200}
      """
    When the actor is asked "When is high tide?" with the key "high"
    Then a BatchTimeoutError is raised
    And every Azure batch ended "cancelled"

  Scenario: A bulk run through Azure's Batch API, with a dry run first, priced at Azure's rates
    When the Azure actor plans a bulk run of 5 prompts, 2 to a batch
    Then the plan of the Azure run has 3 batches with a cost range above $0
    When the Azure actor runs a bulk run of 5 prompts, 2 to a batch
    Then the Azure run's 5 items succeeded in 3 batches
    And the Azure OpenAI API committed 3 batches

  Scenario: Bad input is refused before anything is sent
    When an Azure OpenAI actor "wrong" is configured with:
      """
      batch_processing: batch
      provider_options: {azure_openai: {endpoint: responses}}
      """
    Then a ConfigurationError is raised
    And the error names the field "provider_options.azure_openai.endpoint"
    And the API received no calls at all

  Scenario: The README's deployment, given to `lowtide emulator` by a variable, answers a batch actor as written there
    Given `lowtide emulator` runs with LOWTIDE_EMULATOR_AZURE_DEPLOYMENTS="reviews-global-batch=gpt-4o-mini", named by AZURE_OPENAI_ENDPOINT
    And an Azure OpenAI actor "azure-reviewer" that builds its own client from those variables, with:
      """
      model: reviews-global-batch
      batch_processing: batch
      provider_options:
        azure_openai: {model: gpt-4o-mini, api_version: "2024-10-21"}
      """
    When the actor is asked "Review this pull request"
    Then the answer is the emulated reply to "Review this pull request"

  Scenario Outline: `lowtide emulator` refuses a deployment it cannot serve, before it listens
    When "lowtide emulator --port 0 --azure-deployment <given>" runs without a ledger
    Then on stderr, the last line is "<says>"
    And the command exits with 2

    Examples:
      | given               | says                                                                                                                     |
      | tides=gpt-4o-mni    | lowtide: Azure deployment tides=gpt-4o-mni: the emulator serves no model 'gpt-4o-mni'. Did you mean 'gpt-4o-mini', 'gpt-5.4-mini', 'gpt-4.1-mini'? |
      | tides               | lowtide: Invalid value for '--azure-deployment': expected NAME=MODEL, not 'tides' (see 'lowtide emulator --help')       |
