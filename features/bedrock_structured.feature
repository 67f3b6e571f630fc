Feature: A Bedrock actor's response_model is Converse's structured output
  As a developer whose agents run on Bedrock models and want typed answers
  I want a `response_model` to ask Bedrock for its schema (`outputConfig.textFormat`), live and in batch records
  So that the answer's text is the JSON of that schema, parsed into my model, rather than prose I parse by luck

  The emulated models answer a Converse body's `outputConfig.textFormat` schema with an instance of it, and anything
  else with prose quoting the prompt: a Plan parsed from the answer proves the schema was sent.

  Background:
    Given an emulated AWS account on a socket, whose batch inference jobs take 0 seconds
    And the account takes batch inference jobs of 1 record or more

  Scenario Outline: A Plan asked of a Bedrock actor in <mode> mode is parsed from the answer's text
    Given a Bedrock actor "planner" with:
      """
      batch_processing: <mode>
      max_tokens: 512
      batch: {coalesce_window: 0.1, poll_interval: 1}
      """
    When the actor is asked "Plan the harbour's week." for a Plan
    Then the parsed answer is a Plan with a priority, a list of steps, each a Step, and a list of tags
    And the parsed answer is the answer text, validated
    And the API received these calls:
      | call                   | count      |
      | bedrock.converse       | <live>     |
      | bedrock.batches.create | <batches>  |

    Examples:
      | mode  | live | batches |
      | live  | 1    | 0       |
      | batch | 0    | 1       |
