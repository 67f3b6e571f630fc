Feature: The emulator's Fireworks datasets and batch jobs: what Fireworks refuses refused alike, and kept across restarts
  As an engineer testing a Fireworks batch client against the emulator
  I want a malformed id, a dataset made or uploaded twice, a job without its model or input, and a bad page answered
  as Fireworks answers them, and the datasets and jobs made kept in the emulator's state file
  So that my client's error handling is exercised as the real API would exercise it, and a restart loses no job

  Background:
    Given an emulator of Fireworks' datasets and jobs taking 600 seconds, keeping its state in a file
    And the Fireworks dataset "prompts" uploaded with 2 rows and a blank line
    And the Fireworks dataset "empty" created with nothing uploaded

  Scenario Outline: A request the Fireworks API cannot take is refused with the status and words Fireworks uses
    When the Fireworks emulator is sent <method> "<path>" with the body <body>
    Then the Fireworks emulator answered <status> with the message "<message>"
    And the Fireworks dataset "prompts" is READY with 2 rows

    Examples:
      | method | path                                           | body                                          | status | message                                                                                     |
      | POST   | /datasets                                      | {"datasetId": "Prompts_2"}                    | 400    | Invalid dataset_id 'Prompts_2': 1 to 63 lower-case letters, digits and dashes, starting with a letter or digit. |
      | POST   | /datasets                                      | {}                                            | 400    | Invalid dataset_id None: 1 to 63 lower-case letters, digits and dashes, starting with a letter or digit.        |
      | POST   | /datasets                                      | {"datasetId": "prompts"}                      | 409    | Dataset accounts/acme/datasets/prompts already exists.                                      |
      | GET    | /datasets/nope                                 | -                                             | 404    | Dataset accounts/acme/datasets/nope not found.                                              |
      | POST   | /batchInferenceJobs?batchInferenceJobId=j1     | {"inputDatasetId": "prompts"}                 | 400    | Missing required parameter: 'model'.                                                        |
      | POST   | /batchInferenceJobs?batchInferenceJobId=j1     | {"model": "accounts/fireworks/models/llama-v3p1-8b-instruct", "inputDatasetId": "empty"} | 400 | Dataset accounts/acme/datasets/empty has no file uploaded yet. |
      | POST   | /batchInferenceJobs?batchInferenceJobId=j1     | {"model": "accounts/fireworks/models/llama-v3p1-8b-instruct", "inputDatasetId": "accounts/acme/datasets/nope"} | 404 | Dataset accounts/acme/datasets/nope not found. |
      | GET    | /batchInferenceJobs?pageSize=0                 | -                                             | 400    | Invalid page: pageToken '0', pageSize '0'.                                                  |
      | GET    | /batchInferenceJobs?pageToken=next             | -                                             | 400    | Invalid page: pageToken 'next', pageSize '50'.                                              |

  Scenario: A dataset is uploaded to once: a second upload is refused and the first file stays
    When the Fireworks dataset "prompts" is uploaded to again
    Then the Fireworks emulator answered 400 with the message "Dataset accounts/acme/datasets/prompts was uploaded to already."
    And the Fireworks dataset "prompts" is READY with 2 rows

  Scenario: A job reads its dataset's rows (a blank line is no row), and a new emulator on the state file shows it
    When the Fireworks emulator is sent POST "/batchInferenceJobs?batchInferenceJobId=j1" with the body {"model": "accounts/fireworks/models/llama-v3p1-8b-instruct", "inputDatasetId": "prompts"}
    And a new Fireworks emulator starts on the same state file
    And 700 seconds pass on the Fireworks emulator's clock
    Then the Fireworks job "j1" is JOB_STATE_COMPLETED, of 2 requests, 0 failed
    And the Fireworks dataset "prompts" is READY with 2 rows

  Scenario: A job whose model does not exist completes with each of its requests failed
    When the Fireworks emulator is sent POST "/batchInferenceJobs?batchInferenceJobId=j2" with the body {"model": "accounts/fireworks/models/no-such-model", "inputDatasetId": "prompts"}
    And 700 seconds pass on the Fireworks emulator's clock
    Then the Fireworks job "j2" is JOB_STATE_COMPLETED, of 2 requests, 2 failed
