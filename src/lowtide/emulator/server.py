"""Serving the emulator on a socket: the `lowtide emulator` command, and `serve_in_thread` for tests.
The socket is bound before uvicorn starts, so that port 0 works and the real port can be announced."""

from __future__ import annotations

import argparse
import logging
import math
import signal
import socket
import sys
import threading
from collections.abc import Callable, Generator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType

import uvicorn

from lowtide.emulator.emulator import Emulator
from lowtide.emulator.state import StateFileError
from lowtide.emulator.web import ConnectionDropped

__all__ = ["RunningServer", "add_arguments", "run", "run_from_args", "seconds_argument", "serve_in_thread"]

_START_TIMEOUT = 30.0


def _port(value: str) -> int:
    try:
        port = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {value!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is from 0 to 65535 (0 picks a free one), not {port}")
    return port


def seconds_argument(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {value!r}") from None
    if not math.isfinite(seconds) or seconds < 0:
        raise argparse.ArgumentTypeError(f"must be 0 seconds or more, not {value}")
    return seconds


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=_port, default=0, help="port to listen on; 0 picks a free one (default)")
    parser.add_argument(
        "--processing-seconds",
        type=seconds_argument,
        default=2.0,
        help="how long each batch stays in_progress (default: 2)",
    )
    parser.add_argument(
        "--cancel-seconds",
        type=seconds_argument,
        default=0.5,
        help="how long a canceled batch stays canceling (default: 0.5)",
    )
    parser.add_argument(
        "--api-key",
        action="append",
        dest="api_keys",
        metavar="KEY",
        help="accept only this API key (repeatable); by default any non-empty key is accepted",
    )
    parser.add_argument(
        "--state-file",
        metavar="PATH",
        help="keep the emulator's state (batches, outcomes, counters) in PATH, rewritten after every change, and "
        "start from it if it exists, so that a restarted emulator still serves its batches",
    )
    parser.add_argument(
        "--models",
        action="append",
        default=[],
        metavar="NAMES",
        help="also serve these models, beside the emulator's catalogue of Claude models (comma-separated, repeatable)",
    )
    parser.add_argument("--access-log", action="store_true", help="log every request (off by default)")


def run_from_args(args: argparse.Namespace) -> int:
    try:
        emulator = Emulator(
            processing_seconds=args.processing_seconds,
            cancel_seconds=args.cancel_seconds,
            api_keys=args.api_keys,
            state_file=args.state_file,
            extra_models=[name.strip() for names in args.models for name in names.split(",") if name.strip()],
        )
    except StateFileError as error:
        print(f"lowtide emulator: {error}", file=sys.stderr)
        return 2
    return run(emulator, host=args.host, port=args.port, access_log=args.access_log)


def run(emulator: Emulator, *, host: str = "127.0.0.1", port: int = 0, access_log: bool = False) -> int:
    """Serve until SIGTERM or SIGINT, then return 0 (2 if the address cannot be listened on, 1 if uvicorn fails)."""
    try:
        sock = _bind(host, port)
    except OSError as exc:
        print(f"lowtide emulator: cannot listen on {host}:{port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    url = _url(host, sock)

    def announce() -> None:
        print(f"lowtide emulator listening on {url}", flush=True)

    server = _server(emulator, access_log=access_log, on_ready=announce)
    with _signals_stop(server):
        server.run(sockets=[sock])
    return 0 if server.started else 1


@dataclass(frozen=True)
class RunningServer:
    url: str
    port: int
    emulator: Emulator


@contextmanager
def serve_in_thread(
    emulator: Emulator | None = None, *, host: str = "127.0.0.1", port: int = 0
) -> Generator[RunningServer]:
    """Serve `emulator` (a new one by default) on a socket from a background thread for the `with` block."""
    emulator = emulator if emulator is not None else Emulator()
    sock = _bind(host, port)
    ready = threading.Event()
    server = _server(emulator, access_log=False, on_ready=ready.set)

    def serve() -> None:
        try:
            server.run(sockets=[sock])
        finally:
            ready.set()

    thread = threading.Thread(target=serve, name="lowtide-emulator", daemon=True)
    thread.start()
    ready.wait(_START_TIMEOUT)
    try:
        if not server.started:  # pragma: no cover - only when uvicorn itself fails to start
            raise RuntimeError("the emulator server did not start")
        yield RunningServer(url=_url(host, sock), port=sock.getsockname()[1], emulator=emulator)
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


def _server(emulator: Emulator, *, access_log: bool, on_ready: Callable[[], None]) -> _Server:
    config = uvicorn.Config(emulator.app, log_level="warning", access_log=access_log, timeout_graceful_shutdown=5)
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
