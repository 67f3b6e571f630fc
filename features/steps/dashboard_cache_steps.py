"""Steps of `dashboard_cache.feature`: `Cached` (the dashboard's kept counts) with a clock moved by the counts
themselves and a background run by hand, and `DashboardData.runs` over a ledger whose runs are slow to count."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, cast

from _dashboard import shown_run
from _stores import open_store
from dashboard_ledgers import answer_waiting, build
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.dashboard.cache import NOT_YET, Cached
from lowtide.dashboard.data import DashboardData, Json
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.views import LedgerViews, RunProgress

NOW = 1_700_000_000.0


@dataclass
class Counting:
    """A clock that only the counts move, the background's jobs, what each name's reads gave."""

    cost: float = 0.0
    now: float = NOW
    counted: dict[str, int] = field(default_factory=dict)
    reads: dict[str, list[int]] = field(default_factory=dict)
    waiting: list[Callable[[], None]] = field(default_factory=list)
    unreadable: bool = False
    held: threading.Event | None = None
    logged: list[str] = field(default_factory=list)

    def clock(self) -> float:
        return self.now

    def count(self, name: str) -> Callable[[], int]:
        def compute() -> int:
            if self.unreadable:
                raise RuntimeError("the ledger is unreadable")
            if self.held is not None:
                assert self.held.wait(30), "the first count was never released"
            self.now += self.cost
            self.counted[name] = self.counted.get(name, 0) + 1
            return self.counted[name]

        return compute

    def run_waiting(self) -> None:
        jobs, self.waiting[:] = list(self.waiting), []
        for job in jobs:
            job()


class _Logged(logging.Handler):
    def __init__(self, into: list[str]) -> None:
        super().__init__()
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(record.getMessage())


class Context(StepContext, Protocol):
    counting: Counting
    cache: Cached
    thread_reads: list[int]
    readers: list[threading.Thread]
    dashboard: DashboardData
    dashboard_store: LedgerStore
    runs_page: Json


def _cache(context: Context, cost: float) -> None:
    context.counting = Counting(cost=cost)
    context.cache = Cached(1.0, clock=context.counting.clock, background=context.counting.waiting.append)
    handler = _Logged(context.counting.logged)
    logger = logging.getLogger("lowtide.dashboard")
    logger.addHandler(handler)
    context.add_cleanup(logger.removeHandler, handler)


def _read(context: Context, name: str, version: int | None = None, *, final: bool = False) -> None:
    value = context.cache.get(
        name, context.counting.count(name), version=version, final=(lambda _: True) if final else None
    )
    context.counting.reads.setdefault(name, []).append(value)


@given("a dashboard cache whose counts each take {seconds:g} seconds")
def step_cache(context: Context, seconds: float) -> None:
    _cache(context, seconds)


@given('"{name}" was read once')
def step_read_once(context: Context, name: str) -> None:
    _read(context, name)


@given('"{name}" was read once as version {version:d}, final')
def step_read_final(context: Context, name: str, version: int) -> None:
    _read(context, name, version, final=True)


@when("{seconds:g} seconds pass on the counting clock")
def step_pass(context: Context, seconds: float) -> None:
    context.counting.now += seconds


@when('"{name}" is read {times:d} time')
@when('"{name}" is read {times:d} times')
def step_read(context: Context, name: str, times: int) -> None:
    for _ in range(times):
        _read(context, name)


@when('"{name}" is read {times:d} time as version {version:d}')
def step_read_version(context: Context, name: str, times: int, version: int) -> None:
    for _ in range(times):
        _read(context, name, version, final=True)


@when("the ledger becomes unreadable")
def step_unreadable(context: Context) -> None:
    context.counting.unreadable = True


@when("the ledger becomes readable again")
def step_readable(context: Context) -> None:
    context.counting.unreadable = False


@when("the counts waiting in the background are made")
def step_background(context: Context) -> None:
    context.counting.run_waiting()


@then('"{name}" was counted {times:d} time')
@then('"{name}" was counted {times:d} times')
def step_counted(context: Context, name: str, times: int) -> None:
    assert context.counting.counted.get(name, 0) == times, context.counting.counted


@then('every read of "{name}" gave count {value:d}')
def step_every(context: Context, name: str, value: int) -> None:
    reads = context.counting.reads[name]
    assert reads, "never read"
    assert all(r == value for r in reads), reads


@then('the last read of "{name}" gave count {value:d}')
def step_last(context: Context, name: str, value: int) -> None:
    assert context.counting.reads[name][-1] == value, context.counting.reads[name]


@then('{number:d} count of "{name}" waits in the background')
def step_waits(context: Context, number: int, name: str) -> None:
    assert len(context.counting.waiting) == number, f"{len(context.counting.waiting)} waiting"


@then('no count of "{name}" waits in the background')
def step_none_waits(context: Context, name: str) -> None:
    assert not context.counting.waiting, f"{len(context.counting.waiting)} waiting"


@then('the dashboard logged "{text}"')
def step_logged(context: Context, text: str) -> None:
    assert any(text in line for line in context.counting.logged), context.counting.logged


@then('reading "{name}" fails with "{text}"')
def step_fails(context: Context, name: str, text: str) -> None:
    failed: RuntimeError | None = None
    try:
        _read(context, name)
    except RuntimeError as error:
        failed = error
    assert failed is not None, f"the read gave {context.counting.reads[name][-1]}"
    assert text in str(failed), failed


@given('a dashboard cache whose first count of "{name}" is held until released')
def step_held(context: Context, name: str) -> None:
    _cache(context, 0.0)
    context.counting.held = threading.Event()


@when('{threads:d} threads read "{name}" while its first count is held')
def step_threads(context: Context, threads: int, name: str) -> None:
    context.thread_reads = []
    started = threading.Barrier(threads + 1)

    def reader() -> None:
        started.wait()
        context.thread_reads.append(context.cache.get(name, context.counting.count(name)))

    context.readers = [threading.Thread(target=reader) for _ in range(threads)]
    for worker in context.readers:
        worker.start()
    started.wait()


@when("the first count is released")
def step_release(context: Context) -> None:
    assert context.counting.held is not None
    context.counting.held.set()
    for worker in context.readers:
        worker.join(30)
        assert not worker.is_alive(), "a reader still waits"


@then('every thread read "{name}" as count {value:d}')
def step_threads_read(context: Context, name: str, value: int) -> None:
    assert len(context.thread_reads) == len(context.readers), context.thread_reads
    assert set(context.thread_reads) == {value}, context.thread_reads


class _SlowViews:
    """A store's views whose runs take the counting clock's cost to count."""

    def __init__(self, views: LedgerViews, counting: Counting) -> None:
        self._views = views
        self._counting = counting

    def run_progress(self, run_id: str) -> RunProgress | None:
        self._counting.now += self._counting.cost
        return self._views.run_progress(run_id)

    def __getattr__(self, name: str) -> object:
        return getattr(self._views, name)


class _SlowStore:
    def __init__(self, store: LedgerStore, counting: Counting) -> None:
        self._store = store
        self.views = _SlowViews(store.views, counting)

    def __getattr__(self, name: str) -> object:
        return getattr(self._store, name)


@given("the dashboard's ledger in memory, read by a dashboard whose counts of a run take {seconds:g} seconds")
def step_slow_dashboard(context: Context, seconds: float) -> None:
    context.counting = Counting(cost=seconds)
    context.dashboard_store = open_store(context, "memory")
    build(context.dashboard_store, now=NOW)
    slow = cast(LedgerStore, _SlowStore(context.dashboard_store, context.counting))  # reads as the store reads
    context.dashboard = DashboardData(slow, clock=context.counting.clock, patience=0.0)
    context.dashboard.cache = Cached(1.0, clock=context.counting.clock, background=context.counting.waiting.append)


@when("the Runs page is read")
def step_runs_page(context: Context) -> None:
    context.runs_page = context.dashboard.runs()


@when("the run in progress's waiting batch is answered")
def step_answer_waiting(context: Context) -> None:
    answer_waiting(context.dashboard_store, now=context.counting.now)


def _shown(context: Context, run_id: str) -> Json:
    return shown_run(context.runs_page, run_id)


@then(
    'the run "{run_id}" shows {succeeded:d} succeeded and {waiting:d} waiting,'
    " counted {seconds:d} seconds before the page"
)
def step_run_shows(context: Context, run_id: str, succeeded: int, waiting: int, seconds: int) -> None:
    run = _shown(context, run_id)
    counts = run["counts"]
    assert isinstance(counts, dict)
    assert (counts["succeeded"], counts["waiting"]) == (succeeded, waiting), counts
    now, counted_at = context.runs_page["now"], run["counted_at"]
    assert isinstance(now, float)
    assert isinstance(counted_at, float)
    assert round(now - counted_at) == seconds, f"counted {now - counted_at} s before the page"


@then('the run "{run_id}" is shown as being counted, with its {items:d} items')
def step_run_counting(context: Context, run_id: str, items: int) -> None:
    run = _shown(context, run_id)
    assert (run["state"], run["items"]) == ("counting", items), run
    assert "counts" not in run, run


def _within(context: Context, name: str) -> None:
    value = context.cache.within(name, context.counting.count(name), 0.0)
    context.counting.reads.setdefault(name, []).append(-1 if value is NOT_YET else value)


@when('"{name}" is read by a page that does not wait')
def step_within(context: Context, name: str) -> None:
    _within(context, name)


@then('the page was told "{name}" is not counted yet')
def step_not_yet(context: Context, name: str) -> None:
    assert context.counting.reads[name][-1] == -1, context.counting.reads[name]


@then('reading "{name}" by a page that does not wait fails with "{text}"')
def step_within_fails(context: Context, name: str, text: str) -> None:
    failed: RuntimeError | None = None
    try:
        _within(context, name)
    except RuntimeError as error:
        failed = error
    assert failed is not None, f"the read gave {context.counting.reads[name][-1]}"
    assert text in str(failed), failed


@then('the run "{run_id}" is finished')
def step_run_finished(context: Context, run_id: str) -> None:
    assert _shown(context, run_id)["state"] == "finished", _shown(context, run_id)
