"""Advancing one agent run: take its lease, replay its journal and run it on to its next park, or its end, and write
what it came to. One process at a time advances a run (`rules.lease`); what it writes at the end it writes only
while it still holds it, so that a run stopped meanwhile stays stopped."""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from lowtide.agents import rules
from lowtide.agents.asking import ask
from lowtide.agents.context import AgentContext, InDoubt, Parked, Stopped, WaitingOnPerson
from lowtide.agents.notices import tell
from lowtide.agents.values import encoded, unstorable
from lowtide.agents.writes import JournalWrites
from lowtide.batching.keys import owner_id
from lowtide.core.clock import Clock, SystemClock
from lowtide.ledger.journal import RunChange
from lowtide.ledger.journal_records import AgentRun, AgentState, JournalEntry
from lowtide.ledger.records import RequestRecord
from lowtide.telemetry.switch import tracing

if TYPE_CHECKING:
    from lowtide.ledger.interface import LedgerStore

__all__ = ["AgentFunction", "Read", "advance", "advance_held", "advanced"]

AgentFunction = Callable[..., Coroutine[Any, Any, Any]]
"""An agent's own function: `async def f(ctx, *args, **kwargs)`."""


@dataclass(frozen=True, slots=True)
class Read:
    """What an advance replays from, read before it: the run's journal, and the records of its turns' requests
    read with it (the one its run was parked on), by key."""

    entries: list[JournalEntry]
    answers: Mapping[str, RequestRecord] = field(default_factory=dict[str, RequestRecord])


async def advance(fn: AgentFunction, store: LedgerStore, run_id: str, *, clock: Clock | None = None) -> AgentRun | None:
    """Advance the run `run_id` of the agent `fn` as far as it goes now: the run as it then stands, or None when
    another live process holds it (or it is not advanceable: ended, in doubt, waiting on a person)."""
    clock = clock or SystemClock()
    journal = store.agent_journal
    owner = owner_id()
    held = await ask(store, lambda: journal.change_run(run_id, rules.lease(owner, clock.now())))
    if held is None:
        return None
    return await advance_held(fn, store, held, owner, clock)


async def advance_held(
    fn: AgentFunction, store: LedgerStore, held: AgentRun, owner: str, clock: Clock, *, read: Read | None = None
) -> AgentRun:
    """Advance a run this process holds (`owner`), and write what it came to (with the ends of the other runs this
    event loop advances at the same moment): the run as it then stands."""
    journal = store.agent_journal
    change = await advanced(fn, store, held, owner, clock, read=read)
    written = await JournalWrites.of(store).change_run(held.run_id, change)
    if written is None:  # stopped meanwhile: as the stop left it
        written = await ask(store, lambda: journal.agent_run(held.run_id))
    assert written is not None, held.run_id
    await tell(store, [written], clock)
    return written


async def advanced(
    fn: AgentFunction, store: LedgerStore, held: AgentRun, owner: str, clock: Clock, *, read: Read | None = None
) -> RunChange:
    """Replay the run `owner` holds and run it on to its next park or its end: the change that writes what it came
    to, which the caller writes (alone, or in one transaction with the other runs of a `resume` pass). `read`: its
    journal and awaited answer as the caller read them (a `resume` pass reads all its runs' together), else read
    here. With telemetry on, the advance is a span of the run's trace (its context stored with the run's input)."""
    given: dict[str, Any] = json.loads(held.input)
    if not tracing():
        return (await _advanced(fn, store, held, given, owner, clock, read))[1]
    from lowtide.telemetry.agent_runs import advance_span

    with advance_span(held.run_id, given.get("trace")) as span:
        outcome, change = await _advanced(fn, store, held, given, owner, clock, read)
        span.set_attribute("lowtide.agent.outcome", outcome)
    return change


async def _advanced(
    fn: AgentFunction,
    store: LedgerStore,
    held: AgentRun,
    given: dict[str, Any],
    owner: str,
    clock: Clock,
    read: Read | None,
) -> tuple[str, RunChange]:
    """What the advance came to (its outcome's name, for its span) and the change that writes it."""
    run_id = held.run_id
    if read is None:
        read = Read(await ask(store, lambda: store.agent_journal.entries(run_id)))
    budget = given.get("max_cost_usd")
    ctx = AgentContext(
        run_id,
        store,
        read.entries,
        clock,
        max_cost_usd=None if budget is None else Decimal(budget),
        holder=owner,
        answers=read.answers,
    )
    try:
        value = await fn(ctx, *given.get("args", []), **given.get("kwargs", {}))
    except Parked as parked:
        return "parked", rules.parked(owner, parked.key, ctx.cost_usd, clock.now())
    except WaitingOnPerson as asking:
        return "waiting-on-person", rules.waiting(owner, asking.entry.key, ctx.cost_usd, clock.now())
    except InDoubt as doubt:
        entry = doubt.entry
        said = (
            f"step {entry.position} ({entry.name}) began in a process that died before its result was stored, and it"
            f" is not idempotent: run `lowtide agents retry {run_id}` to run it again."
        )
        return "in-doubt", rules.ended(owner, AgentState.IN_DOUBT, ctx.cost_usd, clock.now(), error=said)
    except Stopped:
        return "stopped", rules.released(owner, clock.now())
    except Exception as exc:
        said = f"{type(exc).__name__}: {exc}"
        return "failed", rules.ended(owner, AgentState.FAILED, ctx.cost_usd, clock.now(), error=said)
    bad = unstorable(value, "the agent's result")
    if bad is not None:
        return "failed", rules.ended(owner, AgentState.FAILED, ctx.cost_usd, clock.now(), error=str(bad))
    return "finished", rules.ended(owner, AgentState.FINISHED, ctx.cost_usd, clock.now(), result=encoded(value))
