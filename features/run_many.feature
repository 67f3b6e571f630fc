@stores
Feature: run_many goes through the ledger: several calls at once, each paid for once
  As a developer who hands lowtide a list of prompts at once
  I want run_many to record every request in the ledger under its key, as run does, with a budget for the whole call
  So that asking again never pays again, and a list and single calls made in the same moment share one batch

  Background:
    Given an emulated Anthropic API whose batches take 120 seconds
    And an actor "planner" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """

  Scenario: The same run_many twice, the second time from another program on the ledger, creates each request once
    When the actor runs "Plan A, Plan B" with run_many
    And a new program's actor "planner" runs "Plan A, Plan B" with run_many
    Then both run_many calls got the emulated replies to "Plan A, Plan B", in order
    And the API created each of the 2 requests exactly once, in 1 batch
    And the ledger holds 2 requests, whose keys start with "auto-"

  Scenario: Two programs asking the same run_many at the same moment create each request once
    When the actor and a new program's actor "planner" each run "Plan A, Plan B" with run_many, at once
    Then both run_many calls got the emulated replies to "Plan A, Plan B", in order
    And the API created each of the 2 requests exactly once, in 1 batch

  Scenario: run_many and run calls made in the same moment travel in one batch
    When at once, the actor runs "Plan A, Plan B" with run_many and is asked "Plan C" and "Plan D"
    Then the run_many call got the emulated replies to "Plan A, Plan B", in order
    And the single calls got the emulated replies to "Plan C, Plan D"
    And the API created each of the 4 requests exactly once, in 1 batch

  Scenario: Keys given to run_many name the requests in the ledger; asked again, nothing is sent again
    When the actor runs "Plan A, Plan B" with run_many and the keys ["plan-a", None]
    Then the run_many call got the emulated replies to "Plan A, Plan B", in order
    And the ledger holds "Plan A" under the key "plan-a", and "Plan B" under a key derived from it
    And the answer to "Plan A" carries the custom id the ledger gave the key "plan-a"
    When the API's call counts are noted
    And the actor runs "Plan A, Plan B" with run_many and the keys ["plan-a", None]
    Then the run_many call got the same answers as the first time
    And the API received no calls since they were noted

  Scenario Outline: Keys that cannot name the call's requests are refused before anything is recorded or sent
    When the actor runs "Plan A, Plan B" with run_many and the keys <keys>
    Then a ConfigurationError is raised
    And the error message is:
      """
      <message>
      """
    And the error names the field "<field>"
    And the API received no calls at all
    And the ledger holds no request

    Examples:
      | keys             | field | message                                                                            |
      | ["plan-a"]       | keys  | keys: 1 key(s) for 2 request(s); give one key (or None) per request.               |
      | ["twin", "twin"] | keys  | keys: requests 0 and 1 have the same key 'twin' but differ; a key names one request. |
      | ["plan-a", ""]   | key   | key: a key must be a non-empty string naming the call (got str '').                |
      | "ab"             | keys  | keys: give a list of keys, one (or None) per request, not a string.                |

  Scenario: A key the ledger holds for another request is refused before anything of the call is sent
    When the actor is asked "Plan A" with the key "plan"
    And the API's call counts are noted
    And the actor runs "Plan B, Plan C" with run_many and the keys ["plan", None]
    Then a ConfigurationError is raised
    And the error message contains "Key 'plan' already names a different request in the ledger"
    And the API received no calls since they were noted
    And the ledger holds these requests:
      | key  | state     | prompt |
      | plan | succeeded | Plan A |

  Scenario: A ledger that cannot be read fails run_many saying so, and nothing reaches the API
    Given the ledger cannot be read for requests
    When the actor runs "Plan A, Plan B" with run_many
    Then an InternalError is raised
    And the error message contains "while reading the ledger"
    And the API received no calls at all

  Scenario: The same request twice in one call is asked once, and both get its answer
    When the actor runs "Plan A, Plan A" with run_many
    Then the run_many call got the emulated replies to "Plan A, Plan A", in order
    And the API created each of the 1 requests exactly once, in 1 batch

  Scenario: The call's budget takes its requests together: over it, nothing is recorded or sent
    When the actor runs "Plan A, Plan B, Plan C" with run_many and a budget of 2.5 times one request's worst case
    Then a BudgetExceededError is raised
    And the error message contains "Budget exceeded for this call of run_many to actor 'planner': its 3 requests could together cost up to $"
    And the error message contains "Nothing was sent."
    And the API was only asked about the model
    And the ledger holds no request
    When the actor runs "Plan A, Plan B" with run_many and a budget of 2.5 times one request's worst case
    Then the run_many call got the emulated replies to "Plan A, Plan B", in order

  Scenario: The actor's budget counts what it has committed, and takes run_many's requests together
    Given an actor "thrifty" in batch mode whose max_cost_usd is 2.5 times one request's worst case
    When the actor runs "Plan A, Plan B, Plan C" with run_many
    Then a BudgetExceededError is raised
    And the error message contains "Budget exceeded for actor 'thrifty': its 3 requests could together cost up to $"
    And the ledger holds no request
    # Parked by a program that then ended, its batch unanswered: its worst case is committed.
    When the actor parks "Plan D" with the key "plan-d", in a program that then ends
    And the actor runs "Plan A, Plan B" with run_many
    Then a BudgetExceededError is raised
    And the error message contains "Budget exceeded for actor 'thrifty': its 2 requests could together cost up to $"
    And the ledger holds these requests:
      | key    | state            | prompt |
      | plan-d | waiting-on-batch | Plan D |
    When the actor runs "Plan A" with run_many
    Then the run_many call got the emulated replies to "Plan A", in order

  Scenario: A batch of answers and failures comes back in input order, each failure the request's own
    Given an actor "nightly" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30, max_attempts: 1}
      """
    When the actor runs "Good morning, [[emulator:errored]] Bad request, [[emulator:expired]] Too late, Good night" with run_many
    Then the run_many outcomes are, in order:
      | outcome             | saying                                             |
      | reply               | Good morning                                       |
      | BatchRequestErrored | errored: invalid_request_error: Emulated           |
      | BatchRequestExpired | expired before it was processed (24 h limit).      |
      | reply               | Good night                                         |
    And the API created each of the 4 requests exactly once, in 1 batch
    When the API's call counts are noted
    And the actor runs "Good morning, [[emulator:errored]] Bad request, [[emulator:expired]] Too late, Good night" with run_many
    Then the run_many outcomes are, in order:
      | outcome             | saying                                             |
      | reply               | Good morning                                       |
      | BatchRequestErrored | errored: invalid_request_error: Emulated           |
      | BatchRequestExpired | expired before it was processed (24 h limit).      |
      | reply               | Good night                                         |
    And the API received no calls since they were noted

  Scenario: A batch that outlives max_wait is raised once every request has settled; the same call collects it later
    Given an actor "patient" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30, max_wait: 60, on_timeout: leave}
      """
    When the actor runs "Tide at the north pier?, Tide at the south pier?" with run_many
    Then a BatchTimeoutError is raised
    When 60 more seconds pass
    And the actor runs "Tide at the north pier?, Tide at the south pier?" with run_many
    Then the run_many call got the emulated replies to "Tide at the north pier?, Tide at the south pier?", in order
    And the API created each of the 2 requests exactly once, in 1 batch

  Scenario: An empty list is answered with an empty list, and nothing is sent
    When the actor runs an empty list with run_many
    Then the run_many call got no outcomes
    And the API received no calls at all

  Scenario: In live mode, each request is its own live call, in input order, and one call's failure is its own
    Given an actor "chatter" in live mode
    And the API will fail the next "messages.create" call with status 400
    When the actor runs "One, Two, Three" with run_many and the keys ["one", None, "three"]
    Then 2 of the run_many outcomes are the emulated replies to their prompts, and 1 is an InvalidRequestError
    And the API received these calls:
      | call            | count |
      | messages.create | 3     |
      | batches.create  | 0     |
    And the ledger holds no request

  Scenario: In live mode, the call's budget takes its requests together, at live prices: over it, nothing is sent
    Given an actor "chatter" in live mode
    When the actor runs "One, Two, Three" with run_many and a budget of 2.5 times one request's worst case
    Then a BudgetExceededError is raised
    And the error message contains "its 3 requests could together cost up to $"
    And the API was only asked about the model
