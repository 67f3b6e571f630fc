Feature: The emulator serves Groq's API to the official groq SDK
  As a developer testing a program that calls Groq
  I want the emulator to answer the groq SDK at Groq's own paths (/openai/v1/...), with Groq's shapes and errors
  So that my program runs against it by setting GROQ_BASE_URL alone, its batches living on the emulator's clock

  Background:
    Given an emulator on a socket whose Groq batches take 1000 seconds, reached through GROQ_BASE_URL alone

  Scenario: The SDK's life cycle: upload, create, retrieve, list, read the results, delete
    When the groq SDK uploads a batch file of 3 requests for "llama-3.1-8b-instant"
    And the groq SDK creates a batch from it with the window "2d" and the metadata "lowtide_intent" = "intent-1"
    Then the Groq batch is "validating", its window "2d", its metadata kept, expiring 172800 seconds after its creation
    When 150 seconds pass on the emulator's clock
    Then the Groq batch is "in_progress" with 0 of 3 requests done
    When 500 seconds pass on the emulator's clock
    Then the Groq batch is "in_progress" with 2 of 3 requests done
    When 300 seconds pass on the emulator's clock
    Then the Groq batch is "finalizing" with 3 of 3 requests done
    When 50 seconds pass on the emulator's clock
    Then the Groq batch is "completed" with 3 of 3 requests done
    And the groq SDK lists 1 batch
    And the Groq batch's output file holds an answer from "llama-3.1-8b-instant" for each of its 3 requests
    When the groq SDK deletes the input file
    Then the groq SDK lists no file of purpose "batch"
    And the emulator's stats count 1 Groq batch created, with 3 custom ids

  Scenario: A cancel answers the batch cancelling; it ends cancelled, keeping what finished before it
    When the groq SDK uploads a batch file of 3 requests for "llama-3.1-8b-instant"
    And the groq SDK creates a batch from it with the window "24h" and the metadata "lowtide_intent" = "intent-1"
    And 600 seconds pass on the emulator's clock
    And the groq SDK cancels the batch
    Then the cancel was answered "cancelling"
    And the Groq batch is "cancelled" with 1 of 3 requests done

  Scenario: A batch still running when its window ends expires; what finished is kept
    When the groq SDK uploads a batch file of 3 requests for "llama-3.1-8b-instant"
    And the emulator's Groq batches take 200000 seconds
    And the groq SDK creates a batch from it with the window "24h" and the metadata "lowtide_intent" = "intent-1"
    And 86400 seconds pass on the emulator's clock
    Then the Groq batch is "expired" with 1 of 3 requests done

  Scenario: A file whose requests name two models fails validation: the batch ends failed, saying why
    When the groq SDK uploads a batch file whose requests name "llama-3.1-8b-instant" and "llama-3.3-70b-versatile"
    And the groq SDK creates a batch from it with the window "24h" and the metadata "lowtide_intent" = "intent-1"
    And 100 seconds pass on the emulator's clock
    Then the Groq batch is "failed", saying "model_mismatch"

  Scenario Outline: What Groq refuses is answered in Groq's error shape: <case>
    When the groq SDK uploads a batch file of 1 request for "llama-3.1-8b-instant"
    And the groq SDK <call>
    Then the groq SDK raised a <error> with status <status>, its error body saying "<says>"

    Examples:
      | case               | call                                                 | error               | status | says                          |
      | a window too long  | creates a batch from it with the window "8d"         | BadRequestError     | 400    | Durations from 24h to 7d      |
      | another endpoint   | creates a batch from it for the endpoint "/v1/embeddings" | BadRequestError | 400    | endpoint                      |
      | an unknown batch   | retrieves the batch "batch_nothere"                  | NotFoundError       | 404    | batch_nothere                 |
      | an unknown model   | asks "llama-9" for a chat completion                 | NotFoundError       | 404    | llama-9                       |
      | no key             | calls without a key                                  | AuthenticationError | 401    | API key                       |
      | a window in other words | creates a batch from it with the window "3 days" | BadRequestError     | 400    | Durations from 24h to 7d      |
      | an unknown input file | creates a batch from the file "file-nothere"      | NotFoundError       | 404    | file-nothere                  |
      | a setting Groq does not take | asks "llama-3.1-8b-instant" for a chat completion with "reasoning_format" = "xml" | BadRequestError | 400 | reasoning_format |
      | a body that is not an object | posts a chat completion whose body is [{"model": "x"}] | BadRequestError     | 400    | object                        |
      | a body without a model | posts a chat completion whose body is {"messages": [{"role": "user", "content": "Hi"}]} | BadRequestError     | 400    | model                        |
      | a model only OpenAI serves | asks "gpt-4o-mini" for a chat completion       | NotFoundError       | 404    | gpt-4o-mini                   |

  Scenario: The batches, their windows and models survive a restart from the state file
    Given the emulator keeps its state in a file
    When the groq SDK uploads a batch file of 2 requests for "llama-3.1-8b-instant"
    And the groq SDK creates a batch from it with the window "3d" and the metadata "lowtide_intent" = "intent-1"
    And 1000 seconds pass on the emulator's clock
    And the emulator is restarted from its state file
    Then the Groq batch is "completed" with 2 of 2 requests done
    And the Groq batch's window is "3d"
    And the Groq batch's output file holds an answer from "llama-3.1-8b-instant" for each of its 2 requests

  Scenario: OpenAI's callers at /v1 and Groq's at /openai/v1 are answered by their own accounts
    When the groq SDK uploads a batch file of 1 request for "llama-3.1-8b-instant"
    And the groq SDK creates a batch from it with the window "24h" and the metadata "lowtide_intent" = "intent-1"
    Then the OpenAI SDK at the same address lists no batch

  Scenario: A reset forgets the Groq account's batches and files
    When the groq SDK uploads a batch file of 1 request for "llama-3.1-8b-instant"
    And the groq SDK creates a batch from it with the window "24h" and the metadata "lowtide_intent" = "intent-1"
    And the emulator on the socket is reset
    Then the groq SDK lists 0 batches
    And the groq SDK lists no file of purpose "batch"

  Scenario: A batch whose requests name a model Groq does not serve answers each with its own error line
    When the groq SDK uploads a batch file of 2 requests for "llama-9"
    And the groq SDK creates a batch from it with the window "24h" and the metadata "lowtide_intent" = "intent-1"
    And 1000 seconds pass on the emulator's clock
    Then the Groq batch is "completed" with 0 of 2 requests done
    And the Groq batch's error file says "llama-9" for each of its 2 requests

  Scenario: A line that is not JSON, or a setting Groq does not take, is the batch's or the request's own error
    When the groq SDK uploads a batch file of these lines:
      """
      {"custom_id": "r0", "method": "POST", "url": "/v1/chat/completions", "body": {"model": "llama-3.1-8b-instant", "messages": [{"role": "user", "content": "Q0"}], "reasoning_format": "xml"}}
      not json at all
      """
    And the groq SDK creates a batch from it with the window "24h" and the metadata "lowtide_intent" = "intent-1"
    And 1000 seconds pass on the emulator's clock
    Then the Groq batch is "failed", saying "invalid_json_line"

  Scenario: A request larger than the emulator was told to take is answered 413, in the API's error shape
    Given the emulator on the socket takes at most 64 bytes in a request
    When the groq SDK asks "llama-3.1-8b-instant" for a chat completion
    Then the groq SDK raised a APIStatusError with status 413, its error body saying "64"
