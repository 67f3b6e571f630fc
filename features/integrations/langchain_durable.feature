@integration @langchain
Feature: A LangChain tool-calling agent made durable: its model calls batch turns, its tools run once
  As a developer whose agents are written with LangChain's tool-calling chat models
  I want to run such an agent so that it parks while a model call's batch is out and cron resumes it
  So that a process killed anywhere never runs a tool twice, and an agent that never ends still stops

  The agents are in `lowtide_durable_helper` (features/plugins): `helper`, a `DurableToolAgent` with a `weather` tool
  (a LangChain `@tool`) and `post_note` (a plain async function), whose side effects append a line to a file
  ("weather", "post_note"); `clerk`, whose `lookup` tool fails; `hasty`, allowed one turn. The emulated
  Anthropic API is on a loopback socket and ends batches after 0.2 seconds; its model calls the tool a prompt or a
  tool's result names: helper's model calls weather, then post_note, then answers. The processes killed are real ones
  (each imports the agent by its reference and replays the journal before it dies); the resumes between them run in
  this process, through what `lowtide agents resume --once` runs.

  Background:
    Given the durable LangChain agents reach the emulated Anthropic API on a loopback socket

  Scenario: A run parks on each model call, runs each tool once and ends with the model's answer
    When the durable LangChain agent "helper" is started as the run "l-1"
    Then the LangChain run "l-1" stands parked
    When the LangChain runs are resumed in this process until the run "l-1" is finished
    Then the LangChain run "l-1" finished with the text "Emulated reply"
    And the LangChain tools' side effects are exactly weather, post_note
    And the LangChain run "l-1"'s journal holds turn, step, turn, step, turn, each done once, the steps named tool weather, tool post_note
    And the model's last request in the emulator carried the tool result "Posted."
    And the emulator was sent 3 requests, none of them twice

  Scenario: `lowtide agents resume --once` killed after a tool's result is stored, then inside a tool: each tool once
    When the durable LangChain agent "helper" is started as the run "l-2"
    And the LangChain run "l-2" has its batch ended
    And `lowtide agents resume --once` runs in a new process, with `LOWTIDE_CRASHPOINT=agent-after-step` set to kill it
    Then the LangChain tools' side effects are exactly weather
    When the LangChain runs are resumed in this process until the run "l-2" is parked
    And the LangChain run "l-2" has its batch ended
    And `lowtide agents resume --once` runs in a new process, with `DURABLE_HELPER_DIE_IN=post_note` set to kill it
    And the LangChain runs are resumed in this process until the run "l-2" is in-doubt
    Then the LangChain run "l-2" in-doubt with an error naming "langchain:tool post_note"
    And the LangChain tools' side effects are exactly weather
    When the LangChain run "l-2" is retried in this process
    And the LangChain runs are resumed in this process until the run "l-2" is finished
    Then the LangChain tools' side effects are exactly weather, post_note
    And the emulator was sent 3 requests, none of them twice

  Scenario: A tool's error is told to the model once, and an agent that only calls tools fails after its last turn
    When the durable LangChain agent "clerk" is started as the run "c-1"
    And the LangChain runs are resumed in this process until the run "c-1" is finished
    Then the model's last request in the emulator carried the tool error "ValueError: the order service is down"
    And the LangChain tools' side effects are exactly lookup
    When the durable LangChain agent "hasty" is started as the run "h-1"
    And the LangChain runs are resumed in this process until the run "h-1" is failed
    Then the LangChain run "h-1" failed with an error naming "asked for tools in each of its 1 turns"
    And the LangChain tools' side effects are exactly lookup, weather
