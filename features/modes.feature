Feature: Live and batch modes
  As a developer of an agent
  I want an actor's `batch_processing` setting to decide whether its calls go through the live or the batch API
  So that I can halve the price of work that can wait, without changing the code that makes the calls

  Background:
    Given an emulated Anthropic API whose batches take 60 seconds

  Scenario: An actor in live mode calls the Messages API
    Given an actor "chatter" in live mode
    When the actor is asked "What is the capital of France?"
    Then the answer is the emulated reply to "What is the capital of France?"
    And the answer came through live mode
    And the actor's provider for live mode is ClaudeProvider
    And the API received these calls:
      | call            | count |
      | messages.create | 1     |
      | batches.create  | 0     |

  Scenario: An actor in batch mode gets the same kind of answer through the Message Batches API
    Given an actor "nightly" in batch mode
    When the actor is asked "What is the capital of France?"
    Then the answer is the emulated reply to "What is the capital of France?"
    And the answer came through batch mode
    And the actor's provider for batch mode is ClaudeBatchProvider
    And the API received these calls:
      | call            | count |
      | messages.create | 0     |
      | batches.create  | 1     |
      | batches.results | 1     |

  Scenario: The mode is chosen in the configuration; live is the default
    Given an actor "plain" with:
      """
      model: claude-haiku-4-5
      """
    Then the actor resolves live mode to live mode
    When the actor is asked "Hello"
    Then the answer came through live mode

  Scenario Outline: One call overrides the configured mode, and only that call
    Given an actor "switcher" in <configured> mode
    When the actor is asked "Hello" in <override> mode
    Then the answer came through <override> mode
    When the actor is asked "Hello again"
    Then the answer came through <configured> mode
    And the API received these calls:
      | call            | count             |
      | messages.create | <live calls>      |
      | batches.create  | <batch creations> |

    Examples:
      | configured | override | live calls | batch creations |
      | live       | batch    | 1          | 1               |
      | batch      | live     | 1          | 1               |

  Scenario: An unknown mode is a clear error, raised before anything is sent
    Given an actor "switcher" in live mode
    When the actor is asked "Hello" in sometimes mode
    Then a ConfigurationError is raised
    And the error message is:
      """
      Unknown mode 'sometimes'; choose one of: live, batch.
      """
    And the error names the field "mode"
    And the API received no calls at all

  Scenario: In live mode, run_many answers each request with its own live call
    Given an actor "chatter" in live mode
    When the actor runs these prompts as one call of run_many:
      | prompt |
      | One    |
      | Two    |
      | Three  |
    Then the outcome of "request-0" is the emulated reply to "One"
    And the outcome of "request-2" is the emulated reply to "Three"
    And the API received these calls:
      | call            | count |
      | messages.create | 3     |
      | batches.create  | 0     |

  Scenario: In batch mode, run_many sends every request in one batch
    Given an actor "nightly" in batch mode
    When the actor runs these prompts as one call of run_many:
      | prompt |
      | One    |
      | Two    |
      | Three  |
    Then the outcome of "request-1" is the emulated reply to "Two"
    And all outcomes came from the same batch
    And the API received these calls:
      | call            | count |
      | messages.create | 0     |
      | batches.create  | 1     |

  Scenario: A provider that cannot batch refuses batch mode by default
    Given a provider registry with the plugin "echo = lowtide_echo_plugin:register"
    And an actor "echoer" with:
      """
      provider: echo
      batch_processing: batch
      """
    When the actor is asked "Hello"
    Then a ProviderCapabilityError is raised
    And the error message contains "Provider 'echo' does not support batch processing."
    And the error message contains "set fallback_to_live: true"

  Scenario: A provider that cannot batch answers live when the actor allows the fallback
    Given a provider registry with the plugin "echo = lowtide_echo_plugin:register"
    And an actor "echoer" with:
      """
      provider: echo
      batch_processing: batch
      fallback_to_live: true
      """
    Then the actor resolves batch mode to live mode
    When the actor is asked "Hello"
    Then the answer is "echo: Hello"
    And the answer came through live mode
    And the API received no calls at all

  Scenario: A provider's own error for one request of run_many does not fail the others
    Given a provider registry with the plugin "echo = lowtide_echo_plugin:register"
    And an actor "echoer" with:
      """
      provider: echo
      """
    When the actor runs these prompts as one call of run_many:
      | custom_id | prompt                  |
      | first     | Hello                   |
      | second    | [[echo:refuse]] Goodbye |
    Then the outcome of "first" is the answer "echo: Hello"
    And the outcome of "second" is an InvalidRequestError saying "echo refuses this prompt"

  Scenario: run_sync answers from a script without an event loop, reusing one loop for all its calls
    Given an actor "scripted" in batch mode
    When the script asks the actor "First question" with run_sync
    And the script asks the actor "Second question" with run_sync
    Then the script got the emulated replies to "First question, Second question"
    And both run_sync calls ran on the same event loop
    When the script closes the actor
    Then the actor's run_sync loop is closed

  Scenario: An actor dropped after run_sync, never closed, leaves no thread behind once it is collected
    When a script makes 3 actors, asks each "Hello" with run_sync and drops them without closing them
    Then each got the emulated reply to "Hello"
    And once they are collected no run_sync thread of theirs is left running, and their loops are closed

  Scenario: run_sync from eight threads at once on one actor answers every call, each request created once
    Given an actor "threaded" in batch mode
    When 8 threads ask the actor at once with run_sync
    Then each of the 8 threads got its own emulated reply, each request created once

  Scenario Outline: A closed actor refuses every call before anything is recorded or sent (<how>)
    Given an actor "closing" in batch mode
    When the actor is closed <how>
    Then every way of calling it raises ActorClosedError naming the actor
    And the API received no calls at all
    And the ledger holds no requests and no batches

    Examples:
      | how               |
      | by aclose()       |
      | by its async with |
      | by close()        |

  Scenario: run_sync refuses to run inside an event loop
    Given an actor "scripted" in live mode
    When the actor is asked "Hello" with run_sync from inside a running event loop
    Then an ActorError is raised
    And the error message is:
      """
      run_sync was called inside a running event loop; use `await actor.run(...)`.
      """
    And the API received no calls at all

  Scenario: Without a key or a client, the error names the environment variable to set
    Given an actor "keyless" with no API client, whose key variable "LOWTIDE_SCENARIO_KEY_7F3A" is unset
    When the actor is asked "Hello"
    Then a ConfigurationError is raised
    And the error message contains "No Anthropic API key: set the LOWTIDE_SCENARIO_KEY_7F3A environment variable"
    And the error names the field "api_key_env"
    And the API received no calls at all

  Scenario Outline: With the key in the environment, the actor builds its own client and closes it when done
    Given the environment variable "LOWTIDE_SCENARIO_KEY_7F3A" holds the API key
    And an actor "keyed" in <mode> mode, reading its key from "LOWTIDE_SCENARIO_KEY_7F3A" and given only an HTTP client
    When the actor is asked "Hello" and then closed, as an async context manager
    Then the answer is the emulated reply to "Hello"
    And the API saw the key from the environment
    And the actor's HTTP client is closed

    Examples:
      | mode  |
      | live  |
      | batch |

  Scenario: An injected client that is not an Anthropic client is refused
    Given an actor "odd" given a client that is not an Anthropic client
    When the actor is asked "Hello"
    Then a ConfigurationError is raised
    And the error message is:
      """
      client must be an anthropic.AsyncAnthropic, not object
      """
    And the error names the field "client"
