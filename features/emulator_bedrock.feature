Feature: The emulator's AWS account, as boto3 sees it over a socket
  As a developer testing code that calls Bedrock through boto3
  I want the emulator to serve S3, Bedrock's batch inference jobs and Converse on its one port
  So that a program setting only AWS_ENDPOINT_URL (and any credentials) runs against it unchanged

  Background:
    Given an emulated AWS account on a socket, whose batch inference jobs take 100 seconds
    And the account takes batch inference jobs of 3 records or more

  Scenario: boto3 writes, lists, reads and deletes S3 objects, path-style
    When boto3 writes, lists, reads and deletes an object of the bucket
    Then boto3 saw the object as written, then gone

  Scenario: A job goes through its statuses on the account's clock and writes its output to S3
    Given the bucket holds 4 Converse records under in/records.jsonl
    When boto3 creates a job named "tides" with the token "token-1"
    Then boto3 reads the job as Submitted, 0 of 4 records processed
    When 6 seconds pass on the account's clock
    Then boto3 reads the job as Validating, 0 of 4 records processed
    When 5 seconds pass on the account's clock
    Then boto3 reads the job as Scheduled, 0 of 4 records processed
    When 49 seconds pass on the account's clock
    Then boto3 reads the job as InProgress, 2 of 4 records processed
    When 40 seconds pass on the account's clock
    Then boto3 reads the job as Completed, 4 of 4 records processed
    And the job's output holds 4 records joined on recordId, and its manifest counts them

  Scenario: A stopped job is Stopping, then Stopped
    Given the bucket holds 4 Converse records under in/records.jsonl
    When boto3 creates a job named "tides" with the token "token-1"
    And boto3 stops the job
    Then boto3 reads the job as Stopped, 0 of 4 records processed

  Scenario: The same client request token with the same parameters is answered with the same job
    Given the bucket holds 4 Converse records under in/records.jsonl
    When boto3 creates a job named "tides" with the token "token-1"
    And boto3 creates a job named "tides" with the token "token-1"
    Then both creates were answered with the same job, and the account holds one

  Scenario: The same client request token with other parameters is refused as a conflict
    Given the bucket holds 4 Converse records under in/records.jsonl
    When boto3 creates a job named "tides" with the token "token-1"
    And boto3 creates a job named "tides" with the token "token-1" for the model "amazon.nova-lite-v1:0"
    Then boto3 was refused with ConflictException

  Scenario: A job of fewer records than the account's minimum fails in its validation
    Given the bucket holds 2 Converse records under in/records.jsonl
    When boto3 creates a job named "tides" with the token "token-1"
    And 100 seconds pass on the account's clock
    Then boto3 reads the job as Failed, 0 of 2 records processed

  Scenario: A call with no credentials is refused, in each service's shape
    Then a call with no credentials is refused by each service

  Scenario: boto3's Converse is answered by the emulated model
    When boto3 asks Converse "When is high tide?"
    Then Converse answered with the emulated reply to "When is high tide?" and its usage

  Scenario Outline: Converse refuses <what> with a ValidationException, as AWS does
    When boto3 calls bedrock-runtime's converse with:
      """
      {"modelId": "amazon.nova-micro-v1:0", "messages": <messages>, "inferenceConfig": {"maxTokens": <max_tokens>}}
      """
    Then boto3 was refused with ValidationException saying "<says>"

    Examples:
      | what                            | messages                                                                         | max_tokens | says                                                   |
      | a conversation of no message    | []                                                                               | 64         | Member must have length greater than or equal to 1     |
      | a message of no known role      | [{"role": "system", "content": [{"text": "Hi"}]}]                                | 64         | messages.0.role: must be user or assistant.            |
      | a conversation the model starts | [{"role": "assistant", "content": [{"text": "Hi"}]}]                             | 64         | A conversation must start with a user message.         |
      | a block of no type it knows     | [{"role": "user", "content": [{"video": {"format": "mp4"}}]}]                    | 64         | messages.0.content.0: a content block of a type        |
      | a maxTokens of 0                | [{"role": "user", "content": [{"text": "Hi"}]}]                                  | 0          | inferenceConfig.maxTokens: must be an integer of 1     |
      | an image to a text-only model   | [{"role": "user", "content": [{"image": {"format": "png", "source": {"bytes": "aGVsbG8="}}}]}] | 64 | This model doesn't support the image content block |

  Scenario Outline: The account's catalogue gives each model's inputModalities as Bedrock lists them: <model>
    When boto3 calls bedrock's get_foundation_model with:
      """
      {"modelIdentifier": "<model>"}
      """
    Then the model's inputModalities are <modalities>

    Examples:
      | model                                    | modalities        |
      | amazon.nova-micro-v1:0                   | TEXT              |
      | amazon.nova-lite-v1:0                    | TEXT, IMAGE, VIDEO |
      | anthropic.claude-haiku-4-5-20251001-v1:0 | TEXT, IMAGE       |

  Scenario: A prompt marked to fail is refused by Converse with that error's name and status
    When boto3 calls bedrock-runtime's converse with:
      """
      {"modelId": "amazon.nova-micro-v1:0", "messages": [{"role": "user", "content": [{"text": "[[emulator:errored:overloaded_error]] Hi"}]}]}
      """
    Then boto3 was refused with ServiceUnavailableException saying "Emulated"

  Scenario Outline: A job the account cannot make is refused at its create: <what>
    Given the bucket holds 4 Converse records under in/records.jsonl
    When boto3 calls bedrock's create_model_invocation_job with:
      """
      {"jobName": "tides", "roleArn": "arn:aws:iam::123456789012:role/batch", "modelId": "amazon.nova-micro-v1:0",
       "inputDataConfig": {"s3InputDataConfig": {"s3Uri": "s3://lowtide-batch/in/records.jsonl"}},
       "outputDataConfig": {"s3OutputDataConfig": {"s3Uri": "s3://lowtide-batch/out/"}}, <change>}
      """
    Then boto3 was refused with <code> saying "<says>"

    Examples:
      | what                      | change                                                                                | code                | says                                              |
      | no name                   | "jobName": ""                                                                         | ValidationException | Value null at 'jobName'                           |
      | a role that is no role    | "roleArn": "tides-role"                                                               | ValidationException | The role ARN 'tides-role' is not valid.           |
      | a model it does not serve | "modelId": "acme.tide-1-v1:0"                                                         | ValidationException | is invalid or does not support batch inference    |
      | an input that is no S3 URI | "inputDataConfig": {"s3InputDataConfig": {"s3Uri": "https://example.com/in.jsonl"}}  | ValidationException | inputDataConfig.s3Uri: 'https://example.com/in.jsonl' is not an S3 URI |
      | a timeout under 24 hours  | "timeoutDurationInHours": 12                                                          | ValidationException | timeoutDurationInHours must be between 24 and 168 |

  Scenario: A second job of the same name is refused as a conflict
    Given the bucket holds 4 Converse records under in/records.jsonl
    When boto3 creates a job named "tides" with the token "token-1"
    And boto3 creates a job named "tides" with the token "token-2" for the model "amazon.nova-micro-v1:0"
    Then boto3 was refused with ConflictException

  Scenario Outline: A job whose input <what> fails in its validation, saying so
    Given the account takes batch inference jobs of 1 record or more
    And the bucket holds these lines under in/records.jsonl:
      """
      <lines>
      """
    When boto3 creates a job named "tides" with the token "token-1"
    And 100 seconds pass on the account's clock
    Then boto3 reads the job as Failed, with the message "<says>"

    Examples:
      | what                      | lines                                                                        | says                                                       |
      | is not JSON               | {"recordId": "r1", "modelInput": {"messages": []}}\nnot json                 | Line 2 of s3://lowtide-batch/in/records.jsonl is not a record |
      | holds a line of no record | {"recordId": "r1"}                                                           | Line 1 of s3://lowtide-batch/in/records.jsonl is not a record |
      | is not there              | <none>                                                                       | could not be read: no such object                          |

  Scenario: A job of more records than the account's maximum fails in its validation
    Given the account takes batch inference jobs of 5 records at most
    And the bucket holds 6 Converse records under in/records.jsonl
    When boto3 creates a job named "tides" with the token "token-1"
    And 100 seconds pass on the account's clock
    Then boto3 reads the job as Failed, with the message "more than the maximum of 5 records"

  Scenario: A record of a job that Converse would refuse fails alone, with Converse's error; blank lines are skipped
    Given the account takes batch inference jobs of 1 record or more
    And the bucket holds these lines under in/records.jsonl:
      """
      {"recordId": "good", "modelInput": {"messages": [{"role": "user", "content": [{"text": "Tide?"}]}]}}

      {"recordId": "bad", "modelInput": {"messages": []}}
      """
    When boto3 creates a job named "tides" with the token "token-1"
    And 100 seconds pass on the account's clock
    Then boto3 reads the job as PartiallyCompleted, 2 of 2 records processed
    And the job's output holds the record "bad" failed with 400 saying "Member must have length greater than or equal to 1"

  Scenario: A job stopped while it runs is Stopping for a while, then Stopped; an ended job cannot be stopped
    Given the account takes its time to stop a job: 30 seconds
    And the bucket holds 4 Converse records under in/records.jsonl
    When boto3 creates a job named "tides" with the token "token-1"
    And boto3 stops the job
    Then boto3 reads the job as Stopping, 0 of 4 records processed
    When 30 seconds pass on the account's clock
    Then boto3 reads the job as Stopped, 0 of 4 records processed
    When boto3 stops the job again
    Then boto3 was refused with ValidationException saying "is Stopped: it cannot be stopped"

  Scenario: A job that does not exist is not found
    When boto3 reads the job "arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/0000deadbeef"
    Then boto3 was refused with ResourceNotFoundException saying "does not exist"

  Scenario: The jobs are listed by name, status and time, oldest or newest first, page after page
    Given the account takes batch inference jobs of 1 record or more
    And the bucket holds 4 Converse records under in/records.jsonl
    When boto3 creates the jobs "ebb-1", "flood-1", "ebb-2" and "ebb-3", a second apart
    Then boto3 lists these jobs:
      | filter                                                                      | names                  |
      | {"nameContains": "ebb", "sortOrder": "Ascending"}                           | ebb-1, ebb-2, ebb-3    |
      | {"nameContains": "ebb", "maxResults": 2}                                    | ebb-3, ebb-2, ebb-1    |
      | {"statusEquals": "Submitted", "submitTimeAfter": "2027-01-01T00:00:00Z"}    | ebb-3, ebb-2, flood-1, ebb-1 |
      | {"submitTimeBefore": "2000-01-01T00:00:00+00:00"}                           |                        |
    And boto3's listing with maxResults 1001 is refused with ValidationException saying "maxResults must be between 1 and 1000."
    And boto3's listing with nextToken "nope" is refused with ValidationException saying "The nextToken is not valid."
    And a signed call listing jobs since "yesterday" is refused with ValidationException saying "'yesterday' is not a timestamp."

  Scenario: A signed call without boto3 gets a job made with a token of the account's own, and a body that is no object refused
    Given the bucket holds 4 Converse records under in/records.jsonl
    When a signed call without boto3 creates a job with no client request token
    Then the account holds 1 batch inference job
    And a signed call without boto3 whose body is a JSON list is refused with ValidationException saying "The request body must be a JSON object."

  Scenario: S3 creates a bucket once, refuses a second create of it, and names a missing bucket
    When boto3 creates the bucket "tide-logs" twice
    Then the first create made it, and the second was refused with BucketAlreadyOwnedByYou
    And boto3 finds the bucket "tide-logs" by a HEAD request
    When boto3 writes an object to the bucket "no-such-bucket"
    Then boto3 was refused with NoSuchBucket saying "The specified bucket does not exist"

  Scenario: A restarted account keeps its objects, jobs and tokens from its state file; a reset empties it
    Given the account keeps its state in a file
    And the bucket holds 4 Converse records under in/records.jsonl
    When boto3 creates a job named "tides" with the token "token-1"
    And the account is started again from its state file
    And boto3 creates a job named "tides" with the token "token-1"
    Then both creates were answered with the same job, and the account holds one
    And the account's stats count 1 job and 1 object
    When the account is reset
    Then the account's stats count 0 jobs and 0 objects
