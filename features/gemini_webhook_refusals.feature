Feature: A Gemini webhook receiver refuses what it cannot verify or read, and says which secret is missing or wrong
  As an operator pointing a Gemini project's webhook endpoint at `lowtide webhooks`
  I want a missing or malformed signing secret refused when the receiver is made, and each delivery it cannot read
  answered with the status and reason the sender's logs will show
  So that a mistyped secret is found before any event is lost, and an odd event never starts a collection

  Scenario Outline: A receiver without a secret, or with one that is not a Gemini secret, is refused before it listens
    Given the Gemini webhook secret in the environment is <secret>
    When a Gemini webhook receiver is made from the environment
    Then the Gemini receiver is refused with a ConfigurationError naming the field "webhooks" and saying "<words>"

    Examples:
      | secret             | words                                                                            |
      | unset              | No Gemini webhook secret: set the GEMINI_WEBHOOK_SECRET environment variable     |
      | "not-a-secret"     | $GEMINI_WEBHOOK_SECRET is not a Gemini webhook secret: it is `whsec_` and base64. |

  Scenario Outline: A signed delivery that is no batch's end is refused, or ignored, as the sender's logs will show
    Given a Gemini webhook receiver with the project's secret
    When the Gemini receiver is sent, signed with that secret, the body <body>
    Then the Gemini receiver answered <answer>

    Examples:
      | body                                                     | answer                                                                   |
      | not json at all                                          | 400: a signed body that is not a Gemini event (JSON, `type`, `data`)     |
      | {"data": {"id": "batches/b1"}}                           | 400: a signed Gemini event without its `type`                            |
      | {"type": "", "data": {"id": "batches/b1"}}               | 400: a signed Gemini event without its `type`                            |
      | {"type": "batch.succeeded", "data": {}}                  | 400: a signed batch.succeeded event without its job's name (`data.id`)   |
      | {"type": "batch.failed", "data": {"id": "batches/"}}     | 400: a signed batch.failed event without its job's name (`data.id`)      |
      | {"type": "file.created", "data": {"id": "files/f1"}}     | nothing: not a batch's end                                               |
      | {"type": "batch.expired", "data": {"id": "b1"}}          | the batch.expired of the job "batches/b1"                                |

  Scenario: A per-job token sent to a receiver configured with no per-job webhook is refused as unauthorised
    Given a Gemini webhook receiver with the project's secret
    When the Gemini receiver is sent a per-job token for the body {"type": "batch.succeeded", "data": {"id": "batches/b1"}}
    Then the Gemini receiver answered 401: a per-job webhook's token, and no per-job webhook is configured here (provider_options.gemini.batch_webhook_url)
    And the receiver names what it verifies with as "$GEMINI_WEBHOOK_SECRET"
