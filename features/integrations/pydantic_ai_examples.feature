@integration @pydantic_ai
Feature: pydantic-ai's documented examples over a lowtide model
  As a developer following pydantic-ai's documentation with a lowtide actor as the model
  I want its examples (tools, structured output, chat history, streaming) to run as printed, in batch and live mode
  So that what I read there holds for my agents on batches

  Background:
    Given an emulated Anthropic API that ends batches after 0.2 seconds

  Scenario Outline: pydantic-ai's "<example>" example runs as documented over an actor in <mode> mode
    Given pydantic-ai's examples' model is a LowtideModel over an actor in <mode> mode
    When pydantic-ai's example "<example>" runs
    Then it printed <lines> line(s), the last matching <last>
    And the emulator created <batches> batches

    Examples:
      | example           | mode  | lines | last                                       | batches |
      | hello_world       | batch | 1     | `.*Where does "hello world" come from\?.*` | 1       |
      | hello_world       | live  | 1     | `.*Where does "hello world" come from\?.*` | 0       |
      | dice_game         | batch | 3     | `\['Anne'\]`                               | 2       |
      | dice_game         | live  | 3     | `\['Anne'\]`                               | 0       |
      | structured_output | batch | 2     | `1`                                        | 1       |
      | structured_output | live  | 2     | `1`                                        | 0       |
      | chat_history      | batch | 3     | `4 \['request', 'response', 'request', 'response'\]` | 2 |
      | chat_history      | live  | 3     | `4 \['request', 'response', 'request', 'response'\]` | 0 |
      | stream_text       | batch | 1     | `.*Where does "hello world" come from\?.*` | 1       |
      | stream_text       | live  | more than 2 | `.*Where does "hello world" come from\?.*` | 0 |
      | stream_output     | batch | 2     | `\['bio', 'dob', 'name'\]`                 | 1       |
      | stream_output     | live  | more than 2 | `\['bio', 'dob', 'name'\]`           | 0       |
      | stream_events     | batch | more than 4 | `result: .*`                         | 2       |
      | stream_events     | live  | more than 4 | `result: .*`                         | 0       |
