Feature: The emulator serves Mistral's API to the official mistralai SDK over a socket
  As a developer testing a program that uses the mistralai SDK
  I want `lowtide emulator` to answer Mistral's files, batch jobs, models and chat completions on its one port
  So that my program runs offline, setting only the SDK's server_url, with jobs that move on the emulator's clock

  Every call below is the unmodified mistralai SDK (its synchronous client) talking to the emulator over a loopback
  socket; the jobs take 100 seconds of the emulator's manual clock.

  Background:
    Given the emulator serves Mistral's API on a socket, its jobs taking 100 seconds

  Scenario: A program uploads a file, runs a job from it, follows it and reads its output joined by custom_id
    When the Mistral program uploads a batch file of the requests "alpha, beta, gamma" and creates a job from it
    Then the Mistral job is "QUEUED" with 0 of 3 requests done
    When 50 seconds pass on the Mistral emulator's clock
    Then the Mistral job is "RUNNING" with 1 of 3 requests done
    And the Mistral job list filtered by its metadata holds that job alone
    When 60 seconds pass on the Mistral emulator's clock
    Then the Mistral job is "SUCCESS" with 3 of 3 requests done
    And the Mistral job's output file answers "alpha, beta, gamma", each joined by its custom_id
    When the Mistral program deletes its input file
    Then the Mistral program's file list holds the output file alone

  Scenario: An inline job with a request the model refuses: the others are answered, the refused one is in the error file
    When the Mistral program creates an inline job of the requests "alpha, bad" where "bad" names no model
    And 200 seconds pass on the Mistral emulator's clock
    Then the Mistral job is "SUCCESS" with 2 of 2 requests done
    And the Mistral job's output file answers "alpha", each joined by its custom_id
    And the Mistral job's error file says "bad" was refused with status 400

  Scenario: A job cancelled while it runs asks for its cancellation, then ends CANCELLED; an ended job cannot be cancelled
    Given the emulator's cancellations take 30 seconds
    When the Mistral program creates an inline job of the requests "alpha, beta" where "none" names no model
    And the Mistral program cancels the job
    Then the Mistral job is "CANCELLATION_REQUESTED" with 0 of 2 requests done
    When the Mistral program cancels the job
    Then the Mistral job is "CANCELLATION_REQUESTED" with 0 of 2 requests done
    When 40 seconds pass on the Mistral emulator's clock
    Then the Mistral job is "CANCELLED" with 0 of 2 requests done
    And cancelling the Mistral job again is refused with status 400

  Scenario Outline: A job whose input file holds <what> ends FAILED, saying why
    When the Mistral program uploads a batch file holding <what> and creates a job from it
    And 20 seconds pass on the Mistral emulator's clock
    Then the Mistral job is "FAILED" with 0 of <total> requests done
    And the Mistral job's errors mention "<says>"

    Examples:
      | what                         | total | says                                  |
      | a line that is not a request | 1     | Line 2 of the input file is not a request |
      | blank lines alone            | 0     | The input file holds no request       |
      | one custom_id twice          | 2     | Duplicate custom_id                   |

  Scenario: A job still running when its timeout_hours end is TIMEOUT_EXCEEDED with what it finished
    Given the emulator's jobs take 36000 seconds
    When the Mistral program creates an inline job of the requests "alpha, beta, gamma, delta" asked to end within 1 hour
    And 4000 seconds pass on the Mistral emulator's clock
    Then the Mistral job is "TIMEOUT_EXCEEDED" with 0 of 4 requests done

  Scenario: Errors come back in Mistral's shapes: no key, an unknown job, an unknown model
    Then a Mistral call without a key is answered 401 with the body {"message": "Unauthorized"}
    And getting the Mistral job "no-such-job" is answered 404
    And a Mistral chat naming the model "mistral-nope" is answered 400 saying "Invalid model: mistral-nope"

  Scenario: A path OpenAI's clients use too goes to the API whose SDK called
    Then the mistralai SDK lists Mistral's models on the emulator
    And the OpenAI SDK still lists the OpenAI models on the same emulator port

  Scenario: A create whose answer is dropped made its job all the same, found again by listing its metadata
    Given the emulator drops the answer of the next "mistral.batches.create"
    When the Mistral program creates an inline job of the requests "alpha" and loses the answer
    Then the Mistral job list filtered by its metadata holds 1 job
    And the emulator's stats count 1 Mistral job created holding "alpha" once

  Scenario: The emulator's faults reach the mistralai SDK as Mistral's statuses, a 429 keeping its retry-after
    Given the emulator fails the next "mistral.chat.completions" with status 429, asking to wait 3 seconds
    Then a Mistral chat is answered 429 with retry-after "3"
    Given the emulator fails the next "mistral.batches.list" with status 503
    Then listing the Mistral jobs is answered 503

  Scenario: An emulator started again on its state file still holds the uploaded files and the jobs
    Given the Mistral emulator keeps its state in a file
    When the Mistral program uploads a batch file of the requests "alpha, beta" and creates a job from it
    And the emulator is started again on its state file
    And 200 seconds pass on the Mistral emulator's clock
    Then the Mistral job is "SUCCESS" with 2 of 2 requests done
    And the Mistral job's output file answers "alpha, beta", each joined by its custom_id

  Scenario Outline: A request Mistral's API refuses is answered in its shape: <call>
    Then the Mistral program's call "<call>" is refused with status <status> saying "<says>"

    Examples: through the mistralai SDK
      | call                                                      | status | says                                                              |
      | a chat at temperature 2                                   | 422    | body.temperature: Input should be less than or equal to 1.5       |
      | a chat with max_tokens -1                                 | 422    | body.max_tokens: Input should be greater than or equal to 0       |
      | a chat of no message                                      | 422    | body.messages: List should have at least 1 item                   |
      | a chat choosing tools 'sometimes'                         | 422    | body.tool_choice: Input should be 'auto', 'none', 'any' or 'required' |
      | a chat declaring a nameless tool                          | 422    | body.tools.function.name: Field required                          |
      | a chat asking for a JSON schema it does not give          | 422    | body.response_format.json_schema.schema: Field required           |
      | a chat sending an audio chunk                             | 422    | body.messages.0.content: Input tag 'input_audio' found            |
      | a chat replaying a tool call whose arguments are not JSON | 422    | body.messages.1.tool_calls: arguments are not JSON                |
      | a chat longer than the model's window                     | 400    | too large for model with 131072 maximum context length            |
      | an upload for no known purpose                            | 422    | body.purpose: Input should be 'batch', 'fine-tune', 'ocr', 'audio' |
      | a job of the embeddings endpoint                          | 400    | batch jobs of /v1/chat/completions only, not '/v1/embeddings'     |
      | a job of 500 hours                                        | 422    | body.timeout_hours: timeout_hours must be from 1 to 168           |
      | a job of both files and requests                          | 400    | Give either input_files or requests, not both nor neither.        |
      | a job of neither files nor requests                       | 400    | Give either input_files or requests, not both nor neither.        |
      | a job of an empty file list                               | 422    | body.input_files: List should have at least 1 item                |
      | a job of a file never uploaded                            | 404    | File file-never not found                                         |
      | a job of no request                                       | 422    | body.requests: List should have at least 1 item                   |
      | deleting a job that does not exist                        | 404    | Batch job no-such-job not found                                   |

    Examples: sent raw, with the SDK's user-agent and key
      | call                                             | status | says                                                  |
      | a chat whose body is a list                      | 422    | body: Input should be a valid dictionary              |
      | a chat with a field Mistral has not              | 422    | body.logit_bias: Extra inputs are not permitted       |
      | a chat whose message is a string                 | 422    | body.messages.0: Input should be a valid dictionary   |
      | a chat from the narrator                         | 422    | body.messages.0.role: Input tag 'narrator' found      |
      | a chat whose content is a number                 | 422    | body.messages.0.content: Input should be a valid string or list |
      | a job whose body is a list                       | 422    | body: Input should be a valid dictionary              |
      | a job whose body is not JSON                     | 400    | JSON                                                  |
      | a job with a field Mistral has not               | 422    | body.priority: Extra inputs are not permitted         |
      | a job whose request has no body                  | 422    | body.requests.0.body: Field required                  |
      | a job whose metadata is not text                 | 422    | body.metadata: Input should be a valid dictionary of strings |
      | a job list filtered by metadata that is not JSON | 422    | body.metadata: Input should be a valid dictionary     |
      | a job list filtered by metadata that is a list   | 422    | body.metadata: Input should be a valid dictionary     |
      | a job list since no date                         | 422    | body.created_after: Input should be a valid datetime  |
      | a job of 100,001 requests                        | 400    | A batch job holds at most 100000 requests; this one has 100001. |
      | a file list of page 'two'                        | 422    | body.page: Input should be a valid integer            |
      | a PUT to the job list                            | 405    | Method Not Allowed                                    |
      | a GET of a path Mistral has not                  | 404    | Not Found                                             |

  Scenario: The job list filters by model, status and creation time, newest first unless asked otherwise; a deleted job is gone
    When the Mistral program creates the inline job "first" of the request "alpha" for the model "codestral-latest", with no metadata
    And 50 seconds pass on the Mistral emulator's clock
    And the Mistral program creates the inline job "second" of the request "beta" for the model "mistral-small-latest", with no metadata
    Then the Mistral job lists hold these jobs:
      | filter                              | jobs          |
      | {}                                  | second, first |
      | {"model": "codestral-latest"}       | first         |
      | {"status": ["RUNNING"]}             | first         |
      | {"status": ["QUEUED", "RUNNING"]}   | second, first |
      | {"order_by": "created"}             | first, second |
      | {"after": "first"}                  | second        |
      | {"naive_after": "first"}            | second        |
      | {"metadata_json": {"run": "a"}}     |               |
    When the Mistral program deletes the job "first"
    Then the Mistral job lists hold these jobs:
      | filter | jobs   |
      | {}     | second |

  Scenario: Requests a job cannot run land in its error file: one asked to be cancelled or to time out, one that streams
    When the Mistral program creates an inline job whose requests say:
      | custom_id | text                                  | streams |
      | alpha     | Question alpha                        | no      |
      | gone      | [[emulator:canceled]] Which tide?     | no      |
      | late      | [[emulator:expired]] Which tide?      | no      |
      | flowing   | Tell me about the tide                | yes     |
    And 200 seconds pass on the Mistral emulator's clock
    Then the Mistral job is "SUCCESS" with 4 of 4 requests done
    And the Mistral job's output file answers "alpha", each joined by its custom_id
    And the Mistral job's error file holds these lines:
      | custom_id | says                                      |
      | gone      | error cancelled: The request was cancelled. |
      | late      | error timeout: The request timed out.     |
      | flowing   | status 400: A batch request cannot stream. |

  Scenario: A job of an emulator whose jobs take no time has ended by the time it is read
    Given the emulator's jobs take 0 seconds
    When the Mistral program creates an inline job of the requests "alpha, beta" asked to end within 1 hour
    Then the Mistral job is "SUCCESS" with 2 of 2 requests done

  Scenario Outline: An upload or a job body above the emulator's limits is refused before it is read: <call>
    Given the emulator serves Mistral's API on a socket, taking files of at most 1024 bytes and job bodies of at most 2048
    Then the Mistral program's call "<call>" is refused with status <status> saying "<says>"

    Examples:
      | call                         | status | says                                                   |
      | an upload of 100 KB          | 413    | File is too large: files hold at most 1024 bytes.      |
      | a job of 100 inline requests | 413    | The batch job's body exceeds 2048 bytes: send larger batches as a file. |
      | an upload of no file         | 422    | body.file: Field required                              |

  Scenario: Chats over the key's requests per minute are answered 429 with the wait in retry-after
    Given the emulator serves Mistral's API on a socket, allowing 1 chat per minute per key
    Then a Mistral chat is answered
    And a Mistral chat is answered 429 with retry-after "60"

  Scenario: An unexpected failure inside the emulator answers 500 in Mistral's shape
    Given the emulator serves Mistral's API on a socket, on a clock that has stopped working
    Then the Mistral program's call "a plain chat" is refused with status 500 saying "Internal server error"
