Feature: OpenTelemetry traces and metrics
  As an operator whose observability stack reads the OpenTelemetry GenAI conventions
  I want every lowtide call, batch and run as spans and metrics in the conventions' names
  So that I see tokens, cost and savings, and a batch's calls, wherever the batch is answered

  Background:
    Given OpenTelemetry is configured with in-memory exporters

  Scenario: A live call is one chat span, the SDK's HTTP span its child, and the conventions' metrics
    Given a telemetry actor in "live" mode
    When the telemetry actor answers "hello there" with temperature 0.5
    Then there is one "chat claude-haiku-4-5" span of kind CLIENT with these attributes
      | attribute                      | value            |
      | gen_ai.operation.name          | chat             |
      | gen_ai.provider.name           | anthropic        |
      | lowtide.provider               | anthropic        |
      | gen_ai.request.model           | claude-haiku-4-5 |
      | gen_ai.request.temperature     | 0.5              |
      | gen_ai.request.max_tokens      | 64               |
      | lowtide.mode                   | live             |
      | lowtide.cost.pricing           | live             |
    And the chat span has the attributes "gen_ai.response.model, gen_ai.response.id, gen_ai.response.finish_reasons, gen_ai.usage.input_tokens, gen_ai.usage.output_tokens, lowtide.cost.usd, lowtide.cost.live_equivalent_usd"
    And the span "anthropic.messages.create" is a child of the chat span
    And the instrumentation scope of the chat span is "lowtide" with lowtide's version
    And the metric "gen_ai.client.token.usage" has points for the token types "input, output" in unit "{token}"
    And the metric "gen_ai.client.operation.duration" has a point in unit "s"
    And no attribute of any span holds the API key

  Scenario: A batch call and its batch link to each other, with the batch's life as events
    Given a telemetry actor in "batch" mode
    When the telemetry actor answers "hello there" with temperature 0.5
    Then there is one "chat claude-haiku-4-5" span of kind CLIENT with these attributes
      | attribute            | value |
      | lowtide.mode         | batch |
      | lowtide.cost.pricing | batch |
    And there is one "lowtide.batch" span with the events "create, poll, results"
    And the chat span and the batch span link to each other
    And the chat span's "lowtide.cost.savings_usd" is above 0
    And the span "anthropic.messages.batches.retrieve" is a child of the batch span
    And the metric "lowtide.savings" has a point in unit "USD"
    And no attribute of any span holds the API key

  Scenario: A Gemini call names its provider as the conventions do (gcp.gemini), and as lowtide does
    Given an emulated Gemini API
    And a Gemini actor "stars"
    When the actor is asked "Is the harbour open?"
    Then the "chat gemini-2.5-flash" spans name the provider "gcp.gemini" as the conventions do, and "gemini" as lowtide does
    And the metric "gen_ai.client.operation.duration" names the provider "gcp.gemini", and "gemini" as lowtide does

  Scenario: A Gemini batch's span and its call's name the provider as the conventions do
    Given an emulated Gemini API
    And a Gemini actor "tides" with:
      """
      batch_processing: batch
      batch: {coalesce_window: 0.5, poll_interval: 30, reconcile_grace: 60}
      """
    When the actor is asked "When is high tide?"
    Then the "lowtide.batch" spans name the provider "gcp.gemini" as the conventions do, and "gemini" as lowtide does
    And the "chat gemini-2.5-flash" spans name the provider "gcp.gemini" as the conventions do, and "gemini" as lowtide does

  Scenario: A third-party provider that names no conventions' value is named by its own name
    Given a telemetry actor of a third-party batch provider registered as "tidepool"
    When the telemetry actor answers "hello there" with temperature 0.5
    Then the "chat fake-1" spans name the provider "tidepool" as the conventions do, and "tidepool" as lowtide does
    And the "lowtide.batch" spans name the provider "tidepool" as the conventions do, and "tidepool" as lowtide does

  Scenario: A live bulk run is a span with its items' call spans as children
    Given a telemetry actor in "live" mode
    When the telemetry actor maps "one, two, three" live
    Then there is one "lowtide.run" span
    And 3 "chat claude-haiku-4-5" spans are children of the run span

  Scenario: run_many's calls in batch mode get a chat span each, made as its answer arrives, linked both ways with their batch
    Given a telemetry actor in "batch" mode
    When the telemetry actor runs many "one, two, three" in batch mode
    Then 3 "chat claude-haiku-4-5" spans and the one "lowtide.batch" span link to each other
    And each "chat claude-haiku-4-5" span has its own key, "lowtide.call" "run_many", its tokens and its cost at batch prices
    And each "chat claude-haiku-4-5" span began when its call was claimed, before its batch, and was made once its answer arrived
    And the metric "gen_ai.client.token.usage" has points for the token types "input, output" in unit "{token}"

  Scenario: A batch bulk run's items get a chat span each, children of the run span, linked both ways with their batch
    Given a telemetry actor in "batch" mode
    When the telemetry actor maps "one, two, three, four" in batch mode
    Then there is one "lowtide.run" span
    And 4 "chat claude-haiku-4-5" spans are children of the run span
    And the "lowtide.batch" span is a child of the run span
    And 4 "chat claude-haiku-4-5" spans and the one "lowtide.batch" span link to each other
    And each "chat claude-haiku-4-5" span has its own key, "lowtide.call" "bulk", its tokens and its cost at batch prices
    And each "chat claude-haiku-4-5" span began when its call was claimed, before its batch, and was made once its answer arrived

  Scenario: A run_many call refused by the API ends each call's span with the error
    Given a telemetry actor in "batch" mode
    And the telemetry API will answer the next "batches.create" call with status 400 and retry-after 0
    When the telemetry actor runs many "one, two" in batch mode, which fails
    Then 2 "chat claude-haiku-4-5" spans end with the error type "InvalidRequestError"

  Scenario: run_many through a provider with no batch backend gets a chat span per call too
    Given a telemetry actor of the third-party provider "nightly", which has no batch backend
    When the telemetry actor runs many "one, two" in batch mode
    Then 2 "chat echo-1" spans say "lowtide.call" "run_many" and "gen_ai.provider.name" "nightly", each with its tokens

  Scenario: A live call paused by a 429 says so on its span
    Given a telemetry actor in "live" mode
    And the telemetry API will answer the next "messages.create" call with status 429 and retry-after 0.05
    When the telemetry actor answers "hello there" with temperature 0.5
    Then the chat span has the event "rate_limit.pause"
    And the metric "lowtide.rate_limit.pauses" has a point in unit "{pause}"

  Scenario: Prompts and answers go on spans only when the conventions' variable asks for it
    Given a telemetry actor in "live" mode
    When the telemetry actor answers "a secret prompt" with temperature 0.5
    Then no attribute of any span holds "a secret prompt"
    When OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT is "true"
    And the telemetry actor answers "an opted-in prompt" with temperature 0.5
    Then the chat span's "gen_ai.input.messages" holds "an opted-in prompt"
    And the chat span has the attributes "gen_ai.output.messages"

  @stores
  Scenario: A parked call collected by another engine ends in the same trace
    Given a telemetry actor in "batch" mode with the scenario's ledger
    When the telemetry actor parks "hello there" under the key "parked-1"
    And the actor's process stops, and a fresh process collects the ledger
    Then there is one "lowtide.answer" span for the key "parked-1"
    And the "lowtide.answer" span's parent is the parked call's span, in the same trace
    And the ledger holds a trace context for the key "parked-1"

  Scenario: A traced batch call waits inside its span wrapped once around the call's own path, which awaits the answer
    Given OpenTelemetry is configured with in-memory exporters
    And a telemetry actor in "batch" mode
    When the telemetry actor has answered "warm up", and its call of "hello there" is looked at while it waits on its batch
    Then the waiting call keeps 3 coroutines of lowtide's, 1000 bytes at most, none entered twice
    And the innermost awaits the batch's answer itself

  Scenario: Off, a batch call waiting on its batch keeps one small coroutine of lowtide's, which awaits the answer
    Given no tracer provider is configured any more
    And a telemetry actor in "batch" mode
    When the telemetry actor has answered "warm up", and its call of "hello there" is looked at while it waits on its batch
    Then the waiting call keeps 1 coroutine of lowtide's, 320 bytes at most, none entered twice
    And the innermost awaits the batch's answer itself

  Scenario: A traced live call through the actor's live caller waits inside its span wrapped once around the caller's own path
    Given a telemetry actor in "live" mode whose middleware holds each call until it is let go
    When the actor's live caller is asked "hello there", and the call is looked at while its middleware holds it
    Then the waiting call keeps 3 coroutines of lowtide's, 1000 bytes at most, none entered twice
    And there is one "chat claude-haiku-4-5" span

  Scenario: Off, lowtide makes no span at all
    Then live and batch calls, run_many and a batch bulk run in a process with no tracer provider make no lowtide span
    And a batch call in a process without the OpenTelemetry API is answered
