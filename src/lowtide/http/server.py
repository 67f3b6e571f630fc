"""Any ASGI app on a socket, under uvicorn: `run_app` until SIGTERM or SIGINT (the `lowtide serve` and `lowtide
emulator` commands), `app_in_thread` from a background thread for a `with` block (tests). The socket is bound before
uvicorn starts, so that port 0 works and the real port can be announced."""

from __future__ import annotations

import json
import logging
import signal
import socket
import sys
import threading
from collections.abc import Callable, Generator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import uvicorn

from lowtide.http.access_log import AccessLog
from lowtide.http.dropped import ConnectionDropped
from lowtide.http.guarded import HEADER_BYTES, HEADER_SECONDS, ErrorBody, guarded_protocol

__all__ = ["app_in_thread", "run_app"]

_START_TIMEOUT = 30.0


def run_app(
    app: object,
    name: str,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    access_log: bool = False,
    json_line: bool = False,
    path: str = "",
    error_body: ErrorBody | None = None,
) -> int:
    """Serve `app` until SIGTERM or SIGINT, then return 0 (2 if the address cannot be listened on, 1 if uvicorn
    fails).

    Once it accepts connections it prints where, on stdout: `{name} listening on URL`, or with `json_line` one JSON
    object, `{"event": "listening", "url": ..., "host": ..., "port": ...}`. `path` is added to the URL announced.
    A request whose headers are too large, too slow or not HTTP is answered as `error_body` writes an error (else
    in plain text) before the app sees it (`guarded.py`).
    """
    try:
        sock = _bind(host, port)
    except OSError as exc:
        print(f"lowtide: cannot listen on {host}:{port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    url = _url(host, sock) + path
    listening = {"event": "listening", "url": url, "host": host, "port": sock.getsockname()[1]}

    def announce() -> None:
        print(json.dumps(listening) if json_line else f"{name} listening on {url}", flush=True)

    server = _server(app, access_log=access_log, on_ready=announce, error_body=error_body)
    with _signals_stop(server):
        server.run(sockets=[sock])
    return 0 if server.started else 1


@contextmanager
def app_in_thread(
    app: object,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    access_log: bool = False,
    error_body: ErrorBody | None = None,
    header_seconds: float = HEADER_SECONDS,
) -> Generator[tuple[str, int]]:
    """Serve the ASGI `app` on a socket from a background thread for the `with` block; yields its URL and port."""
    sock = _bind(host, port)
    ready = threading.Event()
    server = _server(
        app, access_log=access_log, on_ready=ready.set, error_body=error_body, header_seconds=header_seconds
    )

    def serve() -> None:
        try:
            server.run(sockets=[sock])
        finally:
            ready.set()

    thread = threading.Thread(target=serve, name="lowtide-server", daemon=True)
    thread.start()
    ready.wait(_START_TIMEOUT)
    try:
        if not server.started:  # pragma: no cover - only when uvicorn itself fails to start
            raise RuntimeError("the server did not start")
        yield _url(host, sock), sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(_START_TIMEOUT)


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family)


def _url(host: str, sock: socket.socket) -> str:
    port = sock.getsockname()[1]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


class _Server(uvicorn.Server):
    """A uvicorn server that reports when it accepts connections, so that its address can be announced."""

    def __init__(self, config: uvicorn.Config, on_ready: Callable[[], None]) -> None:
        super().__init__(config)
        self._on_ready = on_ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        # uvicorn exits instead of returning when it cannot start, so returning means serving.
        await super().startup(sockets=sockets)
        self._on_ready()


def _server(
    app: Any,
    *,
    access_log: bool,
    on_ready: Callable[[], None],
    error_body: ErrorBody | None = None,
    header_seconds: float = HEADER_SECONDS,
) -> _Server:
    # uvicorn's own access log is off: at its log level (warning) it would log nothing, and it would log the query
    # string and the client's address. Ours logs a line per request on lowtide's log (`access_log.py`).
    served = AccessLog(app) if access_log else app
    config = uvicorn.Config(
        served,
        http=guarded_protocol(error_body, header_seconds=header_seconds),
        h11_max_incomplete_event_size=HEADER_BYTES,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=5,
    )
    # After the config, which sets up uvicorn's loggers (keeping the filters they have).
    logging.getLogger("uvicorn.error").addFilter(_not_a_dropped_connection)
    return _Server(config, on_ready)


def _not_a_dropped_connection(record: logging.LogRecord) -> bool:
    """uvicorn logs the exception that ends an answer as an error; a dropped connection is a fault that was asked
    for, and its closed connection all that should show."""
    return record.exc_info is None or not isinstance(record.exc_info[1], ConnectionDropped)


@contextmanager
def _signals_stop(server: uvicorn.Server) -> Generator[None]:
    """SIGINT and SIGTERM stop `server` and let the command return 0, even when they arrive before uvicorn has
    installed its own handlers. uvicorn re-raises the signals it caught, once stopped, to the handlers it found:
    these, rather than the defaults, which would end the process with a traceback or by the signal itself.
    Signal handlers belong to the main thread, where the command runs."""

    def stop(signum: int, frame: FrameType | None) -> None:
        server.should_exit = True

    previous = {signum: signal.signal(signum, stop) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
