Feature: Telemetry never hurts a call
  As an operator whose tracing pipeline can break (a processor with a bug, a collector that is down)
  I want lowtide's calls answered whatever OpenTelemetry does
  So that a fault in telemetry costs spans, never answers, money or a stuck program

  Scenario Outline: A span processor that raises when a span <moment> costs spans, not calls
    Given OpenTelemetry is configured with a span processor that raises when a span <moment>
    And a telemetry actor in "<mode>" mode
    When the telemetry actor is asked 5 prompts at once
    Then each of the 5 prompts was answered with the emulated reply
    And lowtide logged once that OpenTelemetry failed while <doing>, and that calls go on

    Examples:
      | moment | mode  | doing           |
      | starts | batch | starting a span |
      | ends   | batch | ending a span   |
      | starts | live  | starting a span |
      | ends   | live  | ending a span   |

  Scenario: A meter provider whose instruments raise costs metrics, not calls
    Given OpenTelemetry is configured with in-memory exporters and a meter whose instruments raise
    And a telemetry actor in "batch" mode
    When the telemetry actor is asked 5 prompts at once
    Then each of the 5 prompts was answered with the emulated reply
    And lowtide logged once that OpenTelemetry failed while recording a metric, and that calls go on
    And there are 5 "chat claude-haiku-4-5" spans

  Scenario: A propagator that raises costs the trace context, not the call
    Given OpenTelemetry is configured with in-memory exporters and a propagator that raises
    And a telemetry actor in "batch" mode
    When the telemetry actor is asked 5 prompts at once
    Then each of the 5 prompts was answered with the emulated reply
    And lowtide logged once that OpenTelemetry failed while writing the trace context, and that calls go on

  Scenario: A processor that exports each span as it ends, to an endpoint that takes a second, holds the calls once
    Given OpenTelemetry is configured with a span processor that exports each of lowtide's spans as it ends, taking 1 second
    And a telemetry actor in "batch" mode
    When the telemetry actor is asked 20 prompts at once
    Then each of the 20 prompts was answered with the emulated reply
    And the calls took less than 10 seconds, where 20 spans ended one after another take 20
    And lowtide warned once that ending a span took 1 second or more, naming BatchSpanProcessor
    And once lowtide's spans are ended, the exporter received 20 "chat claude-haiku-4-5" spans
