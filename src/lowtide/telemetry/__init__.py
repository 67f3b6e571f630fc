"""OpenTelemetry traces and metrics of lowtide's calls, batches and runs, in the GenAI conventions' names, from the
instrumentation scope `lowtide`. The API alone (`lowtide[otel]`): the application configures the SDK and exporters.
Off (no API, or no provider configured) lowtide asks `switch.tracing()` once per call and makes nothing else; the
other modules, which import the API, are imported only when it is on."""
