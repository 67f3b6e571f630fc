Feature: An OpenAI-compatible provider of another package, reached through the openai SDK
  As a developer adding a provider whose API speaks OpenAI's Chat Completions but has no SDK of its own
  I want to build it on lowtide's OpenAI-compatible base with the official openai SDK at its base URL
  So that it answers as the built-in dialects do (Groq's, Together's), with no change to lowtide

  Scenario: A live call through a dialect plugin on the openai SDK is answered
    Given an emulated OpenAI API
    And an empty provider registry
    And the entry point "tideway = lowtide_tideway_plugin:register" is loaded into the registry
    And an OpenAI actor "ebb" with:
      """
      provider: tideway
      """
    When the actor is asked "Is the harbour open?"
    Then the answer is the emulated reply to "Is the harbour open?"
    And the response has these fields:
      | field    | value   |
      | provider | tideway |
      | mode     | live    |
