@integration @langchain
Feature: A LangChain chat model over a Gemini actor
  As a developer whose chains are written with LangChain and whose models are Google's
  I want a chat model backed by a lowtide actor of provider gemini
  So that a chain works as it does over any other provider, the adapter knowing nothing of Gemini

  The emulator serves the Gemini API through the official google-genai SDK. Each scenario names the actor's mode in
  its examples: a batch mode row is one more line.

  Background:
    Given an emulated Anthropic API that ends batches after 0.2 seconds

  Scenario Outline: A plain text answer, with its usage and cost
    Given a LangChain chat model over a Gemini actor in <mode> mode
    When the model is invoked with just "Where does the tide turn?"
    Then the answer quotes "Where does the tide turn?"
    And the answer came in <mode> mode, with its usage and cost
    And the emulated Gemini API answered <live calls> generateContent call(s) live

    Examples:
      | mode  | live calls |
      | live  | 1          |
      | batch | 0          |

  Scenario Outline: A tool-calling chain
    Given a LangChain chat model over a Gemini actor in <mode> mode
    When the model with a lookup tool is asked "[[emulator:tool:lookup]] Where is order 42?"
    Then the model calls the lookup tool
    When the tool's result is sent back with the conversation
    Then the final answer quotes the tool's result
    And the emulated Gemini API answered <live calls> generateContent call(s) live

    Examples:
      | mode  | live calls |
      | live  | 2          |
      | batch | 0          |

  Scenario Outline: with_structured_output gives an instance of the schema
    Given a LangChain chat model over a Gemini actor in <mode> mode
    When the model's structured output for a verdict is asked "Classify: arrived broken."
    Then the answer is a verdict
    And the emulated Gemini API answered <live calls> generateContent call(s) live

    Examples:
      | mode  | live calls |
      | live  | 1          |
      | batch | 0          |
