@integration @pydantic_ai
Feature: pydantic-ai's streaming with a lowtide model
  As a developer whose agents stream (run_stream, run_stream_events, agent.iter, event handlers)
  I want those agents to work unchanged over a lowtide actor, in batch and in live mode
  So that moving an agent onto batches does not mean rewriting how it reads its answers

  Background:
    Given an emulated Anthropic API that ends batches after 0.2 seconds

  Scenario Outline: run_stream's text arrives as written live (through actor.stream), whole in batch mode
    Given a plain agent over an actor in <mode> mode
    When the agent's answer to "Where does the tide go? Tell me at some length." is streamed as text deltas
    Then the streamed text is the answer quoting "Where does the tide go?", in <deltas>
    And the streamed run's usage counts 1 request with its tokens and cost
    And the emulator created <batches> batches

    Examples:
      | mode  | batches | deltas         |
      | batch | 1       | 1 delta        |
      | live  | 0       | several deltas |

  Scenario: A live actor that thinks streams its thinking as a thinking part, before the text, kept signed
    Given a plain agent over a live actor that thinks
    When the agent's stream of "Where does the tide go? Tell me at some length." is read event by event
    Then a thinking part started before the text part, and its deltas joined are the answer's thinking
    And the answer's thinking is signed by the actor's provider, so that it goes back to it on the next turn

  Scenario: stream_output of an agent with a tool gives the structured answer after the tool's call
    Given a forecast agent with a weather tool over an actor in batch mode
    When the agent's output for "What is the weather in Paris?" is streamed
    Then the last streamed output is a forecast
    And the weather tool was called once
    And the emulator created 2 batches

  Scenario Outline: run_stream_events and an event handler see the tool call, its result and the final answer
    Given a forecast agent with a weather tool over an actor in <mode> mode
    When the agent's events for "What is the weather in Oslo?" are read with <how>
    Then the events are a weather tool call for "Oslo", its result, and a final result that is a forecast
    And the weather tool was called once

    Examples:
      | mode  | how                     |
      | batch | run_stream_events       |
      | live  | an event stream handler |
      | batch | agent.iter              |

  Scenario: An actor used from a new event loop gets clients of that loop, and closing it after its loop ended logs nothing
    Given a plain agent over an Anthropic actor in batch mode, built from the emulator's address on a loopback socket
    When the agent is run with run_sync, then with asyncio.run, and its actor closed with asyncio.run
    Then both runs' outputs quote their prompts
    And the emulator created 2 batches and listed none
    And nothing was logged at WARNING or above, nor any task's unretrieved exception
