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
