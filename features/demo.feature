Feature: The demo
  As someone trying lowtide for the first time
  I want `lowtide demo` to run a few actors' calls through the batch API of the in-process emulator
  So that I see answers, batch ids and the batch saving without an API key or a network

  Scenario: The bundled demo prints every answer, its batch, and the batch and live costs
    When the demo runs with batches that take 0 seconds
    Then the demo reports 0 failed calls
    And the demo printed these calls with their answers:
      | actor      | prompt                                                             |
      | planner    | Plan the move of our nightly report job from cron to a task queue. |
      | planner    | Plan adding retries with backoff to the payment webhook handler.   |
      | reviewer   | Review: a migration that renames the users.email column in place.  |
      | reviewer   | Review: a change that caches feature flags for ten minutes.        |
      | summarizer | Summarize why batch APIs cost half as much as live calls.          |
      | summarizer | Summarize the trade-off between latency and price for agent calls. |
    And the demo printed a batch id for each answer, in batch mode
    # The actors share their batch settings and client, so their concurrent calls travel in one batch.
    And the demo printed "6 of 6 calls answered through 1 batch(es)"
    And the demo's total batch cost is half its total live cost, and it says it saved 50%
    And the demo printed "200 of 200 reviews summarized through 4 batch(es) of at most 50, in input order"
    And the demo printed "  #0 Emulated reply to"
    And the demo printed "Summarize review 0: the harbour ferry was late."

  Scenario: The demo runs the actors of a custom file, introducing actors it has no calls for
    Given a file "crew.yaml" containing:
      """
      defaults:
        batch_processing: live
        batch: {poll_interval: 5}
      actors:
        planner: {model: claude-sonnet-5-5}
        deckhand: {model: claude-haiku-4-5}
      """
    When the demo runs with the actors of "crew.yaml"
    Then the demo reports 0 failed calls
    And the demo printed these calls with their answers:
      | actor   | prompt                                                             |
      | planner | Plan the move of our nightly report job from cron to a task queue. |
      | planner | Plan adding retries with backoff to the payment webhook handler.   |
    And the demo printed "2 of 2 calls answered through 1 batch(es)"
    And the demo printed "lowtide demo: 2 concurrent calls from 2 actors (crew.yaml)"

  Scenario: The demo leaves the user's ledger as it was, so that running it again calls the emulator again
    When the demo runs with batches that take 0 seconds
    And the demo runs with batches that take 0 seconds
    Then the demo printed "6 of 6 calls answered through 1 batch(es)"
    And the two runs of the demo printed different batch ids
    And the ledger holds no requests and no batches

  Scenario: Actors none of the demo's calls are for are asked to introduce themselves
    Given a file "crew.yaml" containing:
      """
      actors:
        - {name: deckhand, model: claude-haiku-4-5}
        - {name: pilot, model: claude-mythos-5-1}  # served, but genai-prices has no price for it
      """
    When the demo runs with the actors of "crew.yaml"
    Then the demo reports 0 failed calls
    And the demo printed these calls with their answers:
      | actor    | prompt                        |
      | deckhand | Introduce yourself, deckhand. |
      | pilot    | Introduce yourself, pilot.    |
    And the demo printed no cost for the pilot's call

  Scenario: A failed call is reported, and counted, without stopping the others
    # The model is checked before anything is sent: the calls to it fail at once, the others go on.
    Given a file "crew.yaml" containing:
      """
      actors:
        - {name: planner, model: claude-sonnet-5-5}
        - {name: reviewer, model: gpt-4o}
      """
    When the demo runs with the actors of "crew.yaml"
    Then the demo reports 2 failed calls
    And the demo printed "2 of 4 calls answered"
    And the demo printed "failed: model: the API at http://emulator.invalid has no model 'gpt-4o'"

  Scenario: `lowtide demo` runs the demo and exits with 0
    When the command "lowtide demo --processing-seconds 0" runs
    Then the command exits with 0
    And the command printed "6 of 6 calls answered"
    And the command printed "Saved $"

  Scenario: `lowtide demo` exits with 1 when a call failed
    Given a file "crew.yaml" containing:
      """
      actors:
        - {name: reviewer, model: gpt-4o}
      """
    When the command "lowtide demo --processing-seconds 0 --config crew.yaml" runs
    Then the command exits with 1
    And the command printed "0 of 2 calls answered"

  Scenario: `lowtide demo` with an invalid actors file exits with 2 and says why
    Given a file "crew.yaml" containing:
      """
      actors:
        - {name: reviewer, model: claude-haiku-4-5, temperature: 7}
      """
    When the command "lowtide demo --config crew.yaml" runs
    Then the command exits with 2
    And the command printed on stderr "lowtide: Invalid configuration for actor 'reviewer'"
    And the command printed on stderr "temperature: 7 is outside the range the Messages API takes, 0 to 1."

  Scenario: `lowtide --version` prints the version
    When the command "lowtide --version" runs
    Then the command exits with 0
    And the command printed the installed version of lowtide
