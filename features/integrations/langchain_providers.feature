@integration @langchain
Feature: A LangChain chat model over a Groq, Together AI, Mistral, Azure OpenAI, Bedrock or Vertex AI actor
  As a developer whose chains are written with LangChain, whatever provider serves them
  I want a chat model backed by a lowtide actor of any provider
  So that a chain works as it does over Anthropic, the adapter knowing nothing of the provider

  Each row's actor builds its provider's official SDK client (groq, together, mistralai, openai's AsyncAzureOpenAI,
  boto3, google-genai with vertexai=True, anthropic's AnthropicVertex for Claude on Vertex AI) from its base URL, the
  emulator on a loopback socket, and the key in the environment, as a user's program does; the emulator says which API
  answered, and how many batches that API created.

  Background:
    Given every provider's API emulated on a loopback socket, ending batches after 0.2 seconds

  Scenario Outline: invoke: a plain text answer from <provider> in <mode> mode, with its usage and cost
    Given a LangChain chat model over a "<provider>" actor in <mode> mode
    When the model is invoked with just "Where does the tide turn?"
    Then the answer quotes "Where does the tide turn?"
    And the answer came in <mode> mode, with its usage and cost
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

  Scenario Outline: batch from a program without an event loop: 20 prompts to <provider> are one batch
    Given a LangChain chat model over a "<provider>" actor in batch mode
    When the model is given 20 prompts with batch
    Then 20 answers come back, each quoting its own prompt, in order
    And every answer came in the same batch, at batch prices
    And only the emulated <provider> API was called, and it created 1 batch(es)

    Examples:
      | provider     |
      | groq         |
      | together     |
      | mistral      |
      | azure_openai |
      | bedrock      |

  Scenario Outline: bind_tools: a tool-calling chain with <provider> in <mode> mode
    Given a LangChain chat model over a "<provider>" actor in <mode> mode
    When the model with a lookup tool is asked "[[emulator:tool:lookup]] Where is order 42?"
    Then the model calls the lookup tool
    When the tool's result is sent back with the conversation
    Then the final answer quotes the tool's result
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

  Scenario Outline: with_structured_output from <provider> in <mode> mode gives an instance of the schema
    Given a LangChain chat model over a "<provider>" actor in <mode> mode
    When the model's structured output for a verdict is asked "Classify: arrived broken."
    Then the answer is a verdict
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
