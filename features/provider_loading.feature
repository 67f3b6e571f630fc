Feature: A provider's SDK loads without stalling the event loop
  As a developer running many actors' calls in one event loop (a server, an agent, a bulk run)
  I want the first call of a provider to load its SDK off the event loop
  So that importing one provider's SDK (seconds on a loaded machine) never holds up every other task

  Scenario: Another task keeps running while the first call of a provider imports it
    # A loop that imported it would not tick for the import's 4 seconds; a loop left free ticks every 10 ms on a
    # quiet machine, and at load 22 was once seen to wait 1.8 s for a core: 3 seconds tells the two apart.
    Given a third-party provider "slowload" registered by name, whose module takes 4 seconds to import
    And a live actor of it, its quota its own
    When a task ticking every 10 milliseconds runs while the actor's first call is made
    Then the first call was answered after at least 4 seconds
    And the ticking task ticked throughout the call, never waiting more than 3 seconds between ticks

  Scenario: Concurrent first calls of an actor build its provider once
    Given a third-party provider "slowload" registered by name, whose module takes 4 seconds to import
    And a live actor of it, its quota its own
    When the actor is asked 20 prompts at once before its provider is loaded
    Then all 20 were answered
    And the actor's provider was built once
