@integration @pydantic_ai
Feature: A pydantic-ai agent over a Gemini actor
  As a developer whose agents are written with pydantic-ai and whose models are Google's
  I want to give an agent a lowtide actor of provider gemini as its model
  So that the agent works as it does over any other provider, the adapter knowing nothing of Gemini

  The emulator serves the Gemini API through the official google-genai SDK. Each scenario names the actor's mode in
  its examples: a batch mode row is one more line.

  Background:
    Given an emulated Anthropic API that ends batches after 0.2 seconds

  Scenario Outline: A plain text answer
    Given a plain agent over a Gemini actor in <mode> mode
    When the agent is asked "Where does the tide turn?"
    Then the agent's output quotes "Where does the tide turn?"
    And the run made 1 request, each answered in <mode> mode
    And the emulated Gemini API answered <live calls> generateContent call(s) live

    Examples:
      | mode  | live calls |
      | live  | 1          |
      | batch | 0          |

  Scenario Outline: A tool call round trip, and the structured output the tool's result asks for
    Given a forecast agent with a weather tool over a Gemini actor in <mode> mode
    When the agent is asked "What is the weather in Paris?"
    Then the agent's output is a forecast
    And the weather tool was called once
    And the run made 2 requests, each answered in <mode> mode
    And the run's cost is the sum of its responses' costs, at <mode> prices
    And the emulated Gemini API answered <live calls> generateContent call(s) live

    Examples:
      | mode  | live calls |
      | live  | 2          |
      | batch | 0          |

  Scenario Outline: Native and prompted structured output
    Given a forecast agent with <output> output over a Gemini actor in <mode> mode
    When the agent is asked "Forecast for Oslo"
    Then the agent's output is a forecast
    And the run made 1 request, each answered in <mode> mode
    And the emulated Gemini API answered <live calls> generateContent call(s) live

    Examples:
      | output   | mode | live calls |
      | native   | live | 1          |
      | native   | batch | 0          |
      | prompted | live | 1          |
      | prompted | batch | 0          |
