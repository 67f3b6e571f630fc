@stores
Feature: Concurrent calls travel together in one batch
  As a developer running many agent calls at the same time
  I want concurrent batch-mode calls to one API gathered for a short window and sent as one batch, polled once
  So that a burst of calls costs one create and one set of status checks, not one per call

  Background:
    Given an emulated Anthropic API whose batches take 120 seconds

  Scenario: Calls made at once travel in one batch, and one poller serves every caller
    Given an actor "planner" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """
    When the actor is asked these prompts at once:
      | prompt                         |
      | Plan the cron move             |
      | Plan the webhook retries       |
      | Plan the flag cache            |
      | Plan the column rename         |
      | Plan the nightly report upload |
    Then every call was answered with the emulated reply to its prompt
    And the answers came in batches of 5
    # One batch's worth of status checks for five callers: the create's answer is the first look, then four polls
    # while it runs. The results come from the ended batch's results_url, with no look-up of their own.
    And the API received these calls:
      | call             | count |
      | batches.create   | 1     |
      | batches.retrieve | 4     |
      | batches.results  | 1     |
    And after its 0.5 second coalescing window, the actor waited 30, 30, 30, 30 seconds

  Scenario: Two actors with the same batch settings and API client share a batch
    Given actors "planner" and "reviewer", each with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """
    When these calls are made at once:
      | actor    | prompt                   |
      | planner  | Plan the cron move       |
      | reviewer | Review the column rename |
      | planner  | Plan the webhook retries |
    Then every call was answered with the emulated reply to its prompt
    And the answers came in batches of 3
    And the API received these calls:
      | call             | count |
      | batches.create   | 1     |
      | batches.retrieve | 4     |
    And the ledger holds these requests:
      | prompt                   | actor    | state     |
      | Plan the cron move       | planner  | succeeded |
      | Plan the webhook retries | planner  | succeeded |
      | Review the column rename | reviewer | succeeded |

  Scenario: Actors whose batch settings differ send their own batches
    Given an actor "planner" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """
    And an actor "reviewer" with:
      """
      batch_processing: batch
      batch: {poll_interval: 60}
      """
    When these calls are made at once:
      | actor    | prompt                   |
      | planner  | Plan the cron move       |
      | reviewer | Review the column rename |
    Then every call was answered with the emulated reply to its prompt
    And the answers came in batches of 1, 1
    And the API received these calls:
      | call           | count |
      | batches.create | 2     |

  Scenario: The end of the window sends the batch, however small
    Given an actor "planner" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30, coalesce_window: 5}
      """
    When the actor is asked "Plan the cron move" with the key "cron"
    Then the answer is the emulated reply to "Plan the cron move"
    And the batch was recorded 5 seconds after the call
    And after its 5 second coalescing window, the actor waited 30, 30, 30, 30 seconds

  Scenario: A call made once the window has closed goes in the next batch
    Given an actor "planner" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """
    When the actor parks "Plan the cron move" with the key "cron"
    And the actor is asked "Plan the webhook retries" with the key "webhook"
    Then the answer is the emulated reply to "Plan the webhook retries"
    And the answer came from another batch than the ticket "cron"
    And the API received these calls:
      | call           | count |
      | batches.create | 2     |

  Scenario: A batch is sent early when the next request would cross the request cap
    Given an actor "planner" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30, max_batch_requests: 3}
      """
    When the actor is asked these prompts at once:
      | prompt   |
      | Step one |
      | Step two |
      | Step 3   |
      | Step 4   |
      | Step 5   |
      | Step 6   |
      | Step 7   |
    Then every call was answered with the emulated reply to its prompt
    And the answers came in batches of 3, 3, 1
    And the API received these calls:
      | call           | count |
      | batches.create | 3     |

  Scenario: A batch is sent early when the next request would cross the byte cap
    Given an actor "planner" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30, max_batch_bytes: 2048}
      """
    When the actor is asked 5 prompts of 600 characters at once
    Then every call was answered with the emulated reply to its prompt
    And the answers came in batches of 2, 2, 1
    And every batch the ledger recorded is at most 2048 bytes
    And the API received these calls:
      | call           | count |
      | batches.create | 3     |

  Scenario: The same key asked twice at once travels once, and both callers get its answer
    Given an actor "planner" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """
    When the actor is asked these prompts at once:
      | key  | prompt             |
      | cron | Plan the cron move |
      | cron | Plan the cron move |
    Then every call was answered with the emulated reply to its prompt
    And the API was sent each of these requests once: cron
    And the API received these calls:
      | call             | count |
      | batches.create   | 1     |
      | batches.retrieve | 4     |

  Scenario: A thousand calls at once, the actor's first, travel in one batch, ask the ledger about their keys together, and once answered leave nothing kept from the garbage collector
    # One thousand calls for three checks (they were three scenarios, each asking its own thousand): the batch and
    # the API's calls, the ledger's reads of their keys, and the collector's freezes while they waited.
    Given an actor "planner" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """
    And the ledger's reads of requests are counted
    And the garbage collector's freezes are counted
    When the actor is asked 1000 numbered questions at once
    # Counted reads first: the checks of the answers below read the ledger too.
    Then the ledger was asked about the calls' keys in at most 3 reads
    And every call was answered with the emulated reply to its prompt
    And the answers came in batches of 1000
    And the API received these calls:
      | call             | count |
      | batches.create   | 1     |
      | batches.retrieve | 4     |
      | batches.results  | 1     |
    And lowtide froze what was alive while the calls waited
    And the garbage collector sees every object again

  Scenario: First calls at once on a ledger that cannot be read each fail saying so, and nothing reaches the API
    Given an actor "planner" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """
    And the ledger cannot be read for requests
    When the actor is asked 3 numbered questions at once
    Then every call failed with an InternalError saying "while reading the ledger"
    And the API received no calls at all

  Scenario: An actor closed after its calls does not stop a later actor with the same settings from calling
    Given actors "planner" with their own API clients, each with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """
    When a first such actor is asked "Plan the cron move" and then closed
    And a second such actor is asked "Plan the webhook retries"
    Then the answer is the emulated reply to "Plan the webhook retries"
    And the API received these calls:
      | call           | count |
      | batches.create | 2     |

  Scenario: A batch actor made before its calls keeps what the program made until then from the garbage collector, and gives it back once its batch is collected
    Given the garbage collector's freezes are counted
    And an actor "planner" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """
    Then lowtide froze what the program made before the actor's first call
    When the actor is asked 1000 numbered questions at once
    Then every call was answered with the emulated reply to its prompt
    And the garbage collector sees every object again

  Scenario: A batch actor closed before any call gives back what it kept from the garbage collector
    Given the garbage collector's freezes are counted
    And an actor "planner" with:
      """
      batch_processing: batch
      """
    Then lowtide froze what the program made before the actor's first call
    When the actor is closed
    Then the garbage collector sees every object again

  Scenario: A program that froze objects itself for the garbage collector keeps them frozen, and lowtide freezes nothing
    Given an actor "planner" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30}
      """
    And the garbage collector's freezes are counted
    And the program froze its own objects for the garbage collector
    When the actor is asked 1000 numbered questions at once
    Then every call was answered with the emulated reply to its prompt
    And lowtide neither froze nor thawed anything
    # Counting the frozen objects walks them all (0.13 s with the SDKs loaded): once for the process, not per actor.
    When 5 more batch actors are made
    Then lowtide did not count the frozen objects again
    And lowtide neither froze nor thawed anything
