@integration @langchain
Feature: LangChain's streaming with a lowtide chat model
  As a developer whose chains stream (stream, astream, astream_events)
  I want them to work unchanged over a lowtide actor, in batch and in live mode
  So that moving a chain onto batches does not mean rewriting how it reads its answers

  Background:
    Given an emulated Anthropic API that ends batches after 0.2 seconds

  Scenario: In batch mode, stream gives the finished answer as one last chunk, its usage on it
    Given a LangChain chat model over an actor in batch mode
    When the model's answer to "Where does the tide go?" is read with stream
    Then 1 AIMessageChunk came, the last, quoting "Where does the tide go?"
    And the last chunk carries the answer's usage, its batch mode and its cost
    And the emulator created 1 batches

  Scenario Outline: Live, <how> gives the answer token by token through actor.stream, its usage on the last chunk
    Given a LangChain chat model over an actor in live mode
    When the model's answer to "Where does the tide go? Tell me at some length." is read with <how>
    Then several AIMessageChunks came, the text before the last, adding up to an answer quoting "Where does the tide go?"
    And the last chunk carries the answer's usage, its live mode and its cost
    And the emulator created 0 batches

    Examples:
      | how     |
      | astream |
      | stream  |

  Scenario Outline: A streamed tool call adds up to the tool call, in <mode> mode
    Given a LangChain chat model over an actor in <mode> mode
    When the model with a lookup tool streams its answer to "[[emulator:tool:lookup]] Where is order 42?"
    Then the chunks added up call the lookup tool with arguments that are a JSON object
    And the emulator created <batches> batches

    Examples:
      | mode  | batches |
      | batch | 1       |
      | live  | 0       |

  Scenario: astream_events tells the chunk as it streams and the message at the end
    Given a LangChain chat model over an actor in batch mode
    When the model's events for "Tell me of the harbour" are read with astream_events
    Then an on_chat_model_stream event carried a chunk quoting "Tell me of the harbour"
    And the on_chat_model_end event's message is the same answer, with its usage

  Scenario: LangSmith's standard parameters name the actor's provider and model
    Given a LangChain chat model over an actor in batch mode
    Then its standard parameters for a call with stop "END" are provider "anthropic", model "claude-sonnet-5-5", type "chat", max tokens 1024, stop "END"

  Scenario Outline: An actor that thinks gives its thinking as LangChain's reasoning blocks, before the text, in <mode> mode with <how>
    Given a LangChain chat model over an actor that thinks in <mode> mode
    When the model's answer to "Where does the tide go? Tell me at some length." is read with <how>
    Then the answer's content is a signed reasoning block, then a text block quoting "Where does the tide go?"
    And the answer's reasoning goes back, signed, as thinking when the conversation continues

    Examples:
      | mode  | how     |
      | batch | invoke  |
      | batch | stream  |
      | live  | invoke  |
      | live  | astream |

  Scenario Outline: A model left unclosed after <how> (<provider>, live) lets its actor's connections go on its own loop: a later event loop logs nothing
    Given a script's LangChain chat model over its own <provider> actor in live mode, on the emulator's loopback socket
    When a script reads the answer to "Where does the tide go?" with <how>, drops model and actor unclosed, then runs a loop of its own
    Then the answer read quoted "Where does the tide go?"
    And nothing was logged at WARNING or above, nor a task destroyed while pending, nor an unretrieved exception

    Examples:
      | provider  | how                          |
      | openai    | stream                       |
      | openai    | stream_events v3             |
      | openai    | astream in asyncio.run       |
      | anthropic | astream in asyncio.run       |

  Scenario: A copy of a model (pydantic's model_copy) answers from a script after the original was dropped unclosed
    Given a script's LangChain chat model over its own anthropic actor in live mode, on the emulator's loopback socket
    When a script invokes the model with "First tide", drops it for a copy of it, then invokes the copy with "Second tide"
    Then the answer read quoted "Second tide"
