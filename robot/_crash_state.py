"""CrashLibrary's state and plumbing: its clients (processes, or runs in this process), scratch files, the
emulator's base URL, and the helpers that read a client's output and a ledger's status report."""

from __future__ import annotations

import importlib.util
import json
import os
import sqlite3
import sys
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
from robot.api import logger

from _crash_providers import _PROVIDERS
from _processes import Process, stop_all
from lowtide.calls.parking import status
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.sqlite import Ledger

CLIENT = Path(__file__).resolve().parent / "resources" / "crash_client.py"
CRASHPOINT_ENV = "LOWTIDE_CRASHPOINT"


class _Client(Process):
    def __init__(self, argv: Sequence[str], workdir: Path, name: str, env: Mapping[str, str], out: Path) -> None:
        super().__init__(argv, workdir, name, env)
        self.out = out

    @property
    def code(self) -> int | None:
        """The exit code (negative: killed by that signal), None while it runs."""
        return self.popen.poll()


@dataclass(frozen=True)
class _RanHere:
    """A client run in this process (`Run Client In This Process`): what the checks read of a client process."""

    name: str
    out: Path
    code: int
    stdout: str
    stderr: str
    seconds: float


_CLIENT_MODULE: list[ModuleType] = []


def _crash_client() -> ModuleType:
    """`resources/crash_client.py` as a module, loaded once."""
    if not _CLIENT_MODULE:
        spec = importlib.util.spec_from_file_location("crash_client", CLIENT)
        if spec is None or spec.loader is None:
            raise AssertionError(f"Cannot load {CLIENT}.")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _CLIENT_MODULE.append(module)
    return _CLIENT_MODULE[0]


class CrashState:
    """What a crash suite's keyword library holds between keywords, and the internals its keywords share."""

    def __init__(self) -> None:
        self._scratch: Path | None = None
        self._emulator: Process | None = None
        self._base_url: str | None = None
        self._provider = "anthropic"
        self._clients: dict[str, _Client | _RanHere] = {}
        self._ran_here: list[str] = []
        """The clients run in this process since the last `Stop Clients`: `Log Diagnostics` shows their logs."""
        self._processes: list[Process] = []
        self._ledgers: list[Path] = []
        self._started = 0
        self._creating: sqlite3.Connection | None = None
        self._processing: float | None = None

    @property
    def _workdir(self) -> Path:
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix="lowtide-crash-"))
        return self._scratch

    def _lowtide(self) -> list[str]:
        script = Path(sys.executable).parent / "lowtide"
        if script.is_file() and os.access(script, os.X_OK):
            return [str(script)]
        return [sys.executable, "-m", "lowtide.cli"]

    def _environment(self, extra: Mapping[str, str]) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != CRASHPOINT_ENV}
        env.update(extra)
        return env

    def _start(self, argv: Sequence[str], name: str, extra_env: Mapping[str, str]) -> Process:
        self._started += 1
        process = Process(argv, self._workdir, f"{name}-{self._started}", self._environment(extra_env))
        self._processes.append(process)
        logger.info(f"Started {' '.join(argv)} (pid {process.popen.pid})")
        return process

    def _stop(self, processes: Sequence[Process]) -> None:
        stop_all(processes)

    def _abandon_ledger_creation(self) -> None:
        db, self._creating = self._creating, None
        if db is not None:
            db.close()

    def _client(self, name: str) -> _Client | _RanHere:
        client = self._clients.get(name)
        if client is None:
            raise AssertionError(f"No client named {name!r} was started in this suite.")
        return client

    def _process_client(self, name: str) -> _Client:
        client = self._client(name)
        if not isinstance(client, _Client):
            raise AssertionError(f"{name} ran in this process: it has no process to wait for or kill.")
        return client

    def _require_base_url(self) -> str:
        if self._base_url is None:
            raise AssertionError("Start the emulator first.")
        return self._base_url

    def _list_batches(self) -> list[dict[str, Any]]:
        """Every batch the API lists (newest first), through the API itself rather than the admin routes."""
        provider = _PROVIDERS[self._provider]
        found: list[dict[str, Any]] = []
        paging = provider.paging
        params: dict[str, Any] = {**dict(provider.query), paging.size: 100}
        while True:
            response = httpx.get(
                self._require_base_url() + provider.list_path, params=params, headers=provider.headers, timeout=10.0
            )
            response.raise_for_status()
            page = response.json()
            if isinstance(page, list):  # a bare list (Together's), one page of every job
                found.extend(page)
                return found
            items = page.get(paging.items, [])
            found.extend(items)
            if paging.numbered:
                cursor = str(int(params.get(paging.cursor, 0)) + 1) if len(items) == 100 else None
            else:
                cursor = paging.next_page(page)
            if not cursor:
                return found
            params[paging.cursor] = cursor


def _opened(ledger: str) -> LedgerStore:
    if ledger.startswith("postgresql://"):
        from lowtide.ledger.postgres.ledger import PostgresLedger  # the `postgres` extra: its suites alone

        return PostgresLedger(ledger)
    return Ledger(ledger)


def _status_report(ledger: str) -> dict[str, Any]:
    """What `lowtide status --ledger LEDGER --json` prints, made in this process (the command costs an interpreter
    start-up): the same report, as JSON."""
    opened = _opened(ledger)
    try:
        report: dict[str, Any] = status(opened).as_json()
    finally:
        opened.close()
    tickets = Counter(t["state"] for t in report["tickets"])
    batches = [(b["id"], b["batch_id"], b["state"], b["requests"]) for b in report["batches"]]
    logger.info(f"Ledger {ledger}: tickets {dict(tickets)}; batches (id, API id, state, requests) {batches}")
    return report


def _answers(client: _Client | _RanHere) -> list[dict[str, Any]]:
    """The client's output lines; a client that wrote none fails the keyword."""
    if not client.out.exists():
        raise AssertionError(f"{client.name} wrote no output ({client.out}).\nstderr:\n{_tail(client.stderr)}")
    return [json.loads(line) for line in client.out.read_text(encoding="utf-8").splitlines() if line.strip()]


def _keys(prefix: str, requests: int, more: Sequence[str]) -> set[str]:
    """`PREFIX-1` .. `PREFIX-N`, and those of each further `PREFIX N` pair given as two words in `more`."""
    pairs = [(prefix, int(requests)), *((more[i], int(more[i + 1])) for i in range(0, len(more), 2))]
    return {f"{p}-{i}" for p, n in pairs for i in range(1, n + 1)}


def _natural(key: str) -> tuple[str, int]:
    head, _, tail = key.rpartition("-")
    return (head, int(tail)) if tail.isdigit() else (key, -1)


def _few(items: Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" (and {len(items) - limit} more)" if len(items) > limit else "")


def _tail(text: str, lines: int = 30) -> str:
    return "\n".join(text.splitlines()[-lines:])


def _short(stats: Mapping[str, Any]) -> str:
    """Stats with `created_custom_ids` summarized: it has one entry per request."""
    created = stats.get("created_custom_ids")
    if not isinstance(created, dict):
        return json.dumps(stats, sort_keys=True)
    histogram = Counter(int(v) for v in created.values())
    rest = {k: v for k, v in stats.items() if k != "created_custom_ids"}
    return f"{json.dumps(rest, sort_keys=True)} created_custom_ids: {len(created)} ids, times created {dict(histogram)}"
