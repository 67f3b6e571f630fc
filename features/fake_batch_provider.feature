Feature: A fake batch provider for testing programs that use lowtide
  As a developer testing my own program, which runs its model calls through lowtide's batch mode
  I want a batch provider whose API lives in my test's memory and on my test's clock, with outcomes I script
  So that my tests cover keys, the ledger, coalescing, retries, parking and bulk runs with no network and no key

  Background:
    Given a fake batch API whose batches take 30 seconds, registered as the provider "fake"
    And a plugin actor "tester" of the provider "fake" with:
      """
      model: fake-1
      batch_processing: batch
      batch: {poll_interval: 10, coalesce_window: 0.5, reconcile_grace: 60}
      """

  Scenario: Concurrent calls are recorded under their keys, travel in one batch, and are answered once
    When 4 calls ask "question {i}" with the keys "k-{i}" at once
    Then the fake API answered each of the 4 calls with its question
    And the fake API created each of the keys "k-1, k-2, k-3, k-4" once, in 1 batch
    And the ledger holds these requests:
      | key | state     |
      | k-1 | succeeded |
      | k-2 | succeeded |
      | k-3 | succeeded |
      | k-4 | succeeded |
    When a new program makes the same 4 calls
    Then the fake API answered each of the 4 calls with its question
    And the fake API created each of the keys "k-1, k-2, k-3, k-4" once, in 1 batch

  Scenario: Each request comes to what the test scripted for its key
    Given the fake API will answer "k-1" with "a scripted answer"
    And the fake API will fail "k-2" with "refused" saying "not today"
    And the fake API will end "k-3" as canceled
    And the fake API will end "k-4" as expired, 3 times
    When 5 calls ask "question {i}" with the keys "k-{i}" at once
    Then the call for "k-1" was answered "a scripted answer"
    And the call for "k-2" failed with a BatchRequestErrored saying "refused: not today"
    And the call for "k-3" failed with a BatchRequestCanceled saying "was canceled before it was processed"
    And the call for "k-4" failed with a BatchRequestExpired saying "expired before it was processed"
    And the call for "k-5" was answered "fake: question 5"
    And the ledger holds these requests:
      | key | state     |
      | k-1 | succeeded |
      | k-2 | failed    |
      | k-3 | canceled  |
      | k-4 | expired   |
      | k-5 | succeeded |

  Scenario: A request that expired, or failed with an error the provider calls retryable, travels again
    Given the fake API will end "k-1" as expired, 1 time
    And the fake API will fail "k-2" retryably with "overloaded" saying "busy now"
    When 3 calls ask "question {i}" with the keys "k-{i}" at once
    Then the fake API answered each of the 3 calls with its question
    And the fake API created the key "k-1" 2 times, "k-2" 2 times and "k-3" 1 time, in 2 batches

  Scenario Outline: A create whose answer was lost is found at the API, not sent again (<how>)
    Given the fake API <echoes> lowtide's intent id
    And the fake API will create the next batch and lose its answer
    When 3 calls ask "question {i}" with the keys "k-{i}" at once
    Then the fake API answered each of the 3 calls with its question
    And the fake API created each of the keys "k-1, k-2, k-3" once, in 1 batch
    And the ledger holds these batches, oldest first:
      | state     | requests | API batch | note                               |
      | collected | 3        | yes       | reconciled after an unknown create |

    Examples:
      | how                                   | echoes        |
      | by the intent id the API keeps        | keeps         |
      | by its size and time, then its results | does not keep |

  Scenario: A create lost on its way is sent again once the grace period has passed with no such batch
    Given the fake API will lose the next create on its way
    When 3 calls ask "question {i}" with the keys "k-{i}" at once
    Then the fake API answered each of the 3 calls with its question
    And the fake API was asked to create 2 batches and made 1
    And the ledger holds these batches, oldest first:
      | state     | requests | API batch | note                                      |
      | failed    | 3        | no        | create never reached the API (reconciled) |
      | collected | 3        | yes       |                                           |

  Scenario: A create the API refuses fails its calls, and nothing is recorded as sent
    Given the fake API will refuse the next create
    When 2 calls ask "question {i}" with the keys "k-{i}" at once
    Then the call for "k-1" failed with a InvalidRequestError saying "The fake API refused the batch."
    And the call for "k-2" failed with a InvalidRequestError saying "The fake API refused the batch."
    And the fake API was asked to create 1 batches and made 0

  Scenario: A parked call's batch moves through its phases on the test's clock; a new program collects it
    # Batches of an hour: the program's poller, on the test's clock, moves it on a few polls as the program ends.
    Given a fake batch API whose batches take 3600 seconds, registered as the provider "slow-fake"
    And a plugin actor "patient" of the provider "slow-fake" with:
      """
      model: fake-2
      batch_processing: batch
      batch: {poll_interval: 10}
      """
    When the actor parks "question 7" with the key "p-7", in a program that then ends
    Then the fake API "slow-fake" has its batch "validating"
    When 400 more seconds pass
    Then the fake API "slow-fake" has its batch "in_progress"
    When 3600 more seconds pass
    Then the fake API "slow-fake" has its batch "ended"
    When a new program's actor "patient" waits for the result of "p-7"
    Then the answer is "fake: question 7"

  Scenario: A parked call whose batch is canceled comes back canceled
    Given a fake batch API whose batches take 3600 seconds, registered as the provider "slow-fake"
    And a plugin actor "patient" of the provider "slow-fake" with:
      """
      model: fake-2
      batch_processing: batch
      batch: {poll_interval: 10}
      """
    When the actor parks "question 8" with the key "p-8", in a program that then ends
    And the test cancels the parked batch of "p-8"
    Then the fake API "slow-fake" has its batch "ended"
    When a new program's actor "patient" waits for the result of "p-8"
    Then the waiting call failed with a BatchRequestCanceled

  Scenario: A bulk run splits its inputs into the fake API's batches and keeps their order
    When the actor maps the prompts "review 1, review 2, review 3, review 4, review 5" in batches of 2
    Then the run's answers are, in order, "fake: review 1, fake: review 2, fake: review 3, fake: review 4, fake: review 5"
    And the fake API made 3 batches of 5 requests in all

  Scenario: The actor's budget is kept at the fake API's price per request
    Given a plugin actor "thrifty" of the provider "fake" with:
      """
      model: fake-1
      batch_processing: batch
      max_cost_usd: 0.0025
      """
    When 3 calls ask "question {i}" with the keys "k-{i}" at once
    Then 2 of the calls were answered and 1 failed with a BudgetExceededError
    And the fake API made 1 batches of 2 requests in all

  Scenario: A structured answer is parsed into the caller's model
    Given the fake API will answer "tide" with "{"name": "spring", "height_m": 2.5}"
    When the actor is asked for a Tide with the key "tide"
    Then the parsed answer is a Tide named "spring", 2.5 m high

  Scenario Outline: What the fake API cannot take is refused before anything is recorded or sent
    When the actor is asked for <what>
    Then it was refused with a ConfigurationError saying "<message>"
    And the fake API was asked to create 0 batches and made 0
    And the ledger holds no requests and no batches

    Examples:
      | what            | message                                                    |
      | a tool call     | tools: the fake provider 'fake' calls no tools.            |
      | an image's text | messages[0].content: the fake provider 'fake' takes text alone. |

  # Outside the ledger (`complete_many`, `lowtide.providers.run_batch`) a batch the API cannot take is refused before
  # anything is sent: the request count and size limits are the codec's (the fake's, 10,000 and 50 MB, set lower here).
  Scenario Outline: Outside the ledger, a batch the API cannot take is refused before anything is sent (<what>)
    Given the fake API takes at most 3 requests and 2 MiB a batch
    When the provider "fake" is asked, as one batch outside the ledger, for <what>
    Then it was refused with a ConfigurationError saying "<message>"
    And the fake API was asked to create 0 batches and made 0

    Examples:
      | what                                      | message                                                        |
      | no requests                               | A batch needs at least one request.                            |
      | two requests with the custom id "twin"    | custom_id 'twin' is used twice in one batch.                   |
      | 4 requests                                | 4 requests exceed the API's limit of 3 per batch.              |
      | 2 requests of 1.1 million characters each | The batch is 2.1 MiB, over the API's limit of 2 MiB; split it. |

  # The custom ids are the API's: the fake's are the request's name, `@`, then the ledger's tag (none outside it).
  Scenario: Outside the ledger, a batch that outlasts the actor's max_wait is canceled, its error naming its requests
    Given a plugin actor "hasty" of the provider "fake" with:
      """
      model: fake-1
      batch_processing: batch
      batch: {poll_interval: 10, max_wait: 20}
      """
    When the provider "fake" is asked, as one batch outside the ledger, for "one, two"
    Then it was refused with a BatchTimeoutError saying "did not end within the maximum wait of 20 s (waited 20 s); cancellation was requested."
    And the timeout names the requests "request-0@, request-1@"
    And the fake API "fake" has its batch "ended"

  Scenario: A ledger rebuild is refused for an API that cannot list its batches, saying to leave its actors out
    When a ledger rebuild surveys the fake API's account
    Then it was refused with a ConfigurationError saying "The fake backend cannot list the account's batches. A rebuild cannot tell which of its batches were the lost ledger's, so it recovers none of fake's: leave its actors out to rebuild the rest (a rerun would send their requests again)."

  Scenario: Two fake providers, under names of the test's choice, keep their batches apart
    Given a fake batch API whose batches take 60 seconds, registered as the provider "slow-fake"
    And a plugin actor "patient" of the provider "slow-fake" with:
      """
      model: fake-2
      batch_processing: batch
      """
    When "tester" asks "quick" with the key "q-1" and "patient" asks "slow" with the key "q-2", at once
    Then the call for "q-1" was answered "fake: quick"
    And the call for "q-2" was answered "fake: slow"
    And the fake API "fake" made 1 batches of 1 requests in all
    And the fake API "slow-fake" made 1 batches of 1 requests in all

  Scenario: The provider answers requests as one batch outside the ledger
    When the provider "fake" answers "one, two" as one batch, outside the ledger
    Then the answers are "fake: one, fake: two"
    And the fake API made 1 batches of 2 requests in all
    And the ledger holds no requests and no batches

  Scenario: A fake provider not made by its registration says how to make one
    When a FakeBatchProvider is built without being registered
    Then it was refused with a ConfigurationError saying "FakeBatchProvider.register(registry, api, name=...)"
