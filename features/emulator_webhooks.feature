Feature: The emulated OpenAI API sends batch webhooks as OpenAI does
  As a developer testing how my program receives OpenAI's batch webhooks
  I want the emulator to POST each batch's end, signed as OpenAI signs it, to the endpoints I give it
  So that the whole path (API, receiver, ledger, waiting caller) runs offline, over sockets, with no poll between

  # In process, on a virtual clock: the emulator's batches take 60 s; the endpoint is a recording receiver reached
  # through an ASGI transport (the signature and the moment are the point, not the socket).

  Scenario: A batch's end is POSTed once, at its end, signed so that the openai SDK's unwrap accepts it
    Given an in-process emulator whose OpenAI batches take 60 seconds, sending webhooks to a recording receiver
    When an OpenAI batch is created through the SDK
    And 120 seconds pass on the webhook sender's clock
    Then the receiver got 1 delivery
    And the delivery is a "batch.completed" event for the batch, accepted by the openai SDK's unwrap with the secret
    And the delivery came 60 seconds after the batch was created
    And the delivery is refused by the openai SDK's unwrap with another secret

  Scenario: A cancelled batch's end is POSTed as batch.cancelled, when its cancel ends
    Given an in-process emulator whose OpenAI batches take 60 seconds, sending webhooks to a recording receiver
    When an OpenAI batch is created through the SDK
    And 10 seconds pass on the webhook sender's clock
    And the batch is cancelled through the SDK
    And 120 seconds pass on the webhook sender's clock
    Then the receiver got 1 delivery
    And the delivery is a "batch.cancelled" event for the batch, accepted by the openai SDK's unwrap with the secret
    And the delivery came 10 seconds after the batch was created

  Scenario: A delivery answered 500 is tried again with backoff: the same event and webhook-id, signed again
    Given an in-process emulator whose OpenAI batches take 60 seconds, sending webhooks to a recording receiver
    And the receiver answers the first 2 deliveries with 500
    When an OpenAI batch is created through the SDK
    And 120 seconds pass on the webhook sender's clock
    Then the receiver got 3 deliveries, of one event id and one webhook-id, 1 then 2 seconds apart
    And the emulator counts 1 webhook sent

  Scenario: A dropped webhook (a fault) is never sent
    Given an in-process emulator whose OpenAI batches take 60 seconds, sending webhooks to a recording receiver
    And the emulator drops its next webhook
    When an OpenAI batch is created through the SDK
    And 120 seconds pass on the webhook sender's clock
    Then the receiver got 0 deliveries
    And the emulator counts 0 webhooks sent

  Scenario: Over sockets: emulator, `lowtide webhooks`, ledger, and the waiting caller woken with no poll between
    # The caller checks the API's status every hour; its answer within the test's minute came by the webhook. The
    # receiver leaves the collection to the caller (a live process polls the batch) and records the event; the
    # caller (SQLite: it looks at the ledger every watch_interval) is woken and asks the status once.
    Given the emulator served on a socket, its OpenAI batches taking 0.5 seconds
    And `lowtide webhooks` running for an OpenAI actor on this scenario's ledger
    And the emulator told over its admin API to send OpenAI's webhooks to `lowtide webhooks`
    When an OpenAI actor whose status checks are an hour apart is asked "When is high tide?"
    Then it is answered, having asked the batch's status 1 time
    And the emulator counts 1 webhook sent
    And the ledger holds the webhook for the batch

  Scenario: `lowtide emulator --webhook openai=URL` without a secret to sign with is refused
    When `lowtide emulator --webhook openai=http://127.0.0.1:9/webhooks/openai` is run without OPENAI_WEBHOOK_SECRET
    Then it exits with 2, saying "OPENAI_WEBHOOK_SECRET"
