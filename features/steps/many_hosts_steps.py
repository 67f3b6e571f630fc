"""Steps for many hosts on one PostgreSQL ledger: real processes (or engines of one process given different host ids),
the real clock, an emulated API on a loopback socket, and the scenario's database (`context.postgres_url`)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import anthropic
from _support import emulated_reply_to
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import Actor, ActorResponse
from lowtide.batching.engine.batch_engine import BatchEngine
from lowtide.core.clock import SystemClock
from lowtide.core.hosts import HOST_ID_ENV
from lowtide.emulator import Emulator
from lowtide.http.server import app_in_thread
from lowtide.ledger.records import BatchIntent, NewRequest, RequestRecord, RequestState
from lowtide.ledger.store import LedgerStore, open_ledger
from lowtide.messages.answers import TextAnswer

if TYPE_CHECKING:
    from lowtide.ledger.postgres.ledger import PostgresLedger


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    many_hosts: Hosts
    many_hosts_gave_up_at: float
    """When (monotonic) a host's callers had all given their calls up."""
    many_hosts_states_asked: list[tuple[float, str]]
    """When each counted read of a state began, and its key (many_hosts_gathered_steps.py)."""
    many_hosts_holder: PostgresLedger
    many_hosts_late: list[asyncio.Future[None]]
    many_hosts_listeners: list[threading.Thread]
    many_hosts_locked: set[str]
    many_hosts_pending: int
    many_hosts_batches: dict[str, list[str]]
    many_hosts_process: subprocess.Popen[str]
    many_hosts_read: RequestRecord
    many_hosts_settled: str
    many_hosts_stored_at: float
    many_hosts_taken: set[str]
    many_hosts_took: float


_MODEL = "claude-sonnet-5-5"
_HANG = 60.0
_TIMER = 30.0
"""Seconds a waiting host reads the ledger at most by its own timer (its watch of another host's batch, its lease)."""


@dataclass
class Hosts:
    url: str = ""
    emulator: Emulator | None = None
    api: str = ""
    requests: list[tuple[str, str, float]] = field(default_factory=list[tuple[str, str, float]])
    """(method, path, when) of every call the API received."""
    actors: dict[str, Actor] = field(default_factory=dict[str, Actor])
    answered: dict[str, list[tuple[ActorResponse[Any], float]]] = field(
        default_factory=dict[str, list[tuple[ActorResponse[Any], float]]]
    )
    prompts: dict[str, str] = field(default_factory=dict[str, str])
    client: anthropic.AsyncAnthropic | None = None
    killed_at: float = 0.0
    lease_ended: float = 0.0
    taken: list[bool] = field(default_factory=list[bool])
    woken: list[float] = field(default_factory=list[float])
    closed: list[object] = field(default_factory=list[object])
    """What each call of a host whose actor was closed while they waited ended with (`step_close_while_watched`)."""
    closed_in: float = 0.0
    """Seconds from that actor's close to the end of its last call."""


def hosts(context: Context) -> Hosts:
    if not hasattr(context, "many_hosts"):
        context.many_hosts = Hosts(url=context.postgres_url)
        saved = os.environ.get(HOST_ID_ENV)

        def restore() -> None:
            if saved is None:
                os.environ.pop(HOST_ID_ENV, None)
            else:
                os.environ[HOST_ID_ENV] = saved

        context.cleanups.append(restore)
    return context.many_hosts


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _keys(first: str, last: str) -> list[str]:
    stem = first.rsplit("-", 1)[0]
    return [f"{stem}-{n}" for n in range(int(first.rsplit("-", 1)[1]), int(last.rsplit("-", 1)[1]) + 1)]


def _actor_settings(name: str, *, poll: float, lease: float, watch: float, window: float = 0.1) -> dict[str, Any]:
    return {
        "name": name,
        "model": _MODEL,
        "max_tokens": 64,
        "batch_processing": "batch",
        "batch": {"poll_interval": poll, "coalesce_window": window, "lease_seconds": lease, "watch_interval": watch},
    }


@given("an emulated API on a socket, whose batches take {seconds:g} seconds")
def step_api_on_socket(context: Context, seconds: float) -> None:
    state = hosts(context)
    port = _free_port()
    state.api = f"http://127.0.0.1:{port}"
    state.emulator = emulator = Emulator(processing_seconds=seconds, base_url=state.api)

    async def recorded(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            state.requests.append((str(scope["method"]), str(scope["path"]), time.time()))
        await emulator.app(scope, receive, send)

    serving = app_in_thread(recorded, port=port)
    serving.__enter__()
    context.cleanups.append(lambda: serving.__exit__(None, None, None))


@given('host "{host}" runs an actor on the scenario\'s PostgreSQL ledger, polling every {poll:g} seconds')
def step_host_actor(context: Context, host: str, poll: float) -> None:
    state = hosts(context)
    client = anthropic.AsyncAnthropic(base_url=state.api, api_key="hosts-key", max_retries=0)
    # Reading the ledger every 30 seconds at most: only the database's notice can wake a waiting host sooner.
    actor = Actor(
        _actor_settings(f"agent-{host}", poll=poll, lease=_TIMER, watch=_TIMER), client=client, ledger=state.url
    )
    state.actors[host] = actor
    context.cleanups.append(actor.aclose)


@given('host "{host}" runs an actor on the scenario\'s PostgreSQL ledger, gathering calls for {window:g} seconds')
def step_host_window(context: Context, host: str, window: float) -> None:
    state = hosts(context)
    # One client for both: an injected client is a credential of its own, and calls go in one batch only when made
    # with the same credentials (processes that build their own clients from one key share them).
    if state.client is None:
        state.client = anthropic.AsyncAnthropic(base_url=state.api, api_key="hosts-key", max_retries=0)
    client = state.client
    settings = _actor_settings(f"agent-{host}", poll=0.2, lease=30, watch=30, window=window)
    actor = Actor(settings, client=client, ledger=state.url)
    state.actors[host] = actor
    context.cleanups.append(actor.aclose)


@when('host "{first}" asks for the keys "{a_low}" to "{a_high}" while host "{second}" asks for "{b_low}" to "{b_high}"')
def step_both_at_once(
    context: Context, first: str, a_low: str, a_high: str, second: str, b_low: str, b_high: str
) -> None:
    state = hosts(context)

    async def both() -> None:
        # Each host's engine is made under its own host id, in turn, then both ask in the same moment.
        asking = asyncio.ensure_future(_ask(state, first, _keys(a_low, a_high)))
        await asyncio.sleep(0)
        await _ask(state, second, _keys(b_low, b_high))
        await asking

    context.runner.run(both())


@when(
    'host "{first}" asks for the keys "{a_low}" to "{a_high}" while host "{second}" asks for "{b_low}" to "{b_high}",'
    " giving them up after {seconds:g} seconds, once their states have been looked at"
)
def step_both_one_gives_up(
    context: Context, first: str, a_low: str, a_high: str, second: str, b_low: str, b_high: str, seconds: float
) -> None:
    state = hosts(context)

    async def both() -> None:
        asking = asyncio.ensure_future(_ask(state, first, _keys(a_low, a_high)))
        await asyncio.sleep(0)
        os.environ[HOST_ID_ENV] = second
        actor = state.actors[second]
        calls: list[asyncio.Future[ActorResponse[Any]]] = []
        for key in _keys(b_low, b_high):
            state.prompts[key] = f"Question {key}"
            calls.append(asyncio.ensure_future(actor.run(f"Question {key}", key=key)))
        await asyncio.sleep(seconds)
        # Not before host "second" looked at them once: on a loaded machine its first look (its gathering's end, its
        # intent finding them in the other host's hands) can come later than `seconds`, and the scenario would then
        # check nothing about the looks after the callers gave up.
        looked_at = set(_keys(b_low, b_high))
        for _ in range(1200):
            if any(key in looked_at for _, key in context.many_hosts_states_asked):
                break
            await asyncio.sleep(0.05)
        for call in calls:  # each caller gives its call up: cancelled, as a caller's timeout would
            call.cancel()
        given_up = await asyncio.gather(*calls, return_exceptions=True)
        assert all(isinstance(outcome, asyncio.CancelledError) for outcome in given_up), given_up
        context.many_hosts_gave_up_at = time.monotonic()
        await asking

    context.runner.run(both())


@then('host "{host}" got the emulated replies for its {count:d} keys, the other host none')
def step_one_answered(context: Context, host: str, count: int) -> None:
    state = hosts(context)
    assert list(state.answered) == [host], state.answered.keys()
    step_both_own(context, count)


@then("both hosts got the emulated replies for their {count:d} keys")
def step_both_own(context: Context, count: int) -> None:
    state = hosts(context)
    keys = {record.custom_id: record.key for record in open_ledger(state.url).requests()}
    for host, answers in state.answered.items():
        assert len(answers) == count, (host, answers)
        for answer, _ in answers:
            key = keys[answer.ids.custom_id or ""]
            assert answer.text.startswith(emulated_reply_to(state.prompts[key])), (host, key, answer.text)


@then("that batch holds the {count:d} requests of both hosts")
def step_batch_holds(context: Context, count: int) -> None:
    state = hosts(context)
    [batch] = [b for b in open_ledger(state.url).batches() if b.provider_batch_id]
    assert batch.request_count == count, batch
    batch_ids = {answer.ids.batch_id for answers in state.answered.values() for answer, _ in answers}
    assert batch_ids == {batch.provider_batch_id}, batch_ids


async def _ask(state: Hosts, host: str, keys: list[str]) -> None:
    os.environ[HOST_ID_ENV] = host  # the host its engine is made on, and the one it judges others' liveness from
    actor = state.actors[host]

    async def one(key: str) -> tuple[ActorResponse[Any], float]:
        state.prompts[key] = f"Question {key}"
        answer = await actor.run(f"Question {key}", key=key)
        return answer, time.time()

    state.answered[host] = list(await asyncio.wait_for(asyncio.gather(*(one(key) for key in keys)), _HANG))


async def _batch_exists(url: str) -> None:
    ledger = open_ledger(url)
    deadline = time.monotonic() + _HANG
    while not any(batch.provider_batch_id for batch in ledger.batches()):
        assert time.monotonic() < deadline, "no batch was created"
        await asyncio.sleep(0.05)


@when(
    'host "{first}" asks for the keys "{low}" to "{high}", and once their batch exists host "{second}" asks for the'
    " same keys"
)
def step_two_hosts_ask(context: Context, first: str, low: str, high: str, second: str) -> None:
    state = hosts(context)
    keys = _keys(low, high)

    async def both() -> None:
        asking = asyncio.ensure_future(_ask(state, first, keys))
        await _batch_exists(state.url)
        await _ask(state, second, keys)
        await asking

    context.runner.run(both())


@given('host "{host}"\'s calls take {seconds:g} seconds to decide whether to poll a batch')
def step_slow_decision(context: Context, host: str, seconds: float) -> None:
    from lowtide.batching.engine.waiting import Waiting

    decide = Waiting._decide_poll  # pyright: ignore[reportPrivateUsage]

    async def slow(self: Waiting, batch_id: str) -> bool:
        # That host's calls find their batch polled elsewhere only once it has ended: they start to wait on it after
        # its last notice, with records read before.
        if self.owner.startswith(f"{host}/"):
            await asyncio.sleep(seconds)
        return await decide(self, batch_id)

    Waiting._decide_poll = slow  # pyright: ignore[reportPrivateUsage]

    def restore() -> None:
        Waiting._decide_poll = decide  # pyright: ignore[reportPrivateUsage]

    context.cleanups.append(restore)


@when(
    'host "{first}" asks for the keys "{low}" to "{high}", and once their batch exists host "{second}" asks for the'
    " same keys one every {gap:g} seconds"
)
def step_two_hosts_ask_in_turn(context: Context, first: str, low: str, high: str, second: str, gap: float) -> None:
    state = hosts(context)
    keys = _keys(low, high)

    async def both() -> None:
        asking = asyncio.ensure_future(_ask(state, first, keys))
        await _batch_exists(state.url)
        os.environ[HOST_ID_ENV] = second
        actor = state.actors[second]

        async def one(key: str) -> tuple[ActorResponse[Any], float]:
            answer = await actor.run(f"Question {key}", key=key)
            return answer, time.time()

        calls: list[asyncio.Future[tuple[ActorResponse[Any], float]]] = []
        for key in keys:  # each a call registering its wait while the host's watcher of the batch reads or waits
            calls.append(asyncio.ensure_future(one(key)))
            await asyncio.sleep(gap)
        state.answered[second] = list(await asyncio.wait_for(asyncio.gather(*calls), _HANG))
        await asking

    context.runner.run(both())


@when(
    'host "{first}" asks for the keys "{low}" to "{high}", and once their batch exists host "{second}" waits for the'
    " same keys' results and closes its actor while its watcher of that batch holds them"
)
def step_close_while_watched(context: Context, first: str, low: str, high: str, second: str) -> None:
    """Host `second` waits for the keys' results (`Actor.result`: its own task waits, no task of the engine's between)
    on the batch host `first` polls, through `second`'s one watcher of it; once that watcher holds every key,
    `second`'s actor is closed (its engine with it), and how its calls ended is kept."""
    from lowtide.batching.engine.shared_state import BatchWatch
    from lowtide.batching.engine.waiting import Waiting

    state = hosts(context)
    keys = _keys(low, high)
    watch_batch = Waiting._watch_batch  # pyright: ignore[reportPrivateUsage]
    watches: list[BatchWatch] = []

    async def noted(self: Waiting, batch_id: str, watch: BatchWatch) -> None:
        if self.owner.startswith(f"{second}/"):
            watches.append(watch)
        await watch_batch(self, batch_id, watch)

    Waiting._watch_batch = noted  # pyright: ignore[reportPrivateUsage]

    def restore() -> None:
        Waiting._watch_batch = watch_batch  # pyright: ignore[reportPrivateUsage]

    context.cleanups.append(restore)

    async def both() -> None:
        asking = asyncio.ensure_future(_ask(state, first, keys))
        await _batch_exists(state.url)
        os.environ[HOST_ID_ENV] = second
        actor = state.actors[second]
        calls = [asyncio.ensure_future(actor.result(key)) for key in keys]
        deadline = time.monotonic() + _HANG
        while not (watches and set(watches[0].waiting) == set(keys)):
            assert time.monotonic() < deadline, f"host {second}'s calls never all waited on its watcher"
            assert not any(call.done() for call in calls), [call for call in calls if call.done()]
            await asyncio.sleep(0.02)
        closed = time.monotonic()
        await actor.aclose()
        done, _ = await asyncio.wait(calls, timeout=15)  # (the batch ends 20 seconds after it was made)
        ended: list[object] = [
            (call.exception() or call.result()) if not call.cancelled() else asyncio.CancelledError() for call in done
        ]
        for call in calls:
            call.cancel()
        state.closed_in = time.monotonic() - closed
        state.closed = list(ended)
        await asking

    context.runner.run(both())


@then("host \"{host}\"'s {count:d} calls all ended cancelled, within {seconds:g} seconds of its actor's close")
def step_calls_cancelled(context: Context, host: str, count: int, seconds: float) -> None:
    state = hosts(context)
    assert len(state.closed) == count, f"{len(state.closed)} of {count} calls ended: {state.closed}"
    assert all(isinstance(ended, asyncio.CancelledError) for ended in state.closed), state.closed
    assert state.closed_in < seconds, state.closed_in


@when(
    'host "{host}" asks for the keys "{low}" to "{high}", and while its window is open another host gathers them and'
    " stops before its intent"
)
def step_gathered_away(context: Context, host: str, low: str, high: str) -> None:
    state = hosts(context)
    keys = _keys(low, high)

    def gather_claimed() -> None:
        # Once the claims are in the ledger (the window lasts a second), a process on another host takes them into
        # a batch of its own and stops before it writes the intent: host-a's window then takes them back.
        import psycopg

        deadline = time.monotonic() + _HANG
        with psycopg.connect(state.url, autocommit=True) as db:
            while True:
                with contextlib.suppress(psycopg.errors.UndefinedTable):  # the ledger's tables are not made yet
                    rows = db.execute("SELECT scope FROM requests WHERE key = ANY(%s)", (keys,)).fetchall()
                    if len(rows) == len(keys):
                        break
                assert time.monotonic() < deadline, "the calls were never claimed"
                time.sleep(0.01)
        [scope] = {row[0] for row in rows}
        taken = open_ledger(state.url).take_pending(
            str(scope), owner="host-g/1/x", until=time.time() + 60, now=time.time(), limit=100, max_bytes=10**9
        )
        assert sorted(row.key for row in taken) == sorted(keys), taken

    async def ask() -> None:
        asking = asyncio.ensure_future(_ask(state, host, keys))
        await asyncio.to_thread(gather_claimed)
        await asking

    context.runner.run(ask())


@when('host "{host}" asks for the keys "{low}" to "{high}", and host "{other}" reads "{key}" while their batch runs')
def step_read_while_running(context: Context, host: str, low: str, high: str, other: str, key: str) -> None:
    state = hosts(context)

    async def ask() -> None:
        asking = asyncio.ensure_future(_ask(state, host, _keys(low, high)))
        await _batch_exists(state.url)
        record = await asyncio.to_thread(open_ledger(state.url).request, key)
        assert record is not None, key
        assert record.state is RequestState.WAITING, record
        context.many_hosts_read = record
        await asking

    context.runner.run(ask())


@when('once host "{host}" has its answers, host "{other}" waits on "{key}" as it read it')
def step_wait_as_read(context: Context, host: str, other: str, key: str) -> None:
    state = hosts(context)
    assert len(state.answered[host]) > 0, state.answered
    record = context.many_hosts_read
    assert record.key == key, record
    os.environ[HOST_ID_ENV] = other
    actor = state.actors[other]
    backend = actor.batch_backend()

    async def wait() -> None:
        # Where a call of this host's that had read the record goes next: the engine's own wait for a final record.
        engine = BatchEngine(backend, actor.ledger, endpoint=backend.endpoint, settings=actor.configuration.batch,
                             clock=SystemClock())  # fmt: skip
        try:
            settled = await asyncio.wait_for(engine._final(record), _HANG)  # pyright: ignore[reportPrivateUsage]
        finally:
            await engine.aclose()
        assert isinstance(settled, ActorResponse | TextAnswer), settled
        context.many_hosts_settled = settled.text

    context.runner.run(wait())


@then('host "{host}" got the emulated reply for "{key}"')
def step_got_reply(context: Context, host: str, key: str) -> None:
    text = context.many_hosts_settled
    assert text.startswith(emulated_reply_to(hosts(context).prompts[key])), (host, key, text)


@then("the API was asked for the batch's results once")
def step_results_once(context: Context) -> None:
    downloads = [path for method, path, _ in hosts(context).requests if method == "GET" and path.endswith("/results")]
    assert len(downloads) == 1, downloads


@then("the ledger holds {results:d} results and {batches:d} batch, collected")
def step_results_held(context: Context, results: int, batches: int) -> None:
    import psycopg

    with psycopg.connect(hosts(context).url) as db:
        row = db.execute("SELECT count(*) FROM results").fetchone()
    assert row is not None
    assert row[0] == results, row
    held = open_ledger(hosts(context).url).batches()
    assert [batch.state.value for batch in held] == ["collected"] * batches, held


@then("both hosts got the emulated replies for the {count:d} keys")
def step_both_answered(context: Context, count: int) -> None:
    state = hosts(context)
    assert len(state.answered) == 2, state.answered.keys()
    for host in state.answered:
        step_host_answered(context, host, count)


@then('host "{host}" got the emulated replies for the {count:d} keys')
def step_host_answered(context: Context, host: str, count: int) -> None:
    state = hosts(context)
    answers = state.answered[host]
    assert len(answers) == count, answers
    for (answer, _), key in zip(answers, sorted(state.prompts), strict=True):
        assert answer.text.startswith(emulated_reply_to(state.prompts[key])), (key, answer.text)


@then("the API created {count:d} batch, with each custom id once")
def step_created_once(context: Context, count: int) -> None:
    emulator = hosts(context).emulator
    assert emulator is not None
    assert emulator.created_batches == count, emulator.created_batches
    assert emulator.created_custom_ids, "no request was created"
    assert set(emulator.created_custom_ids.values()) == {1}, emulator.created_custom_ids


@then('host "{later}" had its answers from the database\'s notice, long before a timer of its own could fire')
def step_woken_soon(context: Context, later: str) -> None:
    state = hosts(context)
    first = max(at for _, at in state.answered["host-a"])
    then_ = max(at for _, at in state.answered[later])
    # The waiting host's own timers are 30 seconds (its watch) and 100 (its poller): answers within a third of the
    # shortest can only have come from the database's notice. A third, not "2 seconds": on a machine loaded to 28 the
    # notice's path took 2.3 s, and the margin is what tells a notice from a timer, not how fast the machine is.
    assert then_ - first < _TIMER / 3, f"{then_ - first:.1f} s after host-a: woken by a timer, not the notice"


@then("the ledger holds {requests:d} requests and {batches:d} batch, collected")
def step_ledger_holds(context: Context, requests: int, batches: int) -> None:
    ledger = open_ledger(hosts(context).url)
    assert len(ledger.requests()) == requests, ledger.requests()
    held = ledger.batches()
    assert [batch.state.value for batch in held] == ["collected"] * batches, held


_PROGRAM = textwrap.dedent(
    """
    import asyncio, sys
    import anthropic
    from lowtide import Actor

    api, ledger, lease, keys = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4:]

    async def main():
        client = anthropic.AsyncAnthropic(base_url=api, api_key="hosts-key", max_retries=0)
        settings = {"name": "agent-host-a", "model": "MODEL", "max_tokens": 64, "batch_processing": "batch",
                    "batch": {"poll_interval": 0.2, "coalesce_window": 0.1, "lease_seconds": lease,
                              "watch_interval": 0.5}}
        actor = Actor(settings, client=client, ledger=ledger)
        await asyncio.gather(*(actor.submit(f"Question {key}", key=key) for key in keys))
        print("submitted", flush=True)
        await asyncio.gather(*(actor.result(key) for key in keys))

    asyncio.run(main())
    """
).replace("MODEL", _MODEL)


@given(
    'host "{host}" is a separate process that submits the keys "{low}" to "{high}" on the scenario\'s PostgreSQL'
    " ledger with a lease of {lease:g} seconds, and keeps polling"
)
def step_separate_host(context: Context, host: str, low: str, high: str, lease: float) -> None:
    state = hosts(context)
    keys = _keys(low, high)
    for key in keys:
        state.prompts[key] = f"Question {key}"
    process = subprocess.Popen(
        [sys.executable, "-c", _PROGRAM, state.api, state.url, str(lease), *keys],
        stdout=subprocess.PIPE,
        env={**os.environ, HOST_ID_ENV: host},
        text=True,
    )
    context.many_hosts_process = process

    def stop() -> None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        process.wait()

    context.cleanups.append(stop)


@when('host "{host}" is killed with SIGKILL once its batch exists')
def step_kill_host(context: Context, host: str) -> None:
    state = hosts(context)
    process: subprocess.Popen[str] = context.many_hosts_process
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.strip() == "submitted", line
    process.send_signal(signal.SIGKILL)
    process.wait()
    state.killed_at = time.time()
    import psycopg

    with psycopg.connect(state.url) as db:
        row = db.execute("SELECT max(lease_until) FROM owners WHERE host = %s", (host,)).fetchone()
    assert row is not None, "the killed host kept no lease"
    assert row[0] is not None, "the killed host kept no lease"
    state.lease_ended = float(row[0])


@when('host "{host}" asks for the keys "{low}" to "{high}" with a lease of {lease:g} seconds')
def step_host_asks(context: Context, host: str, low: str, high: str, lease: float) -> None:
    state = hosts(context)
    client = anthropic.AsyncAnthropic(base_url=state.api, api_key="hosts-key", max_retries=0)
    state.actors[host] = actor = Actor(
        _actor_settings(f"agent-{host}", poll=0.2, lease=lease, watch=0.5), client=client, ledger=state.url
    )
    context.cleanups.append(actor.aclose)
    context.runner.run(_ask(state, host, _keys(low, high)))


@then('host "{taker}" took the batch over only after host "{dead}"\'s lease had run out')
def step_taken_after_lease(context: Context, taker: str, dead: str) -> None:
    state = hosts(context)
    looks = [at for method, path, at in state.requests if method == "GET" and "/messages/batches/" in path]
    after_kill = [at for at in looks if at > state.killed_at]
    assert after_kill, "nobody looked at the batch after the kill"
    # Nobody polled the batch between the kill and the end of the dead host's lease: its batch was left to it.
    assert min(after_kill) >= state.lease_ended, (min(after_kill) - state.lease_ended, state.requests)


# -- leases and notices, on the store itself --------------------------------------------------------------------------


def _pending(ledger: LedgerStore, key: str, owner: str, until: float) -> None:
    request = NewRequest(key=key, custom_id=key, actor="agents", model=_MODEL, params={"prompt": key})
    ledger.claim([request], owner=owner, until=until, now=time.time())


@given(
    'the scenario\'s PostgreSQL ledger holds the pending request "{key}", claimed by host "{host}" whose lease ended'
)
def step_orphan(context: Context, key: str, host: str) -> None:
    state = hosts(context)
    _pending(open_ledger(state.url), key, f"{host}/4242/cafe", until=time.time() - 1)


@when('{count:d} processes on other hosts try to take "{key}" over at once')
def step_contenders(context: Context, count: int, key: str) -> None:
    state = hosts(context)
    from lowtide.ledger.postgres.ledger import PostgresLedger

    stores = [PostgresLedger(state.url) for _ in range(count)]  # a connection pool each, as processes have
    start = threading.Barrier(count)
    taken: list[bool] = []

    def contend(n: int) -> None:
        start.wait()
        now = time.time()
        taken.append(stores[n].take_over(key, owner=f"host-{n}/1/x", until=now + 60, now=now))

    threads = [threading.Thread(target=contend, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(_HANG)
    for store in stores:
        store.close()
    state.taken = taken


@then("exactly {count:d} of them took it")
def step_exactly(context: Context, count: int) -> None:
    taken = hosts(context).taken
    assert taken.count(True) == count, taken


@given(
    'the scenario\'s PostgreSQL ledger holds the pending request "{key}", claimed by host "{host}" while it keeps'
    " its lease"
)
def step_kept(context: Context, key: str, host: str) -> None:
    state = hosts(context)
    from lowtide.ledger.postgres.ledger import PostgresLedger

    holder = PostgresLedger(state.url)  # the other host's own connection to the database
    context.many_hosts_holder = holder
    owner = f"{host}/4242/cafe"
    holder.keep_alive(owner, lease_seconds=60, now=time.time)
    _pending(holder, key, owner, until=time.time() + 1)  # the row's own lease ends at once: the heartbeat holds it


@then('another host cannot take "{key}" over')
def step_cannot(context: Context, key: str) -> None:
    now = time.time() + 5  # after the row's own lease, within the heartbeat's
    assert not open_ledger(hosts(context).url).take_over(key, owner="host-z/1/y", until=now + 60, now=now)


@when('host "{host}" closes its ledger')
def step_close_holder(context: Context, host: str) -> None:
    context.many_hosts_holder.close()


@then('another host takes "{key}" over at once')
def step_takes(context: Context, key: str) -> None:
    now = time.time()
    assert open_ledger(hosts(context).url).take_over(key, owner="host-z/1/y", until=now + 60, now=now)


@given(
    "{count:d} processes listening for the notices of the scenario's PostgreSQL ledger, each waiting on the batch"
    ' "{batch_id}"'
)
def step_listeners(context: Context, count: int, batch_id: str) -> None:
    state = hosts(context)
    from lowtide.ledger.postgres.ledger import PostgresLedger

    ready = threading.Barrier(count + 1)
    woken: list[float] = []

    def listen() -> None:
        store = PostgresLedger(state.url)

        async def wait() -> None:
            notices = store.notices
            event = notices.watch(batch_id)
            ready.wait()
            try:
                await asyncio.wait_for(event.wait(), _HANG)
                woken.append(time.time())
            finally:
                notices.unwatch(batch_id, event)

        try:
            asyncio.run(wait())
        finally:
            store.close()

    threads = [threading.Thread(target=listen) for _ in range(count)]
    for thread in threads:
        thread.start()
    ready.wait(_HANG)
    context.many_hosts_listeners = threads
    state.woken = woken


@when('another process stores results for the batch "{batch_id}"')
def step_store_results(context: Context, batch_id: str) -> None:
    state = hosts(context)
    ledger = open_ledger(state.url)
    now = time.time()
    _pending(ledger, "watched-1", "host-q/1/z", until=now + 60)
    ledger.record_intent(
        BatchIntent(
            batch_id,
            provider="anthropic",
            endpoint=state.api or "http://api.invalid",
            members=[("watched-1", "watched-1")],
            request_bytes=10,
            owner="host-q/1/z",
            until=now + 60,
            now=now,
        )
    )
    context.many_hosts_stored_at = time.time()
    from lowtide.ledger.records import OutcomeRow, RequestState

    ledger.record_outcomes(
        batch_id, [OutcomeRow("watched-1", RequestState.SUCCEEDED, response={"text": "hi"})], now=now
    )


@then("all {count:d} processes were woken by the notice, long before their guard of 60 seconds")
def step_all_woken(context: Context, count: int) -> None:
    for thread in context.many_hosts_listeners:
        thread.join(_HANG)
    woken = hosts(context).woken
    assert len(woken) == count, woken
    # Only the notice sets their events (their guard is _HANG): a third of it tells a notice that came from one that
    # did not, on a machine however loaded, where "2 seconds" measured the machine.
    after = [round(at - context.many_hosts_stored_at, 2) for at in woken]
    assert max(after) < _HANG / 3, after


# -- gathering pending calls across processes (SKIP LOCKED) ----------------------------------------------------------


@given('the scenario\'s PostgreSQL ledger holds {count:d} pending calls of one scope, claimed by host "{host}"')
def step_pending_scope(context: Context, count: int, host: str) -> None:
    state = hosts(context)
    ledger = open_ledger(state.url)
    requests = [
        NewRequest(key=f"call-{n}", custom_id=f"call-{n}", actor="agents", model=_MODEL, params={"n": n}, scope="s1")
        for n in range(1, count + 1)
    ]
    ledger.claim(requests, owner=f"{host}/4242/cafe", until=time.time() + 60, now=time.time())
    context.many_hosts_pending = count


@when(
    'host "{host}" puts its calls into batches of {size:d} while {count:d} processes on other hosts gather them into'
    " batches of their own, all at once"
)
def step_race(context: Context, host: str, size: int, count: int) -> None:
    from lowtide.ledger.postgres.ledger import PostgresLedger  # each thread a process of its own: a store each

    state = hosts(context)
    keys = [f"call-{n}" for n in range(1, context.many_hosts_pending + 1)]
    start = threading.Barrier(count + 1)
    kept: dict[str, list[str]] = {}
    failures: list[BaseException] = []

    def intent(ledger: PostgresLedger, batch: str, members: list[tuple[str, str]], owner: str) -> None:
        now = time.time()
        kept[batch] = ledger.record_intent(
            BatchIntent(
                batch,
                provider="anthropic",
                endpoint="e",
                members=members,
                request_bytes=1,
                owner=owner,
                until=now + 60,
                now=now,
            )
        )

    def gatherer(n: int) -> None:
        ledger = PostgresLedger(state.url)
        owner = f"host-g{n}/1/x"
        try:
            start.wait()
            for round_ in range(20):
                now = time.time()
                taken = ledger.take_pending("s1", owner=owner, until=now + 60, now=now, limit=25, max_bytes=10**9)
                if taken:
                    intent(ledger, f"g{n}-{round_}", [(t.key, t.custom_id) for t in taken], owner)
        except BaseException as exc:  # the scenario fails on it below
            failures.append(exc)
        finally:
            ledger.close()

    def own() -> None:
        ledger = PostgresLedger(state.url)
        try:
            start.wait()
            for n, first in enumerate(range(0, len(keys), size)):
                intent(ledger, f"a-{n}", [(k, k) for k in keys[first : first + size]], f"{host}/4242/cafe")
        except BaseException as exc:
            failures.append(exc)
        finally:
            ledger.close()

    threads = [threading.Thread(target=gatherer, args=(n,)) for n in range(count)]
    threads.append(threading.Thread(target=own))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(_HANG)
    assert not failures, failures
    context.many_hosts_batches = kept


@then("every call is in exactly one batch, which the ledger says it is waiting in")
def step_each_once(context: Context) -> None:
    kept = context.many_hosts_batches
    joined = Counter(key for keys in kept.values() for key in keys)
    assert set(joined.values()) == {1}, [key for key, n in joined.items() if n > 1][:5]
    assert len(joined) == context.many_hosts_pending, sorted(joined)[:5]
    assert len([b for b, keys in kept.items() if not b.startswith("a-") and keys]) > 0, "no other host took a call"
    batch_of = {key: batch for batch, keys in kept.items() for key in keys}
    for record in open_ledger(hosts(context).url).requests():
        assert (record.state.value, record.batch_id) == ("submitting", batch_of[record.key]), record


@given('another process is putting the calls "{low}" to "{high}" into a batch of its own, its transaction open')
def step_locked(context: Context, low: str, high: str) -> None:
    import psycopg

    holder = psycopg.connect(hosts(context).url)  # a transaction left open until the scenario's end
    # What an intent holds while it is written: the queue rows of its members (`pending_requests`, schema 7). (An
    # intent that names its scope also shares the scope's gathering lock, and a gathering then takes none at all:
    # `postgres_ledger.feature`. These rows are locked as by one that does not, or by a take-over.)
    holder.execute("SELECT key FROM pending_requests WHERE key = ANY(%s) FOR UPDATE", (_keys(low, high),))
    context.cleanups.append(holder.close)
    context.many_hosts_locked = set(_keys(low, high))


def _gather(context: Context, owner: str) -> None:
    started = time.monotonic()
    rows = open_ledger(hosts(context).url).take_pending(
        "s1", owner=owner, until=time.time() + 60, now=time.time(), limit=10_000, max_bytes=10**9
    )
    context.many_hosts_took = time.monotonic() - started
    context.many_hosts_taken = {row.key for row in rows}


@when("a process on another host gathers the pending calls of that scope")
def step_gather(context: Context) -> None:
    _gather(context, "host-g/1/x")


@when("a process on a third host gathers the pending calls of that scope")
def step_gather_third(context: Context) -> None:
    _gather(context, "host-t/1/x")


@when("another process is gathering the pending calls of that scope, its transaction open")
def step_gathering_elsewhere(context: Context) -> None:
    import psycopg

    from lowtide.ledger.postgres.steps import GATHERING

    holder = psycopg.connect(hosts(context).url)  # the transaction stays open until the scenario's end
    holder.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (GATHERING, "s1"))
    context.cleanups.append(holder.close)


@then("it took them at once, without waiting for the open transaction")
def step_no_wait(context: Context) -> None:
    assert context.many_hosts_took < 5, context.many_hosts_took  # a wait would last until the scenario's end
    assert context.many_hosts_taken


@then('it took every call but "{low}" to "{high}", which are still host "{host}"\'s')
def step_took_all_but(context: Context, low: str, high: str, host: str) -> None:
    locked = set(_keys(low, high))
    owners = {record.key: record.owner for record in open_ledger(hosts(context).url).requests()}
    assert context.many_hosts_taken == set(owners) - locked, sorted(set(owners) - locked - context.many_hosts_taken)
    for key, owner in owners.items():
        assert owner == (f"{host}/4242/cafe" if key in locked else "host-g/1/x"), (key, owner)


@then("it took none of them, at once")
def step_took_none(context: Context) -> None:
    assert context.many_hosts_took < 5, context.many_hosts_took
    assert context.many_hosts_taken == set(), sorted(context.many_hosts_taken)[:5]


@given('host "{host}"\'s calls after its first come to wait on a batch only once its watch has read past their results')
def step_late_to_watch(context: Context, host: str) -> None:
    from lowtide.batching.backend import Settled
    from lowtide.batching.engine.waiting import Waiting
    from lowtide.ledger.postgres.aio import AsyncPostgresLedger

    watched = Waiting._watched  # pyright: ignore[reportPrivateUsage]
    since = AsyncPostgresLedger.results_since
    read: set[str] = set()
    """The keys whose results a watch has read (its cursor is past them)."""
    read_more = asyncio.Event()
    first: set[str] = set()

    async def reading(self: AsyncPostgresLedger, batch_id: str, after: int | None) -> tuple[list[str], int]:
        keys, cursor = await since(self, batch_id, after)
        if keys:
            read.update(keys)
            read_more.set()
        return keys, cursor

    def late(
        self: Waiting,
        key: str,
        batch_id: str,
        future: asyncio.Future[Settled] | None = None,
        read_after: int | None = None,
    ) -> asyncio.Future[Settled]:
        # The call read its request waiting on the batch, then registers its wait only after the watch read its result
        # (and a little later, when the watch has done with that notice): its key is behind the watch's cursor.
        if not self.owner.startswith(f"{host}/") or not first or key in first:
            first.add(key)
            return watched(self, key, batch_id, future, read_after)
        out = future or asyncio.get_running_loop().create_future()

        async def register() -> None:
            while key not in read:
                read_more.clear()
                await read_more.wait()
            await asyncio.sleep(0.3)
            watched(self, key, batch_id, out, read_after)

        context.many_hosts_late.append(asyncio.ensure_future(register()))
        return out

    context.many_hosts_late = []
    Waiting._watched = late  # pyright: ignore[reportPrivateUsage]
    AsyncPostgresLedger.results_since = reading

    def restore() -> None:
        Waiting._watched = watched  # pyright: ignore[reportPrivateUsage]
        AsyncPostgresLedger.results_since = since
        for task in context.many_hosts_late:
            task.cancel()

    context.cleanups.append(restore)
