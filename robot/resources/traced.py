"""lowtide in a process whose OpenTelemetry SDK exports every span over OTLP/HTTP, as an application using lowtide
configures it: `traced.py SERVICE park ACTOR_FILE KEY PROMPT` parks a call and then waits for its answer (the test
kills it meanwhile); `traced.py SERVICE leave ACTOR_FILE KEY PROMPT` parks a call and exits, leaving its batch to
another process; `traced.py SERVICE lowtide ARGS...` runs the `lowtide` command (collect, serve). The receiver's
address comes from $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; each span is sent as it ends, so a killed process has sent
every span it finished."""

from __future__ import annotations

import asyncio
import sys

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor


def configure(service: str) -> TracerProvider:
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    return provider


async def park(actor_file: str, key: str, prompt: str) -> None:
    from lowtide import Actor

    actor = Actor.from_file(actor_file)
    ticket = await actor.submit(prompt, key=key)
    print(f"parked {ticket.key}", flush=True)
    await actor.result(key)  # the test kills the process while it waits
    print("answered", flush=True)


async def leave(actor_file: str, key: str, prompt: str) -> None:
    from lowtide import Actor

    async with Actor.from_file(actor_file) as actor:
        ticket = await actor.submit(prompt, key=key)
        print(f"parked {ticket.key}", flush=True)


def main() -> int:
    service, command, *rest = sys.argv[1:]
    provider = configure(service)
    try:
        if command in ("park", "leave"):
            asyncio.run((park if command == "park" else leave)(*rest))
            return 0
        from lowtide.cli.main import main as lowtide

        return lowtide(rest)
    finally:
        provider.shutdown()


if __name__ == "__main__":
    sys.exit(main())
