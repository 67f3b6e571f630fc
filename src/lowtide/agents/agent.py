"""`@agent`: an async function made a durable agent, started under a run id (`Agent.start`, which returns once the
run has parked, ended or stopped) and awaited by id (`Agent.result`), from this process or any later one."""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

from lowtide.agents.approvals import approve_run
from lowtide.agents.asking import ask
from lowtide.agents.driver import AgentFunction, Read, advance, advance_held
from lowtide.agents.notices import run_notify
from lowtide.agents.rules import LEASE_SECONDS
from lowtide.agents.values import decoded, encoded, reference_of, unstorable
from lowtide.agents.waiting import answered, collect_for
from lowtide.batching.keys import owner_id
from lowtide.calls.arguments import check_budget
from lowtide.config.settings import NotifySettings
from lowtide.core.clock import Clock, SystemClock
from lowtide.errors import AgentRunError, ConfigurationError
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.journal_records import AgentRun, AgentState
from lowtide.ledger.store import open_ledger
from lowtide.telemetry.switch import tracing

__all__ = ["Agent", "AgentHandle", "agent", "store_of"]

LedgerLike = LedgerStore | str | Path | None


def store_of(ledger: LedgerLike) -> LedgerStore:
    """The store a `ledger=` argument names: a store object, a location, or None for the default ledger."""
    if ledger is None or isinstance(ledger, str | Path):
        return open_ledger(ledger)
    return ledger


class AgentHandle:
    """A run as its starter sees it; `state` and `record` read the ledger each time."""

    def __init__(self, run_id: str, store: LedgerStore) -> None:
        self.run_id = run_id
        self.store = store

    @property
    def record(self) -> AgentRun:
        run = self.store.agent_journal.agent_run(self.run_id)
        assert run is not None, self.run_id
        return run

    @property
    def state(self) -> str:
        return self.record.state.value

    @property
    def cost_usd(self) -> Decimal:
        return self.record.cost_usd

    def __repr__(self) -> str:
        return f"<AgentHandle {self.run_id!r} {self.state}>"


class Agent:
    """A durable agent: its function, and the reference (`module:qualname`) any process imports it again by."""

    def __init__(self, fn: AgentFunction, *, clock: Clock | None = None) -> None:
        self.fn = fn
        self.reference = reference_of(fn)
        self.clock = clock or SystemClock()
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    def __repr__(self) -> str:
        return f"<Agent {self.reference}>"

    async def start(
        self,
        *args: Any,
        run_id: str | None = None,
        ledger: LedgerLike = None,
        max_cost_usd: float | Decimal | None = None,
        notify: NotifySettings | Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> AgentHandle:
        """Start a run (under `run_id`, else a new one) and advance it until it parks or ends. A run id the ledger
        knows returns that run, untouched (never a second one); a run id of another agent is refused.
        `max_cost_usd` is the run's budget over all its turns: a turn whose worst case would cross it, with what the
        run has spent, is not sent, and the run fails naming both. `notify` (`batch.notify`'s settings: `url`,
        `secret_env`, ...) has each state the run comes to POSTed, signed, to `url` (`agent.parked`, `agent.finished`,
        ...; docs/agents.md), by whichever process advances it."""
        refused = unstorable(list(args), "the agent's arguments") or unstorable(kwargs, "the agent's keyword arguments")
        if refused is not None:
            raise refused
        given: dict[str, Any] = {"args": list(args), "kwargs": kwargs}
        if max_cost_usd is not None:  # kept with the run's input: every process that advances the run reads it there
            given["max_cost_usd"] = str(check_budget(max_cost_usd))
        told = run_notify(notify)
        if told is not None:  # kept with the run's input too
            given["notify"] = told
        store = store_of(ledger)
        run_id = run_id or uuid.uuid4().hex
        if not tracing():
            return await self._open(store, run_id, given)
        from lowtide.telemetry.agent_runs import run_span

        with run_span(run_id, self.reference) as carrier:
            if carrier:  # every process that advances the run continues this trace
                given["trace"] = carrier
            return await self._open(store, run_id, given)

    async def _open(self, store: LedgerStore, run_id: str, given: dict[str, Any]) -> AgentHandle:
        """Record the run (unless its id is known) and advance it."""
        now = self.clock.now()
        owner = owner_id()
        # Recorded held by this process, which advances it at once: no second transaction to take its lease.
        new = AgentRun(
            run_id=run_id, reference=self.reference, input=encoded(given),
            state=AgentState.RUNNING, result=None, error=None, cost_usd=Decimal(0), awaiting=None, holder=owner,
            held_until=now + LEASE_SECONDS, created_at=now, updated_at=now,
        )  # fmt: skip
        stored, created = await ask(store, lambda: store.agent_journal.open_run(new))
        if stored.reference != self.reference:
            raise ConfigurationError(
                f"The run id {run_id!r} belongs to the agent {stored.reference} in {store.location}, not to"
                f" {self.reference}: give this run another id.",
                field="run_id",
            )
        if created:  # a journal of nothing yet: not read
            await advance_held(self.fn, store, stored, owner, self.clock, read=Read([]))
        return AgentHandle(run_id, store)

    async def advance(self, run_id: str, *, ledger: LedgerLike = None) -> AgentHandle:
        """Advance a run of this agent as far as it goes now (what `lowtide agents resume` does for each run)."""
        store = store_of(ledger)
        await advance(self.fn, store, run_id, clock=self.clock)
        return AgentHandle(run_id, store)

    def approve(self, run_id: str, *, deny: bool = False, result: Any = None, ledger: LedgerLike = None) -> AgentHandle:
        """Record a person's decision for the run waiting on one (`ctx.approval`): approved, or denied with `deny`,
        with `result` (a JSON value) for the run's code. The next resume (or `result`) advances the run. A run not
        waiting on a person, unknown or already decided, raises `ConfigurationError`, nothing changed."""
        store = store_of(ledger)
        approve_run(store, run_id, deny=deny, result=result, clock=self.clock)
        return AgentHandle(run_id, store)

    async def result(
        self, run_id: str, *, ledger: LedgerLike = None, poll_interval: float = 60.0, client: object | None = None
    ) -> Any:
        """The run's result, waiting for it: parked, it is advanced whenever its awaited answer is in the ledger
        (the ledger's ended batches are collected every `poll_interval` seconds). A run that failed, stopped or stands
        in doubt raises `AgentRunError` with its state and error."""
        store = store_of(ledger)
        while True:
            run = await ask(store, lambda: store.agent_journal.agent_run(run_id))
            if run is None:
                raise ConfigurationError(f"No agent run {run_id!r} in the ledger {store.location}.", field="run_id")
            if run.state is AgentState.FINISHED:
                return decoded(run.result or "null")
            if run.state in (AgentState.FAILED, AgentState.STOPPED, AgentState.IN_DOUBT):
                raise AgentRunError(
                    f"Agent run {run_id!r} is {run.state.value}: {run.error or 'no result'}",
                    run_id=run_id,
                    state=run.state.value,
                )
            if await self._ready(store, run):
                await advance(self.fn, store, run_id, clock=self.clock)
                continue
            await collect_for(store, run, client=client)
            if not await self._ready(store, run):
                await self.clock.sleep(poll_interval)

    async def _ready(self, store: LedgerStore, run: AgentRun) -> bool:
        return await ask(store, lambda: answered(store, run, self.clock.now()))


def agent(fn: AgentFunction) -> Agent:
    """Make `async def f(ctx: AgentContext, ...)` a durable agent (`f.start(...)`, `f.result(run_id)`)."""
    if not inspect.iscoroutinefunction(fn):
        raise ConfigurationError(f"@agent takes an async function; {reference_of(fn)} is not one.", field="agent")
    return Agent(fn)
