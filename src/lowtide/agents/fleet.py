"""The runs of a ledger handled as a fleet, as `lowtide agents` does: which runs can be advanced (their awaited
answers in the ledger, or their process dead), each rebuilt from its reference and advanced; a run stopped (its
outstanding batch canceled where the provider allows) or its in-doubt step let run again."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from lowtide.agents import rules
from lowtide.agents.agent import Agent
from lowtide.agents.asking import ask
from lowtide.agents.driver import Read, advanced
from lowtide.agents.notices import tell
from lowtide.agents.values import SCRIPT_MODULE
from lowtide.agents.waiting import advanceable_now
from lowtide.batching.gathering import Gathering
from lowtide.batching.gc_tuning import freeze_survivors, thaw
from lowtide.batching.keys import owner_id
from lowtide.calls import parking
from lowtide.core.clock import Clock, SystemClock
from lowtide.errors import APIError, BatchNotOutstanding, ConfigurationError
from lowtide.ledger.inline import async_ledger
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.journal import RunChange
from lowtide.ledger.journal_records import AgentRun, AgentState, JournalEntry
from lowtide.webhooks.notify import deliver_due

__all__ = ["Advanced", "imported", "referenced", "resume_once", "retry_run", "stop_run"]


def referenced(reference: str, what: str = "agent") -> object:
    """What `module:qualname` names, imported; `ConfigurationError` naming the module (and `what` it is, in the
    message) when it cannot be."""
    module_name, _, qualname = reference.rpartition(":")
    try:
        found: object = _module(module_name)
        for part in qualname.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigurationError(
            f"The {what} {reference} cannot be imported: {type(exc).__name__}: {exc}. Make module {module_name!r}"
            " importable (PYTHONPATH), or name it with --import.",
            field="reference",
        ) from exc
    return found


def imported(reference: str) -> Agent:
    """The agent `module:qualname` names, imported; `ConfigurationError` naming the module when it cannot be."""
    found = referenced(reference)
    if not isinstance(found, Agent):
        raise ConfigurationError(f"{reference} is not an @agent function.", field="reference")
    return found


def _module(name: str) -> object:
    """The module `name` names: imported, or for a script's path loaded once under a name of its own."""
    if not name.endswith(".py"):
        return importlib.import_module(name)
    path = Path(name)
    as_module = f"{SCRIPT_MODULE}{hashlib.sha256(name.encode()).hexdigest()[:12]}"
    if as_module in sys.modules:
        return sys.modules[as_module]
    spec = importlib.util.spec_from_file_location(as_module, path)
    if spec is None or spec.loader is None or not path.is_file():
        raise ImportError(f"No script {name}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[as_module] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[as_module]
        raise
    return module


@dataclass
class Advanced:
    """What one pass of `resume` did: the runs advanced (as they then stood), and those that could not be."""

    runs: list[AgentRun] = field(default_factory=list[AgentRun])
    errors: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    """(run id or "collect", what went wrong)."""


async def resume_once(
    store: LedgerStore,
    *,
    imports: Iterable[str] = (),
    only: str | None = None,
    clock: Clock | None = None,
    client: object | None = None,
    api_key_env: str | None = None,
) -> Advanced:
    """One pass: collect the ledger's ended batches (through `client` when given, else each provider's own), then
    advance every run that can be (or only `only`)."""
    clock = clock or SystemClock()
    for module in imports:
        importlib.import_module(module)
    done = Advanced()
    try:
        await parking.collect_ended(store, client=client, api_key_env=api_key_env, clock=clock)
    except (
        APIError,
        ConfigurationError,
    ) as exc:  # the batches it could reach are collected; a later pass tries the others again
        done.errors.append(("collect", f"{type(exc).__name__}: {exc}"))
    try:  # the notices the outbox holds that are due (an earlier pass's, or an actor's): a pass is cron's sweep too
        await deliver_due(async_ledger(store), clock, owner=owner_id())
    except Exception as exc:  # a store's outage: the next pass sweeps again
        done.errors.append(("notices", f"{type(exc).__name__}: {exc}"))
    journal = store.agent_journal
    due: list[tuple[AgentRun, Agent]] = []
    waiting = [r for r in journal.agent_runs([AgentState.PARKED, AgentState.RUNNING]) if only in (None, r.run_id)]
    for run in advanceable_now(store, waiting, clock.now()):
        try:
            due.append((run, imported(run.reference)))
        except ConfigurationError as exc:
            done.errors.append((run.run_id, str(exc)))
            journal.change_run(run.run_id, lambda r, said=str(exc): dataclasses.replace(r, error=said))
    if not due:
        return done
    # Leased together, advanced together, their ends written together: a transaction a pass for each, not one a run
    # for each; and together so that the next turns of runs advanced in one pass travel in as few batches as the
    # coalescing window allows (one a turn for runs of one actor), not a batch a run: a gathering, so that the window a
    # run's turn opens waits for the others still replaying their journals (`batching.gathering`), however long the
    # store's round trips take on a busy machine. A run whose end waits for the pass's slowest run is held meanwhile
    # by this live process (its lease), so nothing else advances it.
    owner, now = owner_id(), clock.now()
    held = await ask(store, lambda: journal.change_runs({run.run_id: rules.lease(owner, now) for run, _ in due}))
    going = [(taken, found) for run, found in due if (taken := held[run.run_id]) is not None]
    reads = await ask(store, lambda: _reads(store, [run for run, _ in going]))
    # Thousands of runs replaying at once: what is alive now (their runs, journals, answers) lives until the pass ends,
    # and the collector's full passes need not walk it meanwhile; given back once the pass has written its ends.
    freeze_survivors(len(going))
    together = Gathering(len(going))

    async def advance(run: AgentRun, found: Agent) -> RunChange:
        with together.member():
            return await advanced(found.fn, store, run, owner, clock, read=reads[run.run_id])

    try:
        changes = await asyncio.gather(*(advance(run, found) for run, found in going))
        ends = {run.run_id: change for (run, _), change in zip(going, changes, strict=True)}
        written = await ask(store, lambda: journal.change_runs(ends))
    finally:
        thaw()
    for run_id, run in written.items():
        now_as = run if run is not None else await ask(store, lambda run_id=run_id: journal.agent_run(run_id))
        if now_as is not None:
            done.runs.append(now_as)
    await tell(store, done.runs, clock)
    return done


def _reads(store: LedgerStore, runs: list[AgentRun]) -> dict[str, Read]:
    """What the runs of a pass replay from, in two reads for them all: their journals, and the requests they were
    parked on (their answers, now in the ledger), by run id."""
    journals = store.agent_journal.entries_of([run.run_id for run in runs])
    awaited = [run.awaiting for run in runs if run.awaiting is not None]
    records = {record.key: record for record in store.requests_for(awaited)} if awaited else {}
    return {
        run.run_id: Read(
            journals[run.run_id],
            {run.awaiting: records[run.awaiting]} if run.awaiting is not None and run.awaiting in records else {},
        )
        for run in runs
    }


async def stop_run(
    store: LedgerStore,
    run_id: str,
    *,
    clock: Clock | None = None,
    client: object | None = None,
    api_key_env: str | None = None,
) -> AgentRun:
    """Stop the run: its state `stopped` at once, then its outstanding batch canceled (a batch the API has ended, or
    a provider that cannot cancel, leaves nothing to cancel)."""
    now = (clock or SystemClock()).now()
    journal = store.agent_journal
    run = journal.agent_run(run_id)
    if run is None:
        raise ConfigurationError(f"No agent run {run_id!r} in the ledger {store.location}.", field="run_id")
    if journal.change_run(run_id, rules.stopped(now)) is None:
        raise ConfigurationError(
            f"Agent run {run_id!r} has ended ({run.state.value}): nothing to stop.", field="run_id"
        )
    record = store.request(run.awaiting) if run.awaiting else None
    if record is not None and record.batch_id and not record.state.final:
        with contextlib.suppress(BatchNotOutstanding):  # it ended meanwhile: nothing left to cancel
            await parking.cancel(store, run.awaiting or "", client=client, api_key_env=api_key_env)
    stopped = journal.agent_run(run_id)
    assert stopped is not None
    await tell(store, [stopped], clock or SystemClock())
    return stopped


def in_doubt_entry(entries: list[JournalEntry]) -> JournalEntry | None:
    return next((e for e in reversed(entries) if not e.done), None)


async def retry_run(
    store: LedgerStore,
    run_id: str,
    *,
    imports: Iterable[str] = (),
    clock: Clock | None = None,
    client: object | None = None,
    api_key_env: str | None = None,
) -> Advanced:
    """Run an in-doubt run's step again (a person said it is safe), and advance the run on."""
    clock = clock or SystemClock()
    journal = store.agent_journal
    run = journal.agent_run(run_id)
    if run is None or run.state is not AgentState.IN_DOUBT:
        shown = "no such run" if run is None else f"it is {run.state.value}"
        raise ConfigurationError(f"Agent run {run_id!r} has no step in doubt ({shown}).", field="run_id")
    entry = in_doubt_entry(journal.entries(run_id))
    assert entry is not None, run_id
    journal.change_entry(run_id, entry.position, lambda e: dataclasses.replace(e, retry=True))
    journal.change_run(run_id, rules.unblocked(clock.now()))
    return await resume_once(store, imports=imports, only=run_id, clock=clock, client=client, api_key_env=api_key_env)
