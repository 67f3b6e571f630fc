Feature: Structured output
  As a developer who wants typed answers from an actor
  I want to pass a pydantic model as `response_model` and get an instance of it back, in live and batch mode
  So that my agent works with validated data, and an answer that does not fit is an error that keeps what I paid for

  Background:
    Given an emulated Anthropic API whose batches take 60 seconds

  Scenario Outline: An answer is parsed into a model with nested, optional, enum and list fields
    Given an actor "planner" in <mode> mode
    When the actor is asked "Plan the harbour dredging" for a Plan
    Then the parsed answer is a Plan with a priority, a list of steps, each a Step, and a list of tags
    And the parsed answer is the answer text, validated
    And the answer came through <mode> mode

    Examples:
      | mode  |
      | live  |
      | batch |

  Scenario: The model's JSON schema is sent as the output format, beside the configured output settings
    Given an actor "planner" with:
      """
      batch_processing: batch
      output_config: {effort: low}
      """
    When the actor is asked "Plan the harbour dredging" for a Plan
    Then the batch request asked for the output format of a Plan, with effort "low"

  Scenario: An answer given as a forced tool call is parsed from the tool's input
    Given an actor "planner" in live mode
    When the actor is asked "Plan the harbour dredging" for a Plan, through the forced tool "submit_plan"
    Then the parsed answer is a Plan with a priority, a list of steps, each a Step, and a list of tags
    And the response has these fields:
      | field       | value    |
      | stop_reason | tool_use |

  Scenario Outline: An answer that does not fit the model is a StructuredOutputError keeping the raw text and the response
    Given an actor "clerk" in <mode> mode
    When the actor is asked "File the harbour permit" for a Permit
    Then the call fails with StructuredOutputError
    And the error message contains "The answer does not fit Permit: 1 problem(s); first: code: String should match pattern"
    And the structured output error keeps the raw text, the model name "Permit" and the <mode> response it came in

    Examples:
      | mode  |
      | live  |
      | batch |

  Scenario Outline: A response model that is no pydantic model class is refused by name, before anything is sent
    Given an actor "clerk" in <mode> mode
    When the actor is asked "File the harbour permit" with <given> as its response model
    Then the call fails with ConfigurationError
    And the error message contains "<message>"
    And the API received no calls at all

    Examples:
      | mode  | given               | message                                                                                                     |
      | batch | an instance of Plan | response_model: give the model class, Plan, not an instance of it (Plan(...)).                              |
      | live  | an instance of Plan | response_model: give the model class, Plan, not an instance of it (Plan(...)).                              |
      | batch | the class int       | response_model: a response model is a pydantic model class (a subclass of BaseModel), not the class int.    |
      | live  | the text "Plan"     | response_model: a response model is a pydantic model class (a subclass of BaseModel), not str 'Plan'.       |

  Scenario: An answer cut short by max_tokens is not valid JSON, and says so
    Given an actor "planner" with:
      """
      max_tokens: 8
      """
    When the actor is asked "Plan the harbour dredging" for a Plan
    Then the call fails with StructuredOutputError
    And the error message contains "first: (root): Invalid JSON"
    And the structured output error keeps the raw text, the model name "Plan" and the live response it came in
    And the raw text kept is 32 characters of JSON cut short

  Scenario: In a batch, an answer that does not fit is that request's own outcome
    Given an actor "clerk" in batch mode
    When the actor runs these requests as one batch:
      | custom_id | prompt                    | response model |
      | plan      | Plan the harbour dredging | Plan           |
      | permit    | File the harbour permit   | Permit         |
      | note      | Note the weather          |                |
    Then the outcome of "plan" is parsed as a Plan
    And the outcome of "permit" is a StructuredOutputError saying "The answer does not fit Permit"
    And the outcome of "permit" keeps the raw text and a response from the batch
    And the outcome of "note" is the emulated reply to "Note the weather"
