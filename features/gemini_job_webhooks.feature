Feature: Gemini's per-job webhooks, signed with RS256 tokens, wake a job's caller through `lowtide webhooks`
  As a developer whose Gemini jobs name the URL they call when they end (`webhook_config` on the create)
  I want the job's webhook, whose signature is an RS256 JWT, verified against a JWKS whose address I give
  So that a turn ends when its job does, and no forged, expired or misdirected token changes anything

  # Over sockets: the emulator in a thread (its Gemini jobs end 0.5 s after their create) sends each job's end to the
  # URL the job was created with, its `webhook-signature` a token of the emulator's own RSA key, whose JWKS it serves
  # at /_emulator/jwks/gemini (the address given in GEMINI_WEBHOOK_JWKS_URL, in place of Google's). `lowtide webhooks`
  # runs in a process of its own for an actor whose jobs name it (provider_options.gemini.batch_webhook_url), with no
  # project secret set; the actor of this process waiting on the job checks its status an hour apart.

  Background:
    Given the emulator on a socket, its Gemini jobs taking 0.5 seconds, its JWKS in GEMINI_WEBHOOK_JWKS_URL
    And `lowtide webhooks` running for a Gemini actor whose jobs call it when they end

  Scenario: A job created with its own webhook calls `lowtide webhooks` when it ends, and its caller is answered at once
    When a Gemini actor whose jobs call `lowtide webhooks`, its status checks an hour apart, is asked "When is high tide?"
    Then it is answered, having asked the job's status 1 time
    And the job was created with `lowtide webhooks` as its own webhook, the ledger's identity in its metadata
    And the emulator counts 1 Gemini webhook sent
    And the ledger holds the Gemini webhook for the job

  Scenario Outline: A forged, expired or misdirected token is refused, and the ledger holds nothing of it
    Given a Gemini job of the actor, left running with nobody waiting on it
    When <who> posts a "batch.succeeded" event for the job to `lowtide webhooks` with <token>
    Then `lowtide webhooks` answered <status> "<reason>"
    And the ledger holds no Gemini webhook for the job

    Examples:
      | who      | token                                              | status | reason                       |
      | a forger | a token of its own key                             | 401    | not one of the JWKS's        |
      | a forger | a token of its own key under the emulator's key id | 401    | does not verify              |
      | a forger | an HS256 token keyed with the JWKS's public key    | 401    | does not verify              |
      | Gemini   | a token that expired                               | 401    | the token expired            |
      | Gemini   | a token for another URL                            | 401    | another audience             |
      | a forger | a token of the emulator's key from another issuer  | 401    | issuer is not the Gemini API |
      | a forger | a token of the emulator's key with no issuer       | 401    | no `iss` claim               |
      | Gemini   | a project endpoint's HMAC signature                | 401    | GEMINI_WEBHOOK_SECRET is not |

  Scenario: The job's own token, right, is taken once; the same delivery replayed is refused
    Given a Gemini job of the actor, left running with nobody waiting on it
    When Gemini posts a "batch.succeeded" event for the job to `lowtide webhooks` with the token the job's URL gets
    Then `lowtide webhooks` answered 200 "collecting"
    When the same delivery is posted again
    Then `lowtide webhooks` answered 400 "replayed"
    And the ledger holds the Gemini webhook for the job

  Scenario: The job of another ledger's actor whose webhook is the same `lowtide webhooks` is ignored by it
    Given a Gemini job of another ledger's actor calling the same `lowtide webhooks`, left running
    When Gemini posts the job's end to `lowtide webhooks` as the job's own webhook, its metadata echoed
    Then `lowtide webhooks` answered 200 "ignored: a batch of another ledger"
    And this ledger holds no Gemini webhook for the other ledger's job

  Scenario: The end of this ledger's job whose create is still being recorded is kept for the job's poller
    When Gemini posts the end of a job this ledger has not recorded yet, with this ledger's identity echoed
    Then `lowtide webhooks` answered 200 "a batch of this ledger not recorded yet: kept for its poller"
    And this ledger holds the Gemini webhook for that job, for its poller

  Scenario: A job open when the emulator stops calls its webhook when the emulator, restarted, finds it ended
    # The state file keeps the job's own URL: the emulator started again an hour on (its clock) sends the job's end at
    # once, signed with its new key, which `lowtide webhooks` reads from the JWKS at the same address.
    Given a Gemini job of the actor calling `lowtide webhooks` when it ends, left running with nobody waiting on it
    When the emulator stops, and is started again from its state file on its port an hour later
    Then within a minute the emulator has sent the job's end, answered by `lowtide webhooks`
    And the ledger holds the Gemini webhook for the job

  Scenario: An actor whose jobs name a webhook, with no JWKS given, verifies their tokens against Google's
    When `lowtide webhooks` is started for such an actor without GEMINI_WEBHOOK_JWKS_URL
    Then it listens, verifying the jobs' tokens against "https://generativelanguage.googleapis.com/.well-known/jwks.json"
