Feature: The emulator serves Together AI's API to the official together SDK
  As a developer testing a program that calls Together AI
  I want the emulator to answer the together SDK at Together's paths, with its upload, its jobs and its errors
  So that my program runs against it by setting TOGETHER_BASE_URL alone, beside OpenAI's callers of the same paths

  Background:
    Given an emulator on a socket whose Together jobs take 1000 seconds, reached through TOGETHER_BASE_URL alone

  Scenario: The SDK's life cycle: upload, create, retrieve, list, read the results, delete
    When the together SDK uploads a batch file of 3 requests for "meta-llama/Llama-3.3-70B-Instruct-Turbo"
    Then the file is listed with the purpose "batch-api" and its name
    When the together SDK creates a job from it
    Then the Together job is "VALIDATING" at 0% progress
    When 150 seconds pass on the emulator's clock
    Then the Together job is "IN_PROGRESS" at 0% progress
    When 500 seconds pass on the emulator's clock
    Then the Together job is "IN_PROGRESS" at 66.67% progress
    When 350 seconds pass on the emulator's clock
    Then the Together job is "COMPLETED" at 100% progress
    And the Together job names the model "meta-llama/Llama-3.3-70B-Instruct-Turbo"
    And the together SDK lists 1 job
    And the Together job's output file holds an answer from "meta-llama/Llama-3.3-70B-Instruct-Turbo" for each of its 3 requests
    When the together SDK deletes the input file
    Then the together SDK lists no file of purpose "batch-api"
    And the emulator's stats count 1 Together job created, with 3 custom ids

  Scenario: The same bytes uploaded again are answered with the file the account holds
    When the together SDK uploads a batch file of 2 requests for "meta-llama/Llama-3.3-70B-Instruct-Turbo"
    And the together SDK uploads the same file again
    Then both uploads name the same file, stored once

  Scenario: A cancel ends the job cancelled, keeping what finished before it
    When the together SDK uploads a batch file of 3 requests for "meta-llama/Llama-3.3-70B-Instruct-Turbo"
    And the together SDK creates a job from it
    And 600 seconds pass on the emulator's clock
    And the together SDK cancels the job
    Then the Together job is "CANCELLED" at 33.33% progress

  Scenario: A job still running 24 hours after its creation expires
    When the together SDK uploads a batch file of 3 requests for "meta-llama/Llama-3.3-70B-Instruct-Turbo"
    And the emulator's Together jobs take 200000 seconds
    And the together SDK creates a job from it
    And 86400 seconds pass on the emulator's clock
    Then the Together job is "EXPIRED" at 100% progress

  Scenario: A file whose requests name two models fails validation: the job ends failed, saying why
    When the together SDK uploads a batch file whose requests name "meta-llama/Llama-3.3-70B-Instruct-Turbo" and "openai/gpt-oss-120b"
    And the together SDK creates a job from it
    And 100 seconds pass on the emulator's clock
    Then the Together job is "FAILED", saying "does not match"

  Scenario Outline: What Together refuses is answered in its error shape: <case>
    When the together SDK uploads a batch file of 1 request for "meta-llama/Llama-3.3-70B-Instruct-Turbo"
    And the together SDK <call>
    Then the together SDK raised a <error> with status <status>, its error body saying "<says>"

    Examples:
      | case             | call                                        | error               | status | says          |
      | another endpoint | creates a job from it for "/v1/embeddings"  | BadRequestError     | 400    | endpoint      |
      | an unknown job   | retrieves the job "batch_nothere"           | NotFoundError       | 404    | batch_nothere |
      | an unknown model | asks "llama-9" for a chat completion        | NotFoundError       | 404    | llama-9       |
      | another purpose  | starts an upload with the fields {"purpose": "fine-tune-ish", "file_type": "jsonl", "file_name": "a.jsonl", "checksum": "c"} | BadRequestError | 400 | purpose |
      | another file type | starts an upload with the fields {"purpose": "batch-api", "file_type": "zip", "file_name": "a.jsonl", "checksum": "c"} | BadRequestError | 400 | file_type |
      | no file name     | starts an upload with the fields {"purpose": "batch-api", "file_type": "jsonl", "checksum": "c"} | BadRequestError | 400 | file_name |
      | no checksum      | starts an upload with the fields {"purpose": "batch-api", "file_type": "jsonl", "file_name": "a.jsonl"} | BadRequestError | 400 | checksum |
      | an unknown upload | puts bytes to the upload "file-nothere"    | NotFoundError       | 404    | file-nothere  |
      | an unknown file  | asks to preprocess the file "file-nothere"  | NotFoundError       | 404    | file-nothere  |
      | a longer window  | creates a job from it with the body fields {"completion_window": "48h"} | BadRequestError | 400 | completion_window |
      | a priority in words | creates a job from it with the body fields {"priority": "high"} | BadRequestError | 400 | priority |
      | a setting Together does not take | asks "meta-llama/Llama-3.3-70B-Instruct-Turbo" for a chat completion with "context_length_exceeded_behavior" = "shrug" | BadRequestError | 400 | context_length_exceeded_behavior |
      | a body that is not an object | posts a chat completion whose body is [{"model": "x"}] | BadRequestError | 400 | object |
      | a body without a model | posts a chat completion whose body is {"messages": [{"role": "user", "content": "Hi"}]} | BadRequestError | 400 | model |
      | a model only OpenAI serves | asks "gpt-4o-mini" for a chat completion | NotFoundError | 404 | gpt-4o-mini |

  Scenario: The jobs, their files and their models survive a restart from the state file
    Given the emulator keeps its state in a file
    When the together SDK uploads a batch file of 2 requests for "meta-llama/Llama-3.3-70B-Instruct-Turbo"
    And the together SDK creates a job from it
    And 1000 seconds pass on the emulator's clock
    And the emulator is restarted from its state file
    Then the Together job is "COMPLETED" at 100% progress
    And the Together job's output file holds an answer from "meta-llama/Llama-3.3-70B-Instruct-Turbo" for each of its 2 requests
    When the together SDK uploads the same file again
    Then both uploads name the same file, stored once

  Scenario: On the paths they share, OpenAI's callers and Together's are answered by their own accounts
    When the together SDK uploads a batch file of 1 request for "meta-llama/Llama-3.3-70B-Instruct-Turbo"
    And the together SDK creates a job from it
    Then the OpenAI SDK at the same address lists no batch and no file
    And the together SDK lists 1 job

  Scenario: A reset forgets the Together account's jobs, files and uploads under way
    When the together SDK uploads a batch file of 1 request for "meta-llama/Llama-3.3-70B-Instruct-Turbo"
    And the together SDK creates a job from it
    And the emulator on the socket is reset
    Then the together SDK lists 0 jobs
    And the together SDK lists no file of purpose "batch-api"

  Scenario: A request larger than the emulator was told to take is answered 413, in the API's error shape
    Given the emulator on the socket takes at most 64 bytes in a request
    When the together SDK asks "meta-llama/Llama-3.3-70B-Instruct-Turbo" for a chat completion
    Then the together SDK raised a APIStatusError with status 413, its error body saying "64"
