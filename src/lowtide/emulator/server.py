"""Serving the emulator on a socket: the `lowtide emulator` command (`run`), and `serve_in_thread` for tests, on
the neutral server runner (`lowtide.http.server`)."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass

from lowtide.emulator.emulator import Emulator
from lowtide.http.server import app_in_thread, run_app

__all__ = ["RunningServer", "run", "serve_in_thread"]


def run(
    emulator: Emulator,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    access_log: bool = False,
    json_line: bool = False,
) -> int:
    """Serve until SIGTERM or SIGINT, then return 0 (2 if the address cannot be listened on, 1 if uvicorn fails).

    Once it accepts connections it prints where, on stdout: `lowtide emulator listening on URL`, or with
    `json_line` one JSON object, `{"event": "listening", "url": ..., "host": ..., "port": ...}`.
    """
    return run_app(emulator.app, "lowtide emulator", host=host, port=port, access_log=access_log, json_line=json_line)


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
    with app_in_thread(emulator.app, host=host, port=port) as (url, bound):
        yield RunningServer(url=url, port=bound, emulator=emulator)
