"""Steps for the live quota shared through the ledger: two quotas over two connections to one ledger (a SQLite file,
or the scenario's PostgreSQL database) stand for two processes, on one virtual clock."""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from _support import world
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.core.clock import VirtualClock
from lowtide.ledger.postgres.quotas import PostgresQuotaStore
from lowtide.ledger.quota_records import QuotaStore, ScopeState
from lowtide.ledger.sqlite import Ledger
from lowtide.ledger.sqlite.quotas import LedgerQuotaStore
from lowtide.live.events import LiveEvent, PauseEnded, PauseStarted
from lowtide.live.quota import Permit, Quota, QuotaLimits
from lowtide.live.quota_state import LocalQuotaStore
from lowtide.live.reports import Budget, QuotaReport

if TYPE_CHECKING:
    from live_concurrency_steps import Live


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    shared_quota: Shared
    live_mode: Live
    """live_concurrency_steps' live actors, where a scenario uses both."""
    stores: list[QuotaStore]


_SCOPE = "anthropic|https://api.example|digest-of-the-key"


@dataclass
class Shared:
    clock: VirtualClock = field(default_factory=VirtualClock)
    quotas: dict[str, Quota] = field(default_factory=dict[str, Quota])
    events: dict[str, list[LiveEvent]] = field(default_factory=dict[str, list[LiveEvent]])
    admitted: list[tuple[str, float]] = field(default_factory=list[tuple[str, float]])
    """(process, moment) of every admission."""
    started: float = 0.0
    paused_at: float = 0.0


def shared(context: Context) -> Shared:
    if not hasattr(context, "shared_quota"):
        context.shared_quota = Shared()
    return context.shared_quota


def _store(context: Context, on_ledger: str | None) -> QuotaStore:
    """A store of its own, as another process would have: over the ledger `on_ledger` ("SQLite", "PostgreSQL"),
    or (None) in the process."""
    if on_ledger == "SQLite":
        ledger = Ledger(world(context).path("shared.sqlite3"))  # a connection of its own
        context.add_cleanup(ledger.close)
        return LedgerQuotaStore(ledger)
    if on_ledger == "PostgreSQL":
        postgres = PostgresQuotaStore(context.postgres_url)  # a pool of its own, as another host would have
        context.cleanups.append(postgres.aclose)
        return postgres
    assert on_ledger is None, on_ledger
    return LocalQuotaStore()


def _processes(context: Context, limits: QuotaLimits, *, on_ledger: str | None) -> None:
    """Processes A and B, each with a quota over a store of its own (see `_store`)."""
    state = shared(context)
    for name in ("A", "B"):
        store = _store(context, on_ledger)
        quota = state.quotas[name] = Quota(_SCOPE, limits, state.clock, store)
        events = state.events[name] = []
        quota.listeners.append(events.append)
    state.started = state.clock.now()


def _limits(**given: int) -> QuotaLimits:
    return QuotaLimits(max_concurrency=1000, ramp_start=given.pop("ramp_start", 1000), **given)


@given("two processes on one {store} ledger, each with a live quota of {rpm:d} requests per minute for the same key")
def step_two_rpm(context: Context, store: str, rpm: int) -> None:
    _processes(context, _limits(rpm=rpm, ramp_start=4 if rpm >= 600 else 1000), on_ledger=store)


@given("two processes, each with a live quota of {rpm:d} requests per minute for the same key, kept in the process")
def step_two_local(context: Context, rpm: int) -> None:
    _processes(context, _limits(rpm=rpm), on_ledger=None)


@given(
    "two processes on one {store} ledger, each with a live quota of {tpm:d} input tokens per minute for the same key"
)
def step_two_tpm(context: Context, store: str, tpm: int) -> None:
    _processes(context, _limits(input_tpm=tpm), on_ledger=store)


@given("two processes on one {store} ledger, neither with a configured limit")
def step_two_unlimited(context: Context, store: str) -> None:
    _processes(context, _limits(), on_ledger=store)


@given("{count:d} processes on one {store} ledger")
def step_many(context: Context, count: int, store: str) -> None:
    context.stores = [_store(context, store) for _ in range(count)]


@when("each process updates the same scope {times:d} times, all at once")
def step_many_updates(context: Context, times: int) -> None:
    def count(state: ScopeState) -> None:
        state.pauses += 1  # read, changed and written back: an update lost in a race would show as one missing

    async def one(store: QuotaStore) -> None:
        for _ in range(times):
            await store.update(_SCOPE, count)

    async def every() -> None:
        await asyncio.gather(*(one(store) for store in context.stores))

    world(context).run(every())


@then("the scope counted {total:d} updates")
def step_counted(context: Context, total: int) -> None:
    seen: list[int] = []
    world(context).run(context.stores[-1].update(_SCOPE, lambda state: seen.append(state.pauses)))
    assert seen == [total], seen


@when("the first process's update of the scope fails midway")
def step_update_fails(context: Context) -> None:
    def broken(state: ScopeState) -> None:
        state.pauses += 1
        raise RuntimeError("this change fails after changing the state")

    async def update() -> None:
        try:
            await context.stores[0].update(_SCOPE, broken)
        except RuntimeError:
            return
        raise AssertionError("the failing change did not fail")

    world(context).run(update())


@when("the first process updates the scope once more")
def step_first_again(context: Context) -> None:
    def count(state: ScopeState) -> None:
        state.pauses += 1

    world(context).run(context.stores[0].update(_SCOPE, count))


@then("the other process updates the scope at once")
def step_other_updates(context: Context) -> None:
    async def update() -> None:
        await asyncio.wait_for(context.stores[1].update(_SCOPE, lambda state: None), timeout=30)

    world(context).run(update())  # a lock left behind would hold it until the timeout


@then("each process's store names the ledger it shares, without a password")
def step_shared_named(context: Context) -> None:
    for store in context.stores:
        assert store.shared, store
        if isinstance(store, PostgresQuotaStore):
            assert ":***@" in store.shared, store.shared
            assert context.postgres_url != store.shared


async def _admit(state: Shared, name: str, input_tokens: int = 10) -> Permit:
    permit = await state.quotas[name].admit(input_tokens=input_tokens, output_tokens=10)
    state.admitted.append((name, state.clock.now()))
    return permit


async def _calls(state: Shared, name: str, count: int) -> None:
    quota = state.quotas[name]

    async def one() -> None:
        permit = await _admit(state, name)
        quota.release(permit)
        quota.succeeded()

    await asyncio.gather(*(one() for _ in range(count)))


@when("each process admits {count:d} calls at once, each call ending at once")
def step_each_admits(context: Context, count: int) -> None:
    state = shared(context)

    async def both() -> None:
        await asyncio.gather(_calls(state, "A", count), _calls(state, "B", count))

    world(context).run(both())


@when("process {name} admits {count:d} calls at once, each call ending at once")
def step_one_admits(context: Context, name: str, count: int) -> None:
    state = shared(context)
    world(context).run(_calls(state, name, count))


@when("process A admits a call of {estimate:d} input tokens that ends having used {used:d}")
def step_refund(context: Context, estimate: int, used: int) -> None:
    state = shared(context)

    async def call() -> None:
        permit = await _admit(state, "A", estimate)
        state.quotas["A"].release(permit, input_tokens=used, output_tokens=10)

    world(context).run(call())


@when("process B admits a call of {estimate:d} input tokens")
def step_b_tokens(context: Context, estimate: int) -> None:
    state = shared(context)

    async def call() -> None:
        # A's next admission carries its refund to the ledger; here A admits a small call first, as a busy process
        # would, and B's call comes after it.
        permit = await _admit(state, "A", 1)
        state.quotas["A"].release(permit)
        state.admitted.clear()
        await _admit(state, "B", estimate)

    world(context).run(call())


@when("process A is paused for {seconds:d} seconds by a 429")
def step_pause(context: Context, seconds: int) -> None:
    state = shared(context)
    state.paused_at = state.clock.now()
    world(context).run(state.quotas["A"].pause(seconds))


@when("process A learns from the headers a limit of {limit:d} requests per minute, {left:d} left")
def step_learn(context: Context, limit: int, left: int) -> None:
    state = shared(context)
    state.quotas["A"].learn(QuotaReport(requests=Budget(limit, left)))

    async def carry() -> None:
        permit = await state.quotas["A"].admit(input_tokens=0, output_tokens=0)  # carries what A learned
        state.quotas["A"].release(permit)

    world(context).run(carry())


@when("process A admits {count:d} calls and is killed before any ends")
def step_killed(context: Context, count: int) -> None:
    state = shared(context)

    async def take() -> None:
        for _ in range(count):
            await _admit(state, "A")

    world(context).run(take())
    del state.quotas["A"]  # never settles, never speaks again


@when("process B admits 1 call")
def step_b_one(context: Context) -> None:
    state = shared(context)
    world(context).run(_calls(state, "B", 1))


@then("all {count:d} calls were admitted")
def step_all_admitted(context: Context, count: int) -> None:
    assert len(shared(context).admitted) == count, len(shared(context).admitted)


@then("at every moment, at most {burst:d} calls plus one every {every:g} seconds since the start were admitted in all")
def step_under_rate(context: Context, burst: int, every: float) -> None:
    state = shared(context)
    moments = sorted(at - state.started for _, at in state.admitted)
    for count, at in enumerate(moments, start=1):
        allowed = burst + int(at / every + 1e-9)
        assert count <= allowed, f"{count} admitted by {at:.3f} s; at most {allowed} allowed"
    assert moments[-1] >= (len(moments) - burst) * every - 1e-6, moments[-1]


@then("each process had its {count:d} calls admitted")
def step_each_admitted(context: Context, count: int) -> None:
    state = shared(context)
    for name in ("A", "B"):
        assert sum(1 for who, _ in state.admitted if who == name) == count, name


@then("{count:d} calls were admitted within the first second")
def step_early_count(context: Context, count: int) -> None:
    state = shared(context)
    early = [at for _, at in state.admitted if at - state.started < 1.0]
    assert len(early) == count, len(early)


@then("process B's call was admitted at once")
def step_b_at_once(context: Context) -> None:
    state = shared(context)
    [(name, at)] = state.admitted
    assert name == "B", name
    assert at - state.started < 1e-6, at - state.started


@then("process B's first call was admitted {seconds:d} seconds after the pause began")
def step_b_after_pause(context: Context, seconds: int) -> None:
    state = shared(context)
    first = min(at for name, at in state.admitted if name == "B")
    assert abs(first - state.paused_at - seconds) < 0.01, first - state.paused_at


@then("process B's observers saw the pause start and end")
def step_b_events(context: Context) -> None:
    kinds = [type(e) for e in shared(context).events["B"]]
    assert kinds == [PauseStarted, PauseEnded], kinds


@then("process B's concurrency fell back to its ramp start after the pause")
def step_b_ramp(context: Context) -> None:
    quota = shared(context).quotas["B"]
    assert quota.pauses == 1, quota.pauses
    # 10 calls succeeded from the ramp start of 4, one step each: 14.
    assert quota.cap == 14, quota.cap


@then("process B admitted {count:d} calls at once ({why}), and the {nth:d}th {seconds:d} seconds later")
def step_b_learned(context: Context, count: int, why: str, nth: int, seconds: int) -> None:
    state = shared(context)
    moments = sorted(at for name, at in state.admitted if name == "B")
    first = moments[0]
    assert sum(1 for at in moments if at - first < 1e-6) == count, moments
    assert abs(moments[nth - 1] - first - seconds) < 0.01, moments[nth - 1] - first


@then("process B knows the limit of {rpm:d} requests per minute")
def step_b_knows(context: Context, rpm: int) -> None:
    assert shared(context).quotas["B"].known_limits[0] == rpm, shared(context).quotas["B"].known_limits


@then("process B's call was admitted {seconds:d} seconds after the start")
def step_b_refilled(context: Context, seconds: int) -> None:
    state = shared(context)
    [at] = [at for name, at in state.admitted if name == "B"]
    assert abs(at - state.started - seconds) < 0.01, at - state.started


@then("the actor's ledger holds one shared quota scope, in which the API key does not appear")
def step_ledger_scope(context: Context) -> None:
    actor = next(iter(context.live_mode.actors.values()))  # the live actor of live_concurrency_steps
    assert isinstance(actor.ledger, Ledger), actor.ledger
    path = actor.ledger.path
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT scope, state FROM live_quotas").fetchall()
    assert len(rows) == 1, rows
    assert "live-key" not in rows[0][0], rows
    assert "live-key" not in rows[0][1], rows
    assert b"live-key" not in path.read_bytes()


@then("no ledger was opened for the actor")
def step_no_ledger(context: Context) -> None:
    actor = next(iter(context.live_mode.actors.values()))  # the live actor of live_concurrency_steps
    assert not isinstance(actor._ledger, Ledger), actor._ledger  # pyright: ignore[reportPrivateUsage]
