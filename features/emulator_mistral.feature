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
    When 40 seconds pass on the Mistral emulator's clock
    Then the Mistral job is "CANCELLED" with 0 of 2 requests done
    And cancelling the Mistral job again is refused with status 400

  Scenario: A job whose input file holds a line that is not a request ends FAILED, saying which line
    When the Mistral program uploads a batch file holding a line that is not a request and creates a job from it
    And 20 seconds pass on the Mistral emulator's clock
    Then the Mistral job is "FAILED" with 0 of 1 requests done
    And the Mistral job's errors mention "Line 2"

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
