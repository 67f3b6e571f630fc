Feature: Webhooks out: lowtide tells the user's server when a batch or bulk run ends
  As a developer whose framework waits for lowtide's work to end
  I want a signed notice POSTed to my URL when a batch or bulk run ends, retried until my server takes it, by the
  next process on the ledger when the one that made it could not deliver it
  So that my framework is told, rather than polling lowtide in turn, and never receives a key or a prompt

  # The actor's batches go to the emulated OpenAI API in process, on a virtual clock that stands still while a
  # socket is waited on; the user's server is a recording receiver on a loopback socket. Each scenario has a SQLite
  # ledger of its own, whose outbox keeps the notices (notice_outbox.feature holds every store to the same rules).

  Background:
    Given the user's notice receiver on a loopback socket
    And an OpenAI actor over the emulator notifying the receiver, its secret in LOWTIDE_NOTIFY_SECRET

  Scenario: A batch's end is told once, signed, with ids and counts and no key, prompt or answer
    When the actor is asked "Which berth for the Marguerite?" and closed
    Then the receiver got 1 notice, "batch.ended", verified with the secret
    And the notice names the ledger's batch, its provider and 1 request succeeded
    And no notice holds the API key, the prompt or the answer

  Scenario: Asked for, each key's answer stored is told once, naming the key by its SHA-256 alone
    Given the actor's notices are "batch.ended, key.answered"
    When the actor is asked "Which berth for the Marguerite?" and closed
    Then the receiver got a "key.answered" notice for the key "berth-1", "succeeded", from the ledger's batch
    And no notice holds the key "berth-1"
    And no notice holds the API key, the prompt or the answer

  Scenario: With include_keys, a key's notice names the key itself
    Given the actor's notices are "key.answered", with their keys
    When the actor is asked "Which berth for the Marguerite?" and closed
    Then the receiver got 1 notice, "key.answered", verified with the secret
    And the notice names the key "berth-1"

  Scenario: A notice answered 503 is tried again with backoff, as one message, until taken
    Given the receiver answers the first 2 notices with 503
    When the actor is asked "Which berth for the Marguerite?" and closed
    Then the receiver got 3 notices, "batch.ended", of one webhook-id, 2 then 4 seconds apart

  Scenario: A receiver that never takes it is left to the outbox after the retries, and the call is answered all the same
    Given the receiver answers the first 99 notices with 500
    When the actor is asked "Which berth for the Marguerite?" and closed
    Then the receiver got 6 notices, "batch.ended", of one webhook-id, 2 then 4 seconds apart
    And the actor's answer came
    And "not taken after 6 tries: left in the ledger's outbox" was logged

  Scenario: A notice its process could not deliver is delivered by the next process on the ledger, once, under its id
    Given the receiver answers the first 6 notices with 503
    When the actor is asked "Which berth for the Marguerite?" and closed
    And 2 minutes pass
    And a new actor on the same ledger is asked "Which tug for the Marguerite?" and closed
    Then the receiver took 2 notices, each once, the first after 6 refusals under one webhook-id

  Scenario: A ledger copied with a notice still to send delivers it from the copy, once, under its id
    Given the receiver answers the first 6 notices with 503
    When the actor is asked "Which berth for the Marguerite?" and closed
    And `lowtide ledger copy ledger.sqlite3 moved.sqlite3` copies the ledger, and the actors use the copy from now on
    Then the command exits with 0
    And the command printed "1 request(s), 1 batch(es), 1 result(s), 0 run(s), 1 notice(s)"
    When 2 minutes pass
    And a new actor on the same ledger is asked "Which tug for the Marguerite?" and closed
    Then the receiver took 2 notices, each once, the first after 6 refusals under one webhook-id

  Scenario: A process killed (SIGKILL) while it delivers a notice leaves it to the next process, which delivers it once
    Given the receiver holds the next notice open, never answering it
    When a process of its own asks the actor "Which berth for the Marguerite?", and is killed (SIGKILL) while its notice is being delivered
    And a new process on the same ledger, once the killed one's hold has lapsed, asks "Which tug for the Marguerite?" and closes
    Then the receiver took 2 notices, each once, the first after 1 refusals under one webhook-id

  Scenario: A notice not taken within a day of its making is given up by the next process, untried
    Given the receiver answers the first 6 notices with 503
    When the actor is asked "Which berth for the Marguerite?" and closed
    And a day passes
    And a new actor on the same ledger is asked "Which tug for the Marguerite?" and closed
    Then the receiver got 6 notices of the first batch's webhook-id and took none
    And "given up after 6 tries: not taken within its time" was logged

  Scenario: A bulk run's end is told, with its counts
    When a bulk run of 3 prompts runs through the actor
    Then a "run.ended" notice names the run with 3 items succeeded, verified with the secret
    And no notice holds the API key, the prompt or the answer

  Scenario: Notices without their secret are refused at the first call, naming the variable
    Given LOWTIDE_NOTIFY_SECRET is not set
    When the actor is asked "Which berth for the Marguerite?" and closed
    Then the call failed naming "LOWTIDE_NOTIFY_SECRET"
