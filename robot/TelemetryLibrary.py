"""The telemetry suite's keywords: an OTLP/HTTP receiver on loopback (the spans decoded with `opentelemetry-proto`),
lowtide processes that export to it (`resources/traced.py`), and what the received spans show."""

from __future__ import annotations

import os
import re
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from robot.api import logger
from robot.api.deco import keyword, library

from _processes import Process

TRACED = Path(__file__).parent / "resources" / "traced.py"
LISTENING = re.compile(r"listening on (http://\S+)")


@dataclass
class Received:
    """One span as the receiver decoded it."""

    service: str
    name: str
    trace_id: str
    span_id: str
    parent_id: str
    attributes: dict[str, str] = field(default_factory=dict[str, str])
    links: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    """(trace id, span id) of each span it links to."""


def _text(value: AnyValue) -> str:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return ",".join(_text(item) for item in value.array_value.values)
    return str(getattr(value, kind)) if kind else ""


class _Receiver(BaseHTTPRequestHandler):
    spans: list[Received]
    lock: threading.Lock

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        with self.lock:
            for resource_spans in request.resource_spans:
                service = next(
                    (_text(a.value) for a in resource_spans.resource.attributes if a.key == "service.name"), ""
                )
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        self.spans.append(
                            Received(
                                service=service,
                                name=span.name,
                                trace_id=span.trace_id.hex(),
                                span_id=span.span_id.hex(),
                                parent_id=span.parent_span_id.hex(),
                                attributes={a.key: _text(a.value) for a in span.attributes},
                                links=[(link.trace_id.hex(), link.span_id.hex()) for link in span.links],
                            )
                        )
        answer = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: object) -> None:
        pass


@library(scope="SUITE")
class TelemetryLibrary:
    def __init__(self) -> None:
        self._spans: list[Received] = []
        self._server: ThreadingHTTPServer | None = None
        self._processes: dict[str, Process] = {}
        self._workdir = Path(os.environ.get("TMPDIR", "/tmp"))

    @keyword("Start OTLP Receiver")
    def start_receiver(self, workdir: str) -> str:
        """An OTLP/HTTP receiver on a free loopback port; its traces endpoint."""
        self._workdir = Path(workdir)
        handler = type("Receiver", (_Receiver,), {"spans": self._spans, "lock": threading.Lock()})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1/traces"

    @keyword("Stop OTLP Receiver")
    def stop_receiver(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @keyword("Start Traced")
    def start_traced(self, service: str, *args: str, **env: str) -> None:
        """`resources/traced.py SERVICE ARGS...` as a process named `service`, with `env` added."""
        argv = [sys.executable, str(TRACED), service, *args]
        process = Process(argv, self._workdir, service, {**os.environ, "PYTHONUNBUFFERED": "1", **env})
        self._processes[service] = process
        logger.info(f"Started {' '.join(argv)} (pid {process.popen.pid})")

    @keyword("Wait For Output")
    def wait_for_output(self, service: str, text: str, timeout: float = 60.0) -> str:
        """The process's stdout once it holds `text`; fails if the process ends first."""
        process = self._processes[service]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            out = process.stdout
            if text in out:
                return out
            if process.popen.poll() is not None:
                raise AssertionError(f"{service} exited with {process.popen.returncode}:\n{out}\n{process.stderr}")
            time.sleep(0.05)
        raise AssertionError(f"{service} did not print {text!r} in {timeout:g} s:\n{process.stderr}")

    @keyword("Kill Traced")
    def kill_traced(self, service: str) -> None:
        """SIGKILL: nothing of the process's own shutdown runs."""
        process = self._processes[service]
        process.popen.send_signal(signal.SIGKILL)
        process.popen.wait(timeout=10)

    @keyword("Wait For Traced")
    def wait_for_traced(self, service: str, timeout: float = 120.0) -> int:
        process = self._processes[service]
        code = process.wait(timeout)
        logger.info(f"{service} exited with {code}\nstdout:\n{process.stdout}\nstderr:\n{process.stderr}")
        if code is None:
            raise AssertionError(f"{service} still runs after {timeout:g} s")
        return code

    @keyword("Stop Traced Processes")
    def stop_traced(self) -> None:
        for process in self._processes.values():
            process.stop()

    @keyword("Listening URL Of")
    def listening_url(self, service: str, timeout: float = 60.0) -> str:
        out = self.wait_for_output(service, "listening on", timeout)
        match = LISTENING.search(out)
        assert match is not None, out
        return match.group(1)

    # -- what was received ---------------------------------------------------------------------------------------

    def _named(self, name: str, service: str | None = None, **attributes: str) -> list[Received]:
        return [
            s
            for s in list(self._spans)
            if s.name == name
            and (service is None or s.service == service)
            and all(s.attributes.get(k) == v for k, v in attributes.items())
        ]

    @keyword("Received Span")
    def received_span(self, name: str, service: str, timeout: float = 30.0, **attributes: str) -> Received:
        """The one span named `name` that `service` sent with these attributes (waited for: export is async)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self._named(name, service, **attributes)
            if len(found) == 1:
                return found[0]
            if len(found) > 1:
                raise AssertionError(f"{len(found)} spans {name!r} from {service}: {found}")
            time.sleep(0.1)
        seen = [(s.service, s.name, s.attributes.get("lowtide.call")) for s in self._spans]
        raise AssertionError(f"no span {name!r} from {service} with {attributes}; received: {seen}")

    @keyword("Should Have Received Span")
    def should_have_received(self, name: str, service: str) -> None:
        assert self._named(name, service), [(s.service, s.name) for s in self._spans]

    @keyword("Span Should Be The Child Of")
    def should_be_child(self, child: Received, parent: Received) -> None:
        assert child.trace_id == parent.trace_id, (child, parent)
        assert child.parent_id == parent.span_id, (child, parent)

    @keyword("Span Should Be The Child Of The Span Linked From")
    def should_be_child_of_linked(self, child: Received, linking: Received) -> None:
        """`child`'s parent is a span `linking` links to, in that span's trace (which may never have been received:
        a process killed outright exports nothing of a span it had not ended)."""
        assert (child.trace_id, child.parent_id) in linking.links, (child, linking)

    @keyword("Span Should Link To")
    def should_link_to(self, span: Received, other: Received) -> None:
        assert (other.trace_id, other.span_id) in span.links, (span, other)

    @keyword("Span Should Continue The Trace")
    def should_continue(self, span: Received, traceparent: str) -> None:
        _, trace_id, parent_id, _ = traceparent.split("-")
        assert span.trace_id == trace_id, (span, traceparent)
        assert span.parent_id == parent_id, (span, traceparent)

    @keyword("Services In The Trace Of")
    def services_in_trace(self, span: Received) -> list[str]:
        return sorted({s.service for s in self._spans if s.trace_id == span.trace_id})

    @keyword("No Received Attribute Should Hold")
    def no_attribute_holds(self, text: str) -> None:
        for span in self._spans:
            for name, value in span.attributes.items():
                assert text not in value, (span.service, span.name, name)

    @keyword("Ask Served Actor")
    def ask_served(self, url: str, key: str, traceparent: str) -> int:
        """A Messages request to `lowtide serve` carrying `traceparent`; its status."""
        reply = httpx.post(
            f"{url}/v1/messages",
            headers={"x-api-key": key, "anthropic-version": "2023-06-01", "traceparent": traceparent},
            json={"model": "claude-haiku-4-5", "max_tokens": 64, "messages": [{"role": "user", "content": "ahoy"}]},
            timeout=120,
        )
        logger.info(reply.text)
        return reply.status_code
