@integration @pydantic_ai
Feature: A pydantic-ai agent over a Groq, Together AI, Mistral, Azure OpenAI, Bedrock or Vertex AI actor
  As a developer whose agents are written with pydantic-ai, whatever provider serves them
  I want to give an agent a lowtide actor of any provider as its model
  So that the agent works as it does over Anthropic, the adapter knowing nothing of the provider

  Each row's actor builds its provider's official SDK client (groq, together, mistralai, openai's AsyncAzureOpenAI,
  boto3, google-genai with vertexai=True, anthropic's AnthropicVertex for Claude on Vertex AI) from its base URL, the
  emulator on a loopback socket, and the key in the environment, as a user's program does; the emulator says which API
  answered, and how many batches that API created.

  Background:
    Given every provider's API emulated on a loopback socket, ending batches after 0.2 seconds

  Scenario Outline: A plain text answer from <provider> in <mode> mode
    Given a plain agent over a "<provider>" actor in <mode> mode
    When the agent is asked "Where does the tide turn?"
    Then the agent's output quotes "Where does the tide turn?"
    And the run made 1 request, each answered in <mode> mode
    And only the emulated <provider> API was called, and it created <batches> batch(es)

    Examples:
      | provider     | mode  | batches |
      | groq         | live  | 0       |
      | groq         | batch | 1       |
      | together     | live  | 0       |
      | together     | batch | 1       |
      | mistral      | live  | 0       |
      | mistral      | batch | 1       |
      | azure_openai | live  | 0       |
      | azure_openai | batch | 1       |
      | bedrock      | live  | 0       |
      | bedrock      | batch | 1       |
      | vertex       | live  | 0       |
      | vertex       | batch | 1       |
      | vertex_claude | live  | 0       |
      | vertex_claude | batch | 1       |

  Scenario Outline: A tool call round trip with <provider> in <mode> mode, and the structured output the tool's result asks for
    Given a forecast agent with a weather tool over a "<provider>" actor in <mode> mode
    When the agent is asked "What is the weather in Paris?"
    Then the agent's output is a forecast
    And the weather tool was called once
    And the run made 2 requests, each answered in <mode> mode
    And the run's cost is the sum of its responses' costs, at <mode> prices
    And only the emulated <provider> API was called, and it created <batches> batch(es)

    Examples:
      | provider     | mode  | batches |
      | groq         | live  | 0       |
      | groq         | batch | 2       |
      | together     | live  | 0       |
      | together     | batch | 2       |
      | mistral      | live  | 0       |
      | mistral      | batch | 2       |
      | azure_openai | live  | 0       |
      | azure_openai | batch | 2       |
      | bedrock      | live  | 0       |
      | bedrock      | batch | 2       |
      | vertex_claude | live  | 0       |
      | vertex_claude | batch | 2       |

  Scenario Outline: <output> structured output from <provider> in <mode> mode
    Given a forecast agent with <output> output over a "<provider>" actor in <mode> mode
    When the agent is asked "Forecast for Oslo"
    Then the agent's output is a forecast
    And the run made 1 request, each answered in <mode> mode
    And only the emulated <provider> API was called, and it created <batches> batch(es)

    Examples:
      | provider     | output   | mode  | batches |
      | groq         | native   | live  | 0       |
      | groq         | native   | batch | 1       |
      | groq         | prompted | batch | 1       |
      | together     | native   | live  | 0       |
      | together     | native   | batch | 1       |
      | together     | prompted | batch | 1       |
      | mistral      | native   | live  | 0       |
      | mistral      | native   | batch | 1       |
      | mistral      | prompted | batch | 1       |
      | azure_openai | native   | live  | 0       |
      | azure_openai | native   | batch | 1       |
      | azure_openai | prompted | batch | 1       |
      | bedrock      | native   | live  | 0       |
      | bedrock      | native   | batch | 1       |
      | bedrock      | prompted | batch | 1       |

  Scenario Outline: <provider>'s rate limit reaches the agent as pydantic-ai's, its cause lowtide's
    Given the API answers the next 5 calls to <route> with status 429
    And the actor retries each kind of live error once
    And a plain agent over a "<provider>" actor in live mode
    When the agent is asked "Hello"
    Then the run fails with pydantic-ai's ModelRateLimitError (HTTP 429)
    And the error's cause is lowtide's RateLimitError

    Examples:
      | provider     | route                               |
      | groq         | groq.chat.completions.create        |
      | together     | together.chat.completions.create    |
      | mistral      | mistral.chat.completions            |
      | azure_openai | azure_openai.chat.completions.create |
      | bedrock      | bedrock.converse                    |
      | vertex_claude | vertex.claude.raw_predict           |
