Feature: Every ledger store keeps a webhook event once, removes a cap, audits a cancel by owner, and knows how long batches took
  As an operator whose programs share a ledger, whichever store it is
  I want a provider's event recorded once however often it is delivered, a cap I remove gone, a batch's cancel
  audited once per owner and actor, the spend read from a given day, and the time batches like mine took
  So that a retried webhook never acts twice, and the audit and the spend report say what happened on every store

  Scenario Outline: An event delivered again, or replayed, is told apart from a new one (<store>)
    Given a <store> ledger store
    When the store records the "anthropic" event "evt-1" delivery "d1" about the API's batch "msgbatch_1"
    Then the store answered NEW
    When the store records the "anthropic" event "evt-1" delivery "d1" about the API's batch "msgbatch_1"
    Then the store answered REPLAYED
    When the store records the "anthropic" event "evt-1" delivery "d2" about the API's batch "msgbatch_1"
    Then the store answered REDELIVERED
    When the store records the "openai" event "evt-1" delivery "d1" about the API's batch "batch_9"
    Then the store answered NEW
    And the store has seen an event about the "anthropic" batch "msgbatch_1" and the "openai" batch "batch_9"
    And the store has seen no event about the "anthropic" batch "batch_9"

    Examples:
      | store  |
      | memory |
      | sqlite |

  Scenario Outline: A cap removed is gone; removing it again says there was none (<store>)
    Given a <store> ledger store
    And the store caps team "research" at $5 per day and project "tides" at $9 in all
    When the store removes team "research"'s cap per day
    Then the removal said the cap was there
    And the store's caps are project "tides" at $9 in all
    When the store removes team "research"'s cap per day
    Then the removal said there was no such cap

    Examples:
      | store  |
      | memory |
      | sqlite |

  Scenario Outline: Requests reserved again add nothing; a cancel releases the rest and is audited once per owner (<store>)
    Given a <store> ledger store
    When the store reserves $2 for each of "k1, k2" of team "research" and "k3" of team "ops", at 1000
    And the store reserves $2 for each of "k1, k2" of team "research", at 1000
    Then that reservation added $0
    When the store lets go of "k2" at 1100
    And the store cancels batch "b1" of "k1, k2, k3, k9" at 1200
    Then the store's audit after 1150 is a cancel of "b1" by team "research" worth $2 and by team "ops" worth $2
    And the store's spend shows nothing reserved

    Examples:
      | store  |
      | memory |
      | sqlite |

  Scenario Outline: An audit record written is read back, and the spend and audit are read from a day on (<store>)
    Given a <store> ledger store
    When the store reserves $2 for each of "old" of team "research", at 1000
    And the store reserves $3 for each of "new" of team "research", at 200000
    And the store writes an audit record of a release of "old" at 300000
    Then the store's spend from 100000 on is 1 request of team "research" with $3 reserved
    And the store's audit from 250000 on is a release of "old"

    Examples:
      | store  |
      | memory |
      | sqlite |

  Scenario Outline: How long a provider's batches took is read newest first, of the endpoint and size asked (<store>)
    Given a <store> ledger store
    And the requests k1, k2, k3, k4, k5 are claimed by "worker-1" until 9000 at 0
    And the batch "b1" of "anthropic" at "/v1/messages" is recorded holding k1 at 10
    And "b1" is created as the API's batch "api-1" at 100
    And the batch "b2" of "anthropic" at "/v1/messages" is recorded holding k2, k3 at 200
    And "b2" is created as the API's batch "api-2" at 300
    And the batch "b3" of "openai" at "/v1/messages" is recorded holding k4 at 200
    And "b3" is created as the API's batch "api-3" at 300
    And the batch "b4" of "anthropic" at "/v1/messages" is recorded holding k5 at 200
    And "b4" is created as the API's batch "api-4" at 300
    When the batch "b1" ends at 160 with 1 succeeded and 0 errored
    And the batch "b2" ends at 420 with 2 succeeded and 0 errored
    And the batch "b3" ends at 900 with 1 succeeded and 0 errored
    Then the store says "anthropic" batches took 120, 60 seconds, newest first
    And the store says the last 1 "anthropic" batch took 120 seconds
    And the store says "anthropic" batches of 2 to 5 requests took 120 seconds
    And the store says "anthropic" batches at "/v1/other" took no time it knows

    Examples:
      | store  |
      | memory |
      | sqlite |
