@stores
Feature: Every request is submitted exactly once
  As a developer paying for every batch request
  I want lowtide to record a batch before creating it, never to retry a create blindly, and to reconcile a create
  whose outcome it does not know against the API before sending anything again
  So that a failed or lost create neither loses my requests nor pays for them twice

  Background:
    Given an emulated Anthropic API whose batches take 120 seconds
    And the ledger is read whenever the API is called
    And an actor "planner" with:
      """
      batch_processing: batch
      batch: {poll_interval: 30, reconcile_grace: 60}
      """

  Scenario: The batch is committed to the ledger before it is created, and its API id right after
    When the actor is asked "Plan the cron move" with the key "cron"
    Then the answer is the emulated reply to "Plan the cron move"
    And when the API received the create, the ledger had committed:
      | batch state | API batch | request | request state | attempts |
      | intent      | no        | cron    | submitting    | 1        |
    And when the API received the first status check, the ledger had committed:
      | batch state      | API batch | request | request state    | attempts |
      | waiting-on-batch | yes       | cron    | waiting-on-batch | 1        |
    And the ledger holds these batches, oldest first:
      | state     | requests | API batch |
      | collected | 1        | yes       |

  Scenario: A create that failed with a server error is reconciled, then sent again once, after the grace period
    Given the API will fail the next "batches.create" call with status 500
    When the actor is asked "Plan the cron move" with the key "cron"
    Then the answer is the emulated reply to "Plan the cron move"
    And when the API was first asked for its list of batches, the ledger had committed:
      | batch state | API batch | note                                 | request | request state |
      | unknown     | no        | create outcome unknown: ServerError | cron    | submitting    |
    # Looked for at once, then every poll interval until the 60 second grace is over; then sent again.
    And the API received these calls:
      | call           | count |
      | batches.create | 2     |
      | batches.list   | 3     |
    And the second batch was recorded 60.5 seconds after the first: the grace period, then the coalescing window
    And the API committed 1 batch
    And the API was sent each of these requests once: cron
    And the ledger holds these batches, oldest first:
      | state     | requests | API batch | note                                      |
      | failed    | 1        | no        | create never reached the API (reconciled) |
      | collected | 1        | yes       |                                           |
    And the ledger holds these requests:
      | key  | state     | attempts |
      | cron | succeeded | 1        |

  Scenario: A create the API committed, whose answer was lost, is adopted from the list of batches
    Given the API will commit the next batch but drop the connection before answering
    When the actor is asked these prompts at once:
      | key     | prompt                   |
      | cron    | Plan the cron move       |
      | webhook | Plan the webhook retries |
      | flags   | Plan the flag cache      |
    Then every call was answered with the emulated reply to its prompt
    And the answers came in batches of 3
    And when the API was first asked for its list of batches, the ledger had committed:
      | batch state | API batch | note                                      | request | request state |
      | unknown     | no        | create outcome unknown: APIConnectionError | cron    | submitting    |
    And the API received these calls:
      | call           | count |
      | batches.create | 1     |
      | batches.list   | 1     |
    And the API committed 1 batch
    And the API was sent each of these requests once: cron, webhook, flags
    And the ledger holds these batches, oldest first:
      | state     | requests | API batch | note                               |
      | collected | 3        | yes       | reconciled after an unknown create |

  Scenario: A batch a program recorded, then died before creating, is looked for, then sent by the next program
    Given the ledger holds a batch of the request "cron" asking "Plan the cron move", recorded by a program that died before creating it
    When the actor is asked "Plan the cron move" with the key "cron"
    Then the answer is the emulated reply to "Plan the cron move"
    And the API received these calls:
      | call           | count |
      | batches.create | 1     |
      | batches.list   | 3     |
    And the API was sent each of these requests once: cron
    And the ledger holds these batches, oldest first:
      | state     | requests | API batch | note                                      |
      | failed    | 1        | no        | create never reached the API (reconciled) |
      | collected | 1        | yes       |                                           |

  Scenario: A batch the API created for a program that died before recording its id is adopted by lowtide collect
    Given the ledger holds a batch of the request "cron" asking "Plan the cron move", recorded by a program that died once the API had created it
    When 200 more seconds pass
    And lowtide collects the ended batches
    Then lowtide status shows these tickets:
      | key  | state     | batch | attempts |
      | cron | collected | yes   | 1        |
    And the ledger holds these batches, oldest first:
      | state     | requests | API batch | note                               |
      | collected | 1        | yes       | reconciled after an unknown create |
    When the actor waits for the result of "cron"
    Then the answer is the emulated reply to "Plan the cron move"
    And the API received these calls:
      | call           | count |
      | batches.create | 1     |
      | batches.list   | 1     |

  Scenario Outline: A create the API refused outright with <status> is retried at once, and makes one batch
    Given the API will fail the next "batches.create" call with status <status> and retry-after 5
    When the actor is asked "Plan the cron move" with the key "cron"
    Then the answer is the emulated reply to "Plan the cron move"
    And the API received these calls:
      | call           | count |
      | batches.create | 2     |
      | batches.list   | 0     |
    And the API committed 1 batch
    And the ledger holds these batches, oldest first:
      | state     | requests | API batch |
      | collected | 1        | yes       |

    Examples:
      | status |
      | 429    |
      | 529    |

  Scenario: A create the API refused fails the call; nothing was sent, and the same key can be asked again
    Given the API will fail the next "batches.create" call with status 400
    When the actor is asked "Plan the cron move" with the key "cron"
    Then an InvalidRequestError is raised
    And the ledger holds these batches, oldest first:
      | state  | requests | API batch |
      | failed | 1        | no        |
    And the ledger holds these requests:
      | key  | state   | attempts |
      | cron | pending | 0        |
    When the actor is asked "Plan the cron move" with the key "cron"
    Then the answer is the emulated reply to "Plan the cron move"
    And the API committed 1 batch
    And the ledger holds these requests:
      | key  | state     | attempts |
      | cron | succeeded | 1        |

  # The Message Batches API shows a batch's custom ids only once it has ended: adopted as the only candidate, the other
  # client's batch is found out by its results, which name no request of this ledger. It is kept apart (never a
  # candidate again, nothing of it stored or counted), and the intent is reconciled again: no batch of its own is
  # listed, so after the grace period its request is sent again, once, its attempt not counted twice.
  Scenario: Results of a batch that holds none of the requests are not attached to them
    Given the API will fail the next "batches.create" call with status 500
    # While lowtide looks for its batch, someone else's one-request batch appears: it looks like the lost create.
    And another client creates a batch asking "Their question" as lowtide first lists the batches
    When the actor is asked "Plan the cron move" with the key "cron"
    Then the answer is the emulated reply to "Plan the cron move"
    And the answer did not come from the other client's batch
    And the API received these calls:
      | call           | count |
      | batches.create | 3     |
    And the ledger holds these requests:
      | key  | state     | attempts |
      | cron | succeeded | 1        |
    And the ledger holds these batches, oldest first:
      | state     | requests | API batch | note                                                     |
      | failed    | 1        | no        | create never reached the API (reconciled)                |
      | failed    | 0        | yes       | not this ledger's: it held none of this ledger's requests |
      | collected | 1        | yes       |                                                          |
    And the ledger counts nothing of the other client's batch

  Scenario: A result naming a request the batch did not hold is attached to none, and the one it replaced fails
    Given the API's results will name the request "tide-2" "tide-9" instead
    When the actor is asked these prompts at once:
      | key    | prompt             |
      | tide-1 | When is high tide? |
      | tide-2 | When is low tide?  |
    Then the answer to "tide-1" came from the batch that holds exactly "tide-1, tide-2"
    And the call for "tide-2" failed with a BatchRequestError saying "ended without a result for request tide-2_"
    And the ledger holds these requests:
      | key    | state     | attempts | error             |
      | tide-1 | succeeded | 1        |                   |
      | tide-2 | failed    | 1        | BatchRequestError |
    When the API's call counts are noted
    And the actor is asked "When is low tide?" with the key "tide-2"
    Then a BatchRequestError is raised
    And the error message contains "ended without a result for request tide-2_"
    And the API received no calls since they were noted
