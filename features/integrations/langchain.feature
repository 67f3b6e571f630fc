@integration @langchain
Feature: A LangChain chat model answered through lowtide
  As a developer whose chains are written with LangChain
  I want a chat model backed by a lowtide actor
  So that a batch of prompts, a tool-calling chain or a structured answer goes through batches, durably

  Background:
    Given an emulated Anthropic API that ends batches after 0.2 seconds
    And a LangChain chat model over an actor in batch mode

  Scenario: abatch of 200 prompts is one provider batch
    When the model is given 200 prompts with abatch
    Then 200 answers come back, each quoting its own prompt, in order
    And every answer came in the same batch, at batch prices
    And the emulator created 1 batch
    And the emulator was sent 200 requests, none of them twice

  Scenario: batch from a program without an event loop is one provider batch too
    When the model is given 50 prompts with batch
    Then 50 answers come back, each quoting its own prompt, in order
    And the emulator created 1 batch

  Scenario: A tool-calling chain
    When the model with a lookup tool is asked "[[emulator:tool:lookup]] Where is order 42?"
    Then the model calls the lookup tool
    When the tool's result is sent back with the conversation
    Then the final answer quotes the tool's result
    And the emulator created 2 batches

  Scenario: Offered a tool, the emulated model calls the one the prompt names, with the prompt's arguments, then answers in text
    When the model with a lookup tool is asked "Please lookup order 'Ø-42 北' for me"
    Then the model calls the lookup tool with order_id "Ø-42 北"
    When the tool's result is sent back with the conversation
    Then the final answer quotes the tool's result
    And the emulator created 2 batches

  Scenario: Offered a tool the prompt does not ask for, the emulated model answers in text
    When the model with a lookup tool is asked "Where does the tide go?"
    Then the model calls no tool and its answer quotes "Where does the tide go?"

  Scenario: with_structured_output gives an instance of the schema
    When the model's structured output for a verdict is asked "Classify: arrived broken."
    Then the answer is a verdict
    And the emulator created 1 batch

  Scenario: The same keyed call made again gets its stored answer without paying twice
    When the model is invoked with "Summarize the harbour report" and the key "report-1"
    And the model is invoked with "Summarize the harbour report" and the key "report-1"
    Then both answers are the same, from the same batch
    And the emulator created 1 batch

  Scenario: A call whose worst case crosses its budget fails before anything is sent
    When the model is invoked with "Hello" and a budget of $0.000001
    Then the call fails with lowtide's BudgetExceededError
    And no batch was created and no message was sent

  Scenario: A whole conversation is sent: a system prompt, an image, an earlier tool call and its failed result
    When the model is invoked with a system prompt, an image, an earlier tool call, its failed result and "What now?"
    Then the answer quotes "What now?"
    And the emulator created 1 batch

  Scenario: A tool forced by name is called
    When the model with a lookup tool it must call is asked "Hello"
    Then the model calls the lookup tool
