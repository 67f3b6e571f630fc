@integration @pydantic_ai
Feature: A pydantic-ai agent answered through lowtide
  As a developer whose agents are written with pydantic-ai
  I want to give an agent a lowtide actor as its model
  So that its calls go through batches at half the price, durably, without restructuring the agent

  Background:
    Given an emulated Anthropic API that ends batches after 0.2 seconds

  Scenario Outline: An agent with a tool and a structured output is answered in the actor's mode
    Given a forecast agent with a weather tool over an actor in <mode> mode
    When the agent is asked "What is the weather in Paris?"
    Then the agent's output is a forecast
    And the weather tool was called once
    And the run made 2 requests, each answered in <mode> mode
    And the run's cost is the sum of its responses' costs, at <mode> prices
    And the emulator created <batches> batches

    Examples:
      | mode  | batches |
      | batch | 2       |
      | live  | 0       |

  Scenario Outline: Native and prompted structured output
    Given a forecast agent with <output> output over an actor in batch mode
    When the agent is asked "Forecast for Oslo"
    Then the agent's output is a forecast
    And the run made 1 request, each answered in batch mode
    And the emulator created 1 batch

    Examples:
      | output   |
      | native   |
      | prompted |

  Scenario: 200 concurrent agent runs travel as one batch per step
    Given a forecast agent with a weather tool over an actor in batch mode
    When 200 runs of the agent are started at once
    Then every run's output is a forecast
    And the weather tool was called 200 times
    And the emulator created 2 batches
    And each step's requests of every run travelled in one batch
    And the emulator was sent 400 requests, none of them twice

  Scenario: Runs whose process stopped half-way are resumed without paying twice
    Given a forecast agent with a weather tool over an actor in batch mode
    When 20 keyed runs of the agent are started at once
    And their second step's batch is created, and the process stops waiting and closes its actor
    And the same 20 keyed runs are started again with a new actor over the same ledger
    Then every run's output is a forecast
    And the emulator created 2 batches
    And the emulator was sent 40 requests, none of them twice
    And the resumed runs' first responses came from the first batch

  Scenario: A run that names its key finds its stored answers
    Given a forecast agent with a weather tool over an actor in batch mode
    When the agent is run with the key "forecast-7"
    And the agent is run with the key "forecast-7" again
    Then both runs' outputs are the same forecast
    And the emulator created 2 batches
    And the ledger holds the keys "forecast-7/step-1" and "forecast-7/step-2"

  Scenario Outline: lowtide's errors reach the agent as pydantic-ai's exceptions
    Given <setup>
    And the actor retries each kind of live error once
    And a plain agent over an actor in <mode> mode
    When the agent is asked "<prompt>"
    Then the run fails with pydantic-ai's <error>
    And the error's cause is lowtide's <cause>

    Examples:
      | setup                                                           | mode  | prompt                                   | error                     | cause                |
      | the API answers the next 5 calls to messages.create with status 429 | live  | Hello                                    | ModelRateLimitError (HTTP 429) | RateLimitError       |
      | the API answers the next 5 calls to messages.create with status 529 | live  | Hello                                    | ModelOverloadedError (HTTP 529) | OverloadedError      |
      | the API answers the next 5 calls to messages.create with status 401 | live  | Hello                                    | ModelAuthenticationError (HTTP 401) | AuthenticationError  |
      | the actor allows 1 attempt per request                          | batch | Hello [[emulator:errored:invalid_request_error]] | ModelRequestRejectedError | BatchRequestErrored  |
      | the actor allows 1 attempt per request                          | batch | Hello [[emulator:expired]]               | ModelUnavailableError     | BatchRequestExpired  |

  Scenario: A budget the request's worst case would cross stops the run before anything is sent
    Given a plain agent over an actor in batch mode
    When the agent is asked "Hello" with a budget of $0.000001 per request
    Then the run fails with pydantic-ai's UsageLimitExceeded
    And the error's cause is lowtide's BudgetExceededError
    And no batch was created and no message was sent

  Scenario: A misspelt model is the user's error, named before anything is sent
    Given a plain agent over an actor of model "claude-sonet-5-5" in batch mode
    When the agent is asked "Hello"
    Then the run fails with pydantic-ai's UserError
    And the error says "Did you mean 'claude-sonnet-5-5'"
    And no batch was created and no message was sent

  Scenario: A tool that asks for another try, and a prompt with images and a PDF
    Given a forecast agent whose weather tool asks for another try once, over an actor in batch mode
    When the agent is asked about two pictures and a PDF "What is the weather here?"
    Then the agent's output is a forecast
    And the weather tool was called 2 times
    And the run made 3 requests, each answered in batch mode

  Scenario: Content lowtide cannot send is the user's error, before anything is sent
    Given a plain agent over an actor in batch mode
    When the agent is asked about an audio file
    Then the run fails with pydantic-ai's UserError
    And no batch was created and no message was sent

  Scenario: A batch that outlives the actor's max_wait is a request timeout
    Given an emulated Anthropic API that ends batches after 30.0 seconds
    And the actor waits at most 0.5 seconds for a batch
    And a plain agent over an actor in batch mode
    When the agent is asked "Hello"
    Then the run fails with pydantic-ai's ModelRequestTimeout
    And the error's cause is lowtide's BatchTimeoutError
