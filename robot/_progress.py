"""Kills timed by a client's progress, as the soak draws them: right after the API committed its create, while it
polls its batch, right after its first answer is stored, or at a drawn time. The moments are read from outside the
client (the emulator's counters over its socket, the ledger opened read-only in this process), and each kill says
where it landed, or that the client outran it.

A client is known in the ledger by its pid: every owner a process writes is `host/pid/random`
(`lowtide.batching.keys.owner_id`).
"""

from __future__ import annotations

import random
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
from robot.api import logger

from _processes import Process
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.records import BatchState
from lowtide.ledger.store import open_ledger
from lowtide.ledger.views import BatchLine

__all__ = ["KINDS", "Kill", "Plan", "Stats", "Watch", "draw_plan", "stored_results", "tally"]

KINDS = ("create", "polling", "stored", "random")
"""`create`: right after the API committed a create of the client's (its answer not yet recorded: the emulator's
`delay_after_commit` keeps it on its way, or the client is reconciling it); `polling`: while a batch of its waits at
the API, a drawn time after it was first seen waiting; `stored`: right after the first answer of one of its batches
was stored; `random`: at a drawn time after the clients started their calls."""
_POLL_SECONDS = 0.02
"""How often the ledger is read (each read costs this process a millisecond or more of a core the clients share)."""
_HOT_POLL_SECONDS = 0.002
"""How often while a `stored` kill waits and a batch is out at the API: the time between a batch's results stored and
its being said collected is a few milliseconds, which is what that kill tries to land in."""
_STATS_SECONDS = 0.01
"""How often the emulator's counters are read while a create is awaited (each read lists every created custom id)."""
_IN_FLIGHT = (BatchState.INTENT, BatchState.UNKNOWN)
_OUTCOMES: tuple[str, ...] = ("landed", "late", "outran")


@dataclass(frozen=True)
class Plan:
    """When one client of a life is killed."""

    kind: str
    seconds: float = 0.0
    """`random`: after the life's clients started their calls; `polling`: after its batch was first seen waiting."""

    def __str__(self) -> str:
        if self.kind == "random":
            return f"at random, {self.seconds:.2f} s in"
        if self.kind == "polling":
            return f"while polling, {self.seconds:.2f} s after its batch was seen waiting"
        return {"create": "right after the API committed its create", "stored": "right after its first stored answer"}[
            self.kind
        ]


def draw_plan(rng: random.Random) -> Plan:
    """A kind of kill and its moment, drawn from the round's random: a failing round replays with the same ones."""
    kind = rng.choice(KINDS)
    if kind == "random":
        return Plan(kind, round(rng.uniform(0.05, 3.5), 3))
    if kind == "polling":
        return Plan(kind, round(rng.uniform(0.0, 0.5), 3))
    return Plan(kind)


@dataclass(frozen=True)
class Kill:
    """What became of one planned kill: `landed` (the client was killed at that moment), `late` (killed, but the
    ledger shows it had moved past it), or `outran` (it exited before its moment came, or as it came)."""

    client: str
    plan: Plan
    outcome: str
    where: str
    seconds: float
    """When it was killed (or exited), after the life's clients started their calls."""
    left_ended: bool = False
    """It left a batch `ended` with every result stored, not said collected (the next program's calls close it)."""

    def __str__(self) -> str:
        return f"{self.client} {self.plan}: {self.outcome} at {self.seconds:.2f} s ({self.where})"


@dataclass(frozen=True)
class Stats:
    """Where the emulator's counters keep one provider's batches: how many it holds, and each custom id's creates."""

    batches: str
    created: str


@dataclass
class _Client:
    name: str
    process: Process
    plan: Plan | None
    fired: Kill | None = None
    waiting_since: dict[str, float] = field(default_factory=dict[str, float])
    """Polling: each of its batches, when first seen waiting at the API."""


class Watch:
    """One life of a round: its clients started together, each killed at its plan's moment. `run` returns once
    every plan has fired or been outrun; the clients without a plan (or that outran theirs) are still the caller's to
    wait for."""

    def __init__(
        self,
        base_url: str,
        ledger: str,
        stats: Mapping[str, Stats],
        clients: Sequence[tuple[str, Process, Plan | None]],
        baseline: Mapping[str, int],
    ) -> None:
        self._base_url = base_url
        self._ledger = _LedgerReader(ledger)
        self._stats = stats
        self._clients = [_Client(name, process, plan) for name, process, plan in clients]
        self._by_pid = {str(c.process.popen.pid): c for c in self._clients}
        self._baseline = dict(baseline)
        """Each batch's stored results before this life: a `stored` kill waits for more."""
        self._owners: dict[str, _Client] = {}
        """Each batch's last owner seen among this life's clients (it is cleared once the batch is collected)."""
        self._created: dict[str, set[str]] = {}
        self._created_at = 0.0
        self._holds_at = 0.0
        self._started = time.monotonic()

    def run(self, timeout: float) -> list[Kill]:
        deadline = self._started + timeout
        pending = [c for c in self._clients if c.plan is not None]
        try:
            while pending and time.monotonic() < deadline:
                lines = self._read() if self._ledger_needed(pending) else None
                if lines is not None:
                    self._note_owners(lines)
                for client in list(pending):
                    if self._step(client, lines):
                        pending.remove(client)
                time.sleep(_HOT_POLL_SECONDS if _hot(pending, lines) else _POLL_SECONDS)
            for client in pending:  # a hang: the caller's wait for it says so, with its stacks
                logger.warn(f"{client.name}: its kill ({client.plan}) never came within {timeout:g} s")
            return [c.fired for c in self._clients if c.fired is not None]
        finally:
            self._ledger.close()

    # -------------------------------------------------------------------------------------------- the moments

    def _ledger_needed(self, pending: list[_Client]) -> bool:
        """Whether a plan waits on the ledger."""
        return not all(c.plan is not None and c.plan.kind == "random" for c in pending)

    def _read(self, *, now: bool = False) -> list[BatchLine] | None:
        """Every batch of the ledger, with its stored results; None while the ledger may not be whole. It is opened
        once the emulator holds a batch of the round (a client has made the ledger, its schema and an intent, before
        it creates a batch): this process never makes a ledger, nor opens one a client is making. `now`: the
        emulator asked whatever the time since it was last asked."""
        if not self._ledger.opened and not self._emulator_holds_batches(now=now):
            return None
        return self._ledger.lines()

    def _step(self, client: _Client, lines: list[BatchLine] | None) -> bool:
        """Kill `client` if its moment has come; True once its plan is settled (fired, or outrun)."""
        plan, now = client.plan, time.monotonic()
        assert plan is not None
        if client.process.popen.poll() is not None:
            code = client.process.popen.returncode
            client.fired = Kill(client.name, plan, "outran", f"it exited with code {code} first", now - self._started)
            return True
        if plan.kind == "random":
            if now - self._started >= plan.seconds:
                self._kill(client, lambda after: ("landed", self._stage(client, after), False))
                return True
            return False
        if lines is None:
            return False
        mine = [line for line in lines if self._owners.get(line.batch.id) is client]
        if plan.kind == "create":
            committed = self._committed(client, mine)
            if committed is not None:
                self._kill(client, lambda after: self._after_create(committed, after))
                return True
        elif plan.kind == "polling":
            for line in mine:
                if line.batch.state == BatchState.WAITING:
                    since = client.waiting_since.setdefault(line.batch.id, now)
                    if now - since >= plan.seconds:
                        self._kill(client, lambda after, b=line.batch.id: self._after_polling(b, after))
                        return True
        else:
            for line in mine:
                if line.results > self._baseline.get(line.batch.id, 0):
                    self._kill(client, lambda after, b=line.batch.id: self._after_stored(b, after))
                    return True
        return False

    def _committed(self, client: _Client, mine: list[BatchLine]) -> str | None:
        """A batch of the client's whose create the API has committed and whose id it has not recorded. The API is
        asked first, the ledger again after it: a loaded emulator may take longer to answer than the create's answer
        takes to be recorded, and a batch recorded meanwhile is not this moment."""
        if not any(_in_flight(line) for line in mine):
            return None
        created = self._created_ids()
        lines = self._read() or []
        self._note_owners(lines)
        for line in lines:
            if _in_flight(line) and self._owners.get(line.batch.id) is client:
                ids = created.get(line.batch.provider, set())
                if ids and not ids.isdisjoint(self._ledger.members(line.batch.id)):
                    return line.batch.id
        return None

    def _kill(self, client: _Client, where: Callable[[dict[str, BatchLine]], tuple[str, str, bool]]) -> None:
        """SIGKILL now; then, from the ledger as the dead client left it, where that was (`where`)."""
        popen = client.process.popen
        popen.send_signal(signal.SIGKILL)
        code = client.process.wait(30.0)  # reaped at once: a zombie's pid still looks alive to its neighbours
        seconds = time.monotonic() - self._started
        assert client.plan is not None
        if code != -signal.SIGKILL:
            client.fired = Kill(client.name, client.plan, "outran", f"it exited with code {code} first", seconds)
            return
        lines = self._read(now=True) or []
        self._note_owners(lines)  # a dead client's batches keep its owner: a client killed at random is known by them
        outcome, text, left_ended = where({line.batch.id: line for line in lines})
        client.fired = Kill(client.name, client.plan, outcome, text, seconds, left_ended)
        logger.info(f"Killed {client.fired}")

    def _after_create(self, batch_id: str, after: dict[str, BatchLine]) -> tuple[str, str, bool]:
        line = after.get(batch_id)
        if line is None or line.batch.state not in _IN_FLIGHT or line.batch.provider_batch_id:
            state = line.batch.state.value if line is not None else "gone"
            return "late", f"its batch {batch_id} already recorded as {state}", False
        if line.batch.state == BatchState.UNKNOWN:
            return "landed", f"reconciling its unknown create of {batch_id}, which the API holds", False
        return "landed", f"the create of {batch_id} committed at the API, its answer not yet recorded", False

    def _after_polling(self, batch_id: str, after: dict[str, BatchLine]) -> tuple[str, str, bool]:
        line = after.get(batch_id)
        if line is None or line.batch.state != BatchState.WAITING:
            return "late", f"its batch {batch_id} already {line.batch.state if line else 'gone'}", False
        return "landed", f"polling {line.batch.provider} batch {line.batch.provider_batch_id}", False

    def _after_stored(self, batch_id: str, after: dict[str, BatchLine]) -> tuple[str, str, bool]:
        line = after[batch_id]
        stored = f"{line.results} of {line.batch.request_count} results of {batch_id} stored"
        if line.batch.state == BatchState.ENDED:
            return "landed", f"{stored}, the batch not yet said collected", line.results == line.batch.request_count
        return "landed", f"{stored}, the batch {line.batch.state}", False

    def _stage(self, client: _Client, after: dict[str, BatchLine]) -> str:
        """Where a client killed at random was, from the batches it owned."""
        states = {line.batch.state for line in after.values() if self._owners.get(line.batch.id) is client}
        for state, stage in (
            (BatchState.ENDED, "storing results"),
            (BatchState.WAITING, "polling"),
            (BatchState.UNKNOWN, "reconciling an unknown create"),
            (BatchState.INTENT, "creating a batch"),
        ):
            if state in states:
                return stage
        return "no batch of its own in flight (starting, claiming, or waiting on others' batches)"

    # ---------------------------------------------------------------------------------------------- readings

    def _note_owners(self, lines: list[BatchLine]) -> None:
        for line in lines:
            owner = line.batch.owner
            client = self._by_pid.get(owner.split("/")[1]) if owner and owner.count("/") >= 2 else None
            if client is not None:
                self._owners[line.batch.id] = client

    def _emulator_holds_batches(self, *, now: bool = False) -> bool:
        """Whether the emulator holds a batch of this round, read at most every `_STATS_SECONDS` (unless `now`)."""
        if not now and time.monotonic() - self._holds_at < _STATS_SECONDS:
            return False
        self._holds_at = time.monotonic()
        stats = self._emulator_stats()
        return any(int(stats.get(s.batches, 0)) > 0 for s in self._stats.values())

    def _created_ids(self) -> dict[str, set[str]]:
        """Each provider's created custom ids, read at most every `_STATS_SECONDS`."""
        if time.monotonic() - self._created_at >= _STATS_SECONDS:
            stats = self._emulator_stats()
            self._created = {p: set(stats.get(s.created) or {}) for p, s in self._stats.items()}
            self._created_at = time.monotonic()
        return self._created

    def _emulator_stats(self) -> dict[str, Any]:
        response = httpx.get(self._base_url + "/_emulator/stats", timeout=10.0)
        response.raise_for_status()
        stats: dict[str, Any] = response.json()
        return stats


class _LedgerReader:
    """The round's ledger, opened read-only in this process on first need, through its store's own interface."""

    def __init__(self, location: str) -> None:
        self._location = location
        self._store: LedgerStore | None = None
        self._members: dict[str, set[str]] = {}

    @property
    def opened(self) -> bool:
        return self._store is not None

    def lines(self) -> list[BatchLine]:
        """Every batch and how many of its results are stored."""
        lines, _ = self._open().views.batch_page(limit=100_000)
        return lines

    def members(self, batch_id: str) -> set[str]:
        """The custom ids of a batch (an intent's never change)."""
        if batch_id not in self._members:
            assert self._store is not None
            self._members[batch_id] = set(self._store.members(batch_id))
        return self._members[batch_id]

    def close(self) -> None:
        store, self._store = self._store, None
        if store is not None:
            store.close()

    def _open(self) -> LedgerStore:
        if self._store is None:
            self._store = open_ledger(self._location, read_only=True, own=True)
        return self._store


def _hot(pending: list[_Client], lines: list[BatchLine] | None) -> bool:
    """Whether a `stored` kill waits while a batch is out at the API (its results may be stored any moment)."""
    waiting = (BatchState.WAITING, BatchState.ENDED)
    return any(c.plan is not None and c.plan.kind == "stored" for c in pending) and any(
        line.batch.state in waiting for line in lines or []
    )


def _in_flight(line: BatchLine) -> bool:
    """A batch whose create has been (or is being) made, its API id not recorded."""
    return line.batch.state in _IN_FLIGHT and not line.batch.provider_batch_id


def stored_results(location: str) -> dict[str, int]:
    """How many results of each batch the ledger holds: a life's baseline (read once a batch was created)."""
    reader = _LedgerReader(location)
    try:
        return {line.batch.id: line.results for line in reader.lines()}
    finally:
        reader.close()


def tally(kills: Sequence[Kill]) -> dict[str, dict[str, int]]:
    """Kills by kind and outcome."""
    counts = {kind: dict.fromkeys(_OUTCOMES, 0) for kind in KINDS}
    for kill in kills:
        counts[kill.plan.kind][kill.outcome] += 1
    return counts
