Feature: Telemetry on the paths a call can take: failures, refusals, retries, whole conversations
  As an operator reading lowtide's traces
  I want every call's span to end with what happened to it, its error too, and the conversation when I opt in
  So that a failed or retried call is as visible as an answered one

  Background:
    Given OpenTelemetry is configured with in-memory exporters
    And a telemetry actor in "live" mode

  Scenario: A call the API refuses ends its span with the error's type, and its duration is measured with it
    Given the telemetry API will answer the next "messages.create" call with status 400 and retry-after 0
    When the traced call "hello there" is made and fails
    Then the traced call failed with an InvalidRequestError
    And the traced call's span ended with the error "InvalidRequestError"
    And the metric "gen_ai.client.operation.duration" has a point in unit "s"

  Scenario: A call over its budget is refused inside its span, which says why
    When the traced call "hello there" is made with a budget of $0.0000001 and fails
    Then the traced call failed with a BudgetExceededError
    And the chat span has the event "budget.refused"
    And the traced call's span ended with the error "BudgetExceededError"

  Scenario: A call in a mode that does not exist is refused inside a span named for its model
    When the traced call "hello there" is made in the mode "sometimes" and fails
    Then the traced call failed with a ConfigurationError
    And the traced call's span ended with the error "ConfigurationError"
    And the traced call's span has "lowtide.mode" "sometimes"

  Scenario: A live call tried again after a 503 says so on its span and in lowtide.retries
    Given the telemetry API will answer the next "messages.create" call with status 503 and retry-after 0.05
    When the telemetry actor answers "hello there" with temperature 0.5
    Then the chat span has the event "retry"
    And the metric "lowtide.retries" has a point in unit "{retry}"

  Scenario: With content capture, a whole conversation goes on the span: text as it is, other blocks by their type
    When OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT is "true"
    And the traced call is made with:
      """
      system: You log tides.
      stop_sequences: [STOP]
      messages:
        - role: user
          content:
            - {type: text, text: Log the tide in this chart.}
            - {type: image, source: {type: base64, media_type: image/png, data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="}}
        - role: assistant
          content: Logging it.
        - role: user
          content: Is it logged?
      """
    Then the traced call's span has "gen_ai.input.messages" [{"role": "user", "parts": [{"type": "text", "content": "Log the tide in this chart."}, {"type": "image"}]}, {"role": "assistant", "parts": [{"type": "text", "content": "Logging it."}]}, {"role": "user", "parts": [{"type": "text", "content": "Is it logged?"}]}]
    And the traced call's span has "gen_ai.system_instructions" [{"type": "text", "content": "You log tides."}]
    And the traced call's span has "gen_ai.request.stop_sequences" ["STOP"]

  Scenario: With content capture, each item of a live bulk run has its prompt on its span
    When OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT is "true"
    And the telemetry actor maps "one, two" live
    Then 2 "chat claude-haiku-4-5" spans are children of the run span
    And every traced chat span holds its prompt in "gen_ai.input.messages"

  Scenario: A batch whose create the API refuses ends its span, and its calls' spans, with the error
    Given a telemetry actor in "batch" mode
    And the telemetry API will answer the next "batches.create" call with status 400 and retry-after 0
    When the traced call "hello there" is made and fails
    Then the traced call failed with an InvalidRequestError
    And the traced call's span ended with the error "InvalidRequestError"
    And the traced batch's span ended with the error "InvalidRequestError"

  Scenario: A bulk run stopped part way (its task cancelled) ends its run span saying so
    Given the telemetry API answers "messages.create" only after 30 seconds
    When the telemetry actor maps "one, two" live, and the run is cancelled once its first call reached the API
    Then the traced run's span ended with the error "CancelledError"

  Scenario: A batch bulk run's span counts the batches it sent
    Given a telemetry actor in "batch" mode
    When the telemetry actor maps "one, two" in batch mode
    Then the traced run's span says it sent 1 batch, and its 2 items succeeded

  Scenario: With a tracer but no meter provider, a retried and paused call has its events and no metric is made
    Given OpenTelemetry traces to an in-memory exporter, with no meter provider
    And a telemetry actor in "live" mode
    And the telemetry API will answer the next "messages.create" call with status 503 and retry-after 0.05
    And the telemetry API will answer the next "messages.create" call with status 429 and retry-after 0.05
    When the telemetry actor answers "hello there" with temperature 0.5
    Then the chat span has the events "retry, rate_limit.pause"

  Scenario: An answer of a model with no known price has its tokens on the span, and no cost attribute
    Given a telemetry actor of the model "claude-tide-9", which the API serves and no price list knows
    When the telemetry actor answers "hello there" with temperature 0.5
    Then the chat span has the attributes "gen_ai.usage.input_tokens, gen_ai.usage.output_tokens"
    And the traced call's span has no attribute "lowtide.cost.usd"

  Scenario: A batch create whose answer was lost is reconciled, and its batch's span says how
    Given a telemetry actor in "batch" mode that reconciles a create in doubt at once
    And the telemetry API will create the next batch but drop the connection before answering
    When the telemetry actor answers "hello there" with temperature 0.5
    Then there is one "lowtide.batch" span with the events "reconcile, results"
    And the metric "lowtide.reconciles" has a point in unit "{reconcile}"

  Scenario: A call parked while tracing was off, collected with it on, is answered with no trace to end
    Given a telemetry actor in "batch" mode with the scenario's ledger
    And tracing is off while the telemetry actor parks "hello there" under the key "quiet-1"
    When a fresh process collects the ledger until "quiet-1" is answered
    Then the ledger holds the key "quiet-1" as succeeded, and no "lowtide.answer" span was made

  Scenario: With a tracer but no meter provider, a create reconciled is still an event on its batch's span
    Given OpenTelemetry traces to an in-memory exporter, with no meter provider
    And a telemetry actor in "batch" mode that reconciles a create in doubt at once
    And the telemetry API will create the next batch but drop the connection before answering
    When the telemetry actor answers "hello there" with temperature 0.5
    Then there is one "lowtide.batch" span with the events "reconcile, results"

  Scenario: With content capture, a call of neither prompt nor messages is refused inside its span, which holds no conversation
    When OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT is "true"
    And the traced call is made with nothing to ask and fails
    Then the traced call failed with a ConfigurationError
    And the traced call's span ended with the error "ConfigurationError"
    And the traced call's span has no attribute "gen_ai.input.messages"

  Scenario: A 429 that names no wait is paused by lowtide's own backoff, the pause an event with no retry-after
    Given a telemetry actor in "live" mode on a virtual clock
    And the telemetry API will answer the next "messages.create" call with status 429 and no retry-after
    When the telemetry actor answers "hello there" with temperature 0.5
    Then the chat span's "rate_limit.pause" event names no retry-after

  Scenario: A batch whose create never reached the API ends its span as resent, and the batch its requests go in has its own
    Given a telemetry actor in "batch" mode that reconciles a create in doubt at once
    And the telemetry API will answer the next "batches.create" call with status 500 and retry-after 0
    When the telemetry actor answers "hello there" with temperature 0.5
    Then the "lowtide.batch" spans ended "resent, collected"

  Scenario: A batch whose create is in doubt, and whose reconcile cannot ask the API, ends its span as left
    Given a telemetry actor in "batch" mode that reconciles a create in doubt at once
    And the telemetry API will create the next batch but drop the connection before answering
    And the telemetry API will answer the next "batches.list" call with status 401 and no retry-after
    When the traced call "hello there" is made and fails
    Then the "lowtide.batch" spans ended "left"
