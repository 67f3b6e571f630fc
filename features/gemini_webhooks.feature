Feature: The Gemini API's batch webhooks, sent by the emulator, wake the batch's caller through `lowtide webhooks`
  As a developer whose agents wait on Gemini batch jobs
  I want the Gemini API's signed `batch.succeeded` webhook to bring a job's answers at once, and forged ones refused
  So that a turn ends when its job does, not at the next status check, and no forged event changes anything

  # Over sockets: the emulator in a thread (its Gemini jobs end 0.5 s after their create) sends its webhooks, signed
  # as the Gemini API signs a project's endpoint's (Standard Webhooks, `$GEMINI_WEBHOOK_SECRET`), to `lowtide
  # webhooks` in a process of its own, which verifies them through the Gemini provider and records them in the
  # ledger a waiting actor of this process watches; the actor checks the job's status an hour apart.

  Background:
    Given the emulator served on a socket, its Gemini jobs taking 0.5 seconds, GEMINI_WEBHOOK_SECRET set
    And `lowtide webhooks` running for a Gemini actor on this scenario's ledger

  Scenario: A job's end reaches the waiting caller by the webhook, with one status check and no poll between
    Given the emulator told over its admin API to send Gemini's webhooks to `lowtide webhooks`
    When a Gemini actor whose status checks are an hour apart is asked "When is high tide?"
    Then it is answered, having asked the job's status 1 time
    And the emulator counts 1 Gemini webhook sent
    And the ledger holds the Gemini webhook for the job

  Scenario Outline: A forged, stale or replayed Gemini webhook is refused, and the ledger holds nothing of it
    Given a Gemini job of the actor, left running with nobody waiting on it
    When <who> posts a "batch.succeeded" event for the job to `lowtide webhooks` <how>
    Then `lowtide webhooks` answered <status> "<reason>"
    And the ledger holds no Gemini webhook for the job

    Examples:
      | who      | how                        | status | reason                          |
      | a forger | unsigned                   | 401    | webhook-signature               |
      | a forger | signed with another secret | 401    | does not match                  |
      | Gemini   | signed 10 minutes ago      | 401    | signed too long ago             |

  Scenario: The same delivery replayed is refused; the event delivered again, signed anew, is acknowledged once
    Given a Gemini job of the actor, left running with nobody waiting on it
    When Gemini posts a "batch.succeeded" event for the job to `lowtide webhooks` signed now
    And the same delivery is posted again
    Then `lowtide webhooks` answered 400 "replayed"
    When Gemini posts the event again, signed a second later
    Then `lowtide webhooks` answered 200 "again"
    And the ledger holds the Gemini webhook for the job
