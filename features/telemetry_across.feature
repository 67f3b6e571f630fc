Feature: One trace for a batch, whichever processes wait on it
  As an operator whose batches are begun by one process and collected by another (a parked call, a resumed run)
  I want every process's span of a batch in one trace, from the batch's intent to its collection
  So that my trace backend shows the whole batch, not two traces nor a span without its parent

  @stores
  Scenario: A batch parked by one process and collected by another, each with a tracer provider of its own, is one trace
    Given OpenTelemetry is configured with in-memory exporters
    And a telemetry actor in "batch" mode with the scenario's ledger
    When the telemetry actor parks "hello there" under the key "parked-1"
    And the actor's process stops, and a fresh process with a tracer provider of its own collects the ledger
    Then the first process's "lowtide.batch" span ended "left", linked both ways with the parked call's span
    And the ledger keeps that span's trace context with the batch
    And the fresh process's "lowtide.batch" span is that span's child, in the same trace, and ended "collected"
    And the fresh process's "lowtide.answer" span is the parked call's child, linked both ways with its batch's span

  Scenario: A batch whose stored trace context cannot be read is collected all the same, its span a trace of its own
    Given OpenTelemetry is configured with in-memory exporters
    And a telemetry actor in "batch" mode with the scenario's ledger
    When the telemetry actor parks "hello there" under the key "parked-2"
    And the batch's trace context in the ledger is damaged to "{"traceparent":"00-not-a-trace"}"
    And the actor's process stops, and a fresh process with a tracer provider of its own collects the ledger
    Then the fresh process's "lowtide.batch" span begins a trace of its own, and ended "collected"

  Scenario: With telemetry off, a batch's intent keeps no trace context
    Given a telemetry actor in "batch" mode with the scenario's ledger
    When the telemetry actor parks "hello there" under the key "quiet-2"
    Then the ledger keeps no trace context with the batch

  @stores
  Scenario: A bulk run resumed by a fresh process continues its batch's trace, the batch's span linked to the new run
    Given OpenTelemetry is configured with in-memory exporters
    And a telemetry actor in "batch" mode with the scenario's ledger
    When the telemetry actor's bulk run of "north, south" has sent its batch, and its process stops
    And a fresh process with a tracer provider of its own runs the same bulk run to its end
    Then the fresh process's "lowtide.batch" span is the first process's child, in the same trace, and ended "collected"
    And the fresh process's "lowtide.batch" span links to its own "lowtide.run" span
