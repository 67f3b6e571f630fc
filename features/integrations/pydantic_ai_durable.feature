@integration @pydantic_ai
Feature: A pydantic-ai agent made durable: its requests batch turns, its tools run once, its approvals wait on a person
  As a developer whose agents are written with pydantic-ai
  I want to wrap an unchanged agent so that its run parks while a request's batch is out and cron resumes it
  So that a process killed anywhere never runs a tool twice, and a tool that needs approval waits for a person

  The agent is `lowtide_durable_forecast.forecast` (features/plugins): a pydantic-ai `Agent` with a `weather` tool and
  a `post_note` tool declared `requires_approval=True`, whose side effects append a line to a file ("weather",
  "post_note <its text>"), wrapped in `DurableAgent`. The emulated Anthropic API is on a loopback socket and ends
  batches after 0.2 seconds; its model calls weather, then post_note, then gives the forecast: three requests a run.
  In the first, the weather tool asks the model to call it again (`ModelRetry`) the first time: journaled, so that
  each replay raises it again rather than run the tool. The processes killed are real ones (each imports the agent by its reference and replays the journal before it
  dies); the resumes between them run in this process, through what `lowtide agents resume --once` runs.

  Background:
    Given the durable forecast agent reaches the emulated Anthropic API on a loopback socket

  Scenario: A run parks on each request, waits on a person for the tool that needs approval, and runs each tool once
    Given the weather tool asks the model to call it again the first time
    When the durable forecast agent is started as the run "d-1"
    Then the run "d-1" stands parked
    When the agent runs are resumed in this process until the run "d-1" is waiting-on-person
    Then the run "d-1" asks a person "Run the tool post_note?"
    And the tools' side effects are exactly weather retry, weather
    When `lowtide agents approve d-1 --result '{"text": "Edited by a person"}'` runs here
    And the agent runs are resumed in this process until the run "d-1" is finished
    Then the run "d-1" finished with a forecast
    And the tools' side effects are exactly weather retry, weather, post_note Edited by a person
    And the run "d-1"'s journal holds turn, step, turn, step, turn, person, step, turn
    And the emulator was sent 4 requests, none of them twice

  Scenario: A denied tool never runs, and the model is told why
    When the durable forecast agent is started as the run "d-2"
    And the agent runs are resumed in this process until the run "d-2" is waiting-on-person
    And `lowtide agents approve d-2 --deny --result '"Not today. [[emulator:tool:final_result]]"'` runs here
    And the agent runs are resumed in this process until the run "d-2" is finished
    Then the tools' side effects are exactly weather
    And the model's last request carried the tool result "Not today."
    And the emulator was sent 3 requests, none of them twice

  Scenario: A tool answered from outside the run (CallDeferred) waits on a person, who gives its result
    When the durable tides agent is started as the run "t-1"
    And the agent runs are resumed in this process until the run "t-1" is waiting-on-person
    Then the run "t-1" asks a person "Give the result of the tool tide_table"
    When `lowtide agents approve t-1 --result '"High water at 06:12."'` runs here
    And the agent runs are resumed in this process until the run "t-1" is finished
    Then the run "t-1" finished with the model's text
    And the model's last request carried the tool result "High water at 06:12."
    And the run "t-1"'s journal holds turn, step, person, turn
    And the emulator was sent 2 requests, none of them twice

  Scenario: `lowtide agents resume --once` killed after a tool's result is stored and inside the approved tool: every tool once
    When the durable forecast agent is started as the run "d-3"
    And the batch the run "d-3" waits on has ended
    And `lowtide agents resume --once` runs in a new process with `LOWTIDE_CRASHPOINT=agent-after-step`
    Then the new process was killed
    And the tools' side effects are exactly weather
    When the agent runs are resumed in this process until the run "d-3" is waiting-on-person
    Then the tools' side effects are exactly weather
    When `lowtide agents approve d-3 --result '{"text": "Checked"}'` runs here
    And `lowtide agents resume --once` runs in a new process with `DURABLE_FORECAST_DIE_IN=post_note`
    Then the new process was killed
    When the agent runs are resumed in this process until the run "d-3" is in-doubt
    Then the run "d-3" stands in-doubt, its error naming "pydantic-ai:tool post_note"
    When the run "d-3" is retried in this process
    And the agent runs are resumed in this process until the run "d-3" is finished
    Then the run "d-3" finished with a forecast
    And the tools' side effects are exactly weather, post_note Checked
    And the emulator was sent 3 requests, none of them twice

  Scenario: A run's deps, message history and model settings are journaled: a resume in a new process sees the same
    When the durable harbour agent is started as the run "h-1" with the deps {"port": "Brest"}, a message history and the model settings {"temperature": 0.25}
    And the batch the run "h-1" waits on has ended
    And `lowtide agents resume --once` runs in a new process
    Then the new process ended well
    And the tools' side effects are exactly tide_for Brest
    And each of the 2 requests the emulator was sent carried the message history and the temperature 0.25
    When the agent runs are resumed in this process until the run "h-1" is finished
    Then the run "h-1" finished with the model's text

  Scenario: Deps a journal cannot store are made by a deps_factory, found by reference on every advance
    Given the harbour's deps_factory makes the port "Le Havre"
    When the durable harbour agent is started as the run "h-2" with its deps_factory
    And the agent runs are resumed in this process until the run "h-2" is finished
    Then the tools' side effects are exactly tide_for Le Havre
    And the run "h-2"'s input names the deps_factory "lowtide_durable_forecast:harbour_deps"

  Scenario Outline: What another process could not have again is refused before the run starts, naming it
    When the durable harbour agent is started as the run "h-3" with <given>
    Then the start was refused naming "<named>", and no run "h-3" was recorded

    Examples:
      | given                                      | named                                                  |
      | deps a journal cannot store                | deps is a lowtide_durable_forecast.Harbour             |
      | a deps_factory no other process can import | _refused_options.<locals>.nested cannot be imported by |
      | a deps_factory naming no function          | lowtide_durable_forecast:ACTORS is not a function      |
      | both deps and a deps_factory               | Give a run deps or a deps_factory, not both            |
      | model settings a journal cannot store      | model_settings['extra_body'] key 1                     |
