"""Steps for a ledger named by a `postgresql://` URL: live calls sharing their quota through it, what is refused, and
the password never shown (the scenario's database: `context.postgres_url`, made in `environment.py`)."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import unquote, urlsplit

from _pg_ledgers import pg_rows
from _support import names, set_env, world
from live_concurrency_steps import LiveContext, live
from step_context import given, then, when

from lowtide import Actor, ActorResponse
from lowtide.emulator import Emulator
from lowtide.ledger.sqlite import Ledger


class Context(LiveContext, Protocol):
    """What this module keeps on the scenario's context (and live_concurrency_steps' live actors: `live(context)`)."""

    postgres_world: PostgresWorld
    pool_program: tuple[int, str, str, float] | None


@dataclass
class PostgresWorld:
    url: str = ""
    password: str = ""
    actor: Actor | None = None
    emulator: Emulator | None = None
    error: BaseException | None = None
    answer: ActorResponse[Any] | None = None
    records: list[logging.LogRecord] = field(default_factory=list[logging.LogRecord])
    locker: Any = None
    """Another connection (psycopg's), holding a lock in a transaction it has not ended."""
    locker_lock: threading.Lock = field(default_factory=threading.Lock)
    started: asyncio.Task[ActorResponse[Any]] | None = None
    ticks: int = 0
    ticks_alone: int = 0
    took: float = 0.0
    """Real seconds the last call took, answered or failed."""


def pg(context: Context) -> PostgresWorld:
    if not hasattr(context, "postgres_world"):
        context.postgres_world = PostgresWorld(url=context.postgres_url)
    return context.postgres_world


def _with_password(url: str, password: str, port: int | None = None) -> str:
    parts = urlsplit(url)
    netloc = f"{parts.username}:{password}@{parts.hostname}:{port or parts.port}"
    return parts._replace(netloc=netloc).geturl()


def _live_actor(context: Context, url: str) -> None:
    state = pg(context)
    state.emulator = Emulator()
    state.actor = Actor(
        {"name": "pg-live", "model": "claude-sonnet-5-5", "max_tokens": 32, "batch_processing": "live"},
        client=state.emulator.client(api_key="live-key"),
        ledger=url,
    )
    context.cleanups.append(state.actor.aclose)


@given("LOWTIDE_LEDGER names the scenario's PostgreSQL database")
def step_env(context: Context) -> None:
    os.environ["LOWTIDE_LEDGER"] = pg(context).url  # restored after the scenario (environment.py)


@given("an actor in batch mode whose ledger is the scenario's PostgreSQL database")
def step_batch_actor(context: Context) -> None:
    state = pg(context)
    state.password = unquote(urlsplit(state.url).password or "")
    state.emulator = Emulator()
    state.actor = Actor(
        {
            "name": "pg-batch",
            "model": "claude-sonnet-5-5",
            "max_tokens": 32,
            "batch_processing": "batch",
            "batch": {"poll_interval": 0.1, "coalesce_window": 0.05},
        },
        client=state.emulator.client(api_key="batch-key"),
        ledger=state.url,
    )
    context.cleanups.append(state.actor.aclose)


@given('a live actor whose ledger is the scenario\'s PostgreSQL database, with the wrong password "{password}"')
def step_wrong_password(context: Context, password: str) -> None:
    state = pg(context)
    state.password = password
    _live_actor(context, _with_password(state.url, password))


@given(
    'a live actor whose ledger is a PostgreSQL database on a port where nothing listens, password "{password}", its'
    " outages waited out for {seconds:g} second"
)
def step_nothing_listens(context: Context, password: str, seconds: float) -> None:
    state = pg(context)
    state.password = password
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])  # closed again at once: nothing listens there
    _live_actor(context, f"{_with_password(state.url, password, port)}&lowtide_outage_seconds={seconds:g}")


@given('a live actor whose ledger is the scenario\'s PostgreSQL database, its URL\'s port "{port}" and query "{query}"')
def step_malformed(context: Context, port: str, query: str) -> None:
    state = pg(context)
    parts = urlsplit(state.url)
    state.password = unquote(parts.password or "")
    netloc = f"{parts.username}:{parts.password}@{parts.hostname}:{port.replace('PORT', str(parts.port))}"
    _live_actor(context, parts._replace(netloc=netloc, query=query.replace("PORT", str(parts.port))).geturl())


@then("it failed within {seconds:g} seconds, nothing sent to the API")
def step_failed_at_once(context: Context, seconds: float) -> None:
    state = pg(context)
    assert state.error is not None, "the call did not fail"
    assert state.took < seconds, f"the call failed after {state.took:.1f} s: {state.error}"
    assert state.emulator is not None
    assert not state.emulator.live_answers, state.emulator.live_answers


@given("every log record of every logger is captured")
def step_capture(context: Context) -> None:
    state = pg(context)

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            state.records.append(record)

    root = logging.getLogger()
    handler, level = Keep(logging.DEBUG), root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    loggers = [logging.getLogger(name) for name in ("psycopg", "psycopg.pool", "lowtide")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.DEBUG)

    def restore() -> None:
        root.removeHandler(handler)
        root.setLevel(level)
        for logger, was in zip(loggers, levels, strict=True):
            logger.setLevel(was)

    context.cleanups.append(restore)


@when("it makes a call")
@when("a new live actor makes a call")
def step_call(context: Context) -> None:
    state = pg(context)
    actor = state.actor
    assert actor is not None

    async def call() -> None:
        try:
            state.answer = await actor.run("Hello")
        except Exception as exc:
            state.error = exc

    began = time.monotonic()
    world(context).run(call())
    state.took = time.monotonic() - began


@when("another lowtide has moved the database's schema_version one ahead")
def step_newer(context: Context) -> None:
    pg_rows(pg(context).url, "UPDATE schema_version SET version = version + 1 RETURNING version")
    _live_actor(context, pg(context).url)  # a new process: its pool migrates (and checks) on first use


@then('the call fails with a {kind} saying "{text}"')
def step_fails(context: Context, kind: str, text: str) -> None:
    error = pg(context).error
    assert error is not None, "the call did not fail"
    assert kind in {c.__name__ for c in type(error).__mro__}, repr(error)
    assert text in str(error), str(error)


@then("the message names the database with its password shown as ***")
def step_redacted(context: Context) -> None:
    state = pg(context)
    message = str(state.error)
    assert "postgresql://lowtide:***@127.0.0.1:" in message, message
    assert state.password not in message, message


@then('the message says "{first}" and "{second}"')
def step_message_says(context: Context, first: str, second: str) -> None:
    message = str(pg(context).error)
    assert first in message, message
    assert second in message, message


@then("a warning said the ledger was out of reach, naming it with its password shown as ***")
def step_warned_out_of_reach(context: Context) -> None:
    said = [r.getMessage() for r in pg(context).records if r.name == "lowtide.ledger" and r.levelno == logging.WARNING]
    assert any("out of reach" in text and "postgresql://lowtide:***@127.0.0.1:" in text for text in said), said


@then("neither the password nor its decoded form appears in the error or in any log record")
def step_nowhere(context: Context) -> None:
    state = pg(context)
    secrets = {state.password, unquote(state.password)}
    texts = [str(state.error), repr(state.error)]
    for record in state.records:
        texts.append(record.getMessage())
        if record.exc_info and record.exc_info[1] is not None:
            texts.append(repr(record.exc_info[1]))
    for text in texts:
        for secret in secrets:
            assert secret not in text, text


@then("the API received no call")
def step_no_call(context: Context) -> None:
    emulator = pg(context).emulator
    assert emulator is not None
    assert sum(emulator.calls.values()) == 0, emulator.calls


@then("the PostgreSQL database holds one shared quota scope, in which the API key does not appear")
def step_scope(context: Context) -> None:
    rows = pg_rows(pg(context).url, "SELECT scope, state FROM live_quotas")
    assert len(rows) == 1, rows
    scope, state = rows[0]
    assert "live-key" not in scope, rows
    assert "live-key" not in state, rows
    assert '"requests"' in state, state


@then("no SQLite ledger was made")
def step_no_sqlite(context: Context) -> None:
    made = [p for p in context.state_dir.rglob("*") if p.is_file()]
    assert not made, made
    actor = pg(context).actor or next(iter(live(context).actors.values()))
    assert not isinstance(actor._ledger, Ledger), actor._ledger  # pyright: ignore[reportPrivateUsage]


@then("the PostgreSQL database's schema_version is the latest")
def step_latest(context: Context) -> None:
    from lowtide.ledger.postgres.schema import SCHEMA_VERSION

    assert pg_rows(pg(context).url, "SELECT version FROM schema_version") == [(SCHEMA_VERSION,)]


@given('LOWTIDE_LEDGER is "{value}"')
def step_env_value(context: Context, value: str) -> None:
    w = world(context)
    set_env(w, "LOWTIDE_LEDGER", value if "://" in value else str(w.path(value)))


@then('on stderr, the command says the ledger "{shown}" could not be opened')
def step_cli_unreachable(context: Context, shown: str) -> None:
    err = world(context).value["err"]
    assert f"The PostgreSQL ledger at {shown} could not be opened" in err, err
    assert "Traceback" not in err, err


@then("the call is answered")
def step_answered(context: Context) -> None:
    state = pg(context)
    assert state.error is None, state.error
    assert state.answer is not None


@then("the PostgreSQL database holds the request and its answer, in which the API key does not appear")
def step_request_stored(context: Context) -> None:
    state = pg(context)
    assert state.answer is not None
    rows = pg_rows(state.url, "SELECT key, state, response FROM request_view")
    assert len(rows) == 1, rows
    assert rows[0][1] == "succeeded", rows
    assert f'"message_id":"{state.answer.ids.message_id}"' in str(rows[0][2]), rows
    everything = repr(pg_rows(state.url, "SELECT * FROM requests")) + repr(pg_rows(state.url, "SELECT * FROM batches"))
    everything += repr(pg_rows(state.url, "SELECT * FROM results"))
    assert "batch-key" not in everything, everything


@then('"{secret}" appears nowhere in the command\'s output')
def step_cli_secret(context: Context, secret: str) -> None:
    value = world(context).value
    assert secret not in value["out"] + value["err"], value


@given('LOWTIDE_HOST_ID is "{host}"')
def step_host_id(context: Context, host: str) -> None:
    set_env(world(context), "LOWTIDE_HOST_ID", host)


@then('the database shows a connection named "{name}"')
def step_application_name(context: Context, name: str) -> None:
    names = [row[0] for row in pg_rows(pg(context).url, "SELECT application_name FROM pg_stat_activity")]
    assert name in names, names


@given("psycopg is not installed")
def step_no_psycopg(context: Context) -> None:
    """As on a machine without `lowtide[postgres]`: lowtide looks psycopg up before it imports it."""
    import importlib.util

    real = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> Any:
        return None if name.split(".")[0] in ("psycopg", "psycopg_pool") else real(name, package)

    importlib.util.find_spec = find_spec
    context.cleanups.append(lambda: setattr(importlib.util, "find_spec", real))


def _release(state: PostgresWorld) -> None:
    """End the other connection's transaction (its locks go), once: by the scenario, or by its safety timer."""
    with state.locker_lock:
        locker, state.locker = state.locker, None
    if locker is not None:
        locker.commit()
        locker.close()


@given(
    "another connection holds the ledger's requests table locked, released by itself after {seconds:g}"
    " seconds at the latest"
)
def step_lock_requests(context: Context, seconds: float) -> None:
    import psycopg

    state = pg(context)
    assert state.actor is not None
    state.actor.ledger  # opened now (the schema made): the lock is on the ledger's own table  # noqa: B018
    locker = psycopg.connect(state.url)  # not in autocommit: the transaction stays open until committed
    locker.execute("LOCK TABLE requests IN EXCLUSIVE MODE")  # reads go on; inserts and row locks wait
    state.locker = locker
    # Should the event loop be blocked by the write (a sync store), no step could release it: this thread does.
    timer = threading.Timer(seconds, _release, args=(state,))
    timer.daemon = True
    timer.start()
    context.cleanups.append(timer.cancel)
    context.cleanups.append(lambda: _release(state))


@when(
    "it starts a call while a ticker counts every {interval:g} seconds in the same event loop, for {seconds:g} second"
)
def step_call_with_ticker(context: Context, interval: float, seconds: float) -> None:
    state = pg(context)
    actor = state.actor
    assert actor is not None

    async def tick() -> None:
        while True:
            await asyncio.sleep(interval)
            state.ticks += 1

    async def start() -> None:
        # First the ticker alone, for as long: what this loop ticks on this machine at its load, to compare with.
        ticker = asyncio.ensure_future(tick())
        await asyncio.sleep(seconds)
        ticker.cancel()
        state.ticks_alone, state.ticks = state.ticks, 0
        state.started = asyncio.ensure_future(actor.run("Hello"))
        ticker = asyncio.ensure_future(tick())
        await asyncio.sleep(seconds)
        ticker.cancel()

    world(context).run(start())


@then("the call is not answered yet: the database shows its write waiting on the lock")
def step_waiting_on_lock(context: Context) -> None:
    state = pg(context)
    assert state.started is not None
    assert not state.started.done(), "the call was answered while the requests table was locked"
    waiting = pg_rows(
        state.url,
        "SELECT query FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND application_name LIKE 'lowtide %'",
    )
    assert any("requests" in str(query) for (query,) in waiting), waiting


@then("the ticker advanced meanwhile at least a quarter as often as it did alone")
def step_ticks(context: Context) -> None:
    # A loop blocked by the write would tick once at most; a free one about as often as alone, less what the call
    # computes meanwhile (its SDK loads in a thread that shares the GIL). Against the ticks alone, not a fixed count:
    # at load 30 a free loop ticked 31 times in the second, not 100.
    state = pg(context)
    assert state.ticks_alone >= 10, f"the ticker alone advanced {state.ticks_alone} times: the machine is too slow"
    assert state.ticks >= state.ticks_alone / 4, (
        f"the ticker advanced {state.ticks} times, {state.ticks_alone} alone: the event loop was blocked"
    )


@when("the other connection commits")
def step_commit(context: Context) -> None:
    _release(pg(context))


@then("the started call is answered within {seconds:g} seconds")
def step_started_answered(context: Context, seconds: float) -> None:
    state = pg(context)
    started = state.started
    assert started is not None

    async def wait() -> None:
        state.answer = await asyncio.wait_for(started, seconds)

    world(context).run(wait())
    assert state.answer is not None


_POOL_AT_WORK = """
import asyncio, sys, time
from psycopg_pool.pool_async import MaintenanceTask
from lowtide.ledger.postgres.pool import PostgresPool

class Slow(MaintenanceTask):
    async def _run(self, pool):
        await asyncio.sleep(3600)

async def main():
    pool = PostgresPool(sys.argv[1])
    async with pool.connection("be read") as connection:
        await connection.execute("SELECT 1")
    opened = pool._pool  # the psycopg pool lowtide opened (a private field: this reproduces what its workers do)
    for _ in range(opened.num_workers):  # every worker busy when the loop ends
        opened.run_task(Slow(opened))
    await asyncio.sleep(0.5)
    print("returned", time.monotonic(), flush=True)  # the system's monotonic clock: the test's too

asyncio.run(main())
print("exited")
"""


@when("a program opens the PostgreSQL ledger's connection pool, gives its workers a task of an hour and returns")
def step_pool_at_work(context: Context) -> None:
    # Bounded generously (starting Python and lowtide on a loaded machine takes seconds); what is judged is the time
    # from the program's return to its exit, which a worker holding the loop would make an hour.
    try:
        done = subprocess.run(
            [sys.executable, "-c", _POOL_AT_WORK, context.postgres_url],
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        context.pool_program = None
    else:
        context.pool_program = (done.returncode, done.stdout, done.stderr, time.monotonic())


@then("the program exits within {seconds:d} seconds of returning, with status 0")
def step_pool_program_exited(context: Context, seconds: int) -> None:
    ended = context.pool_program
    assert ended is not None, "the program was still running after 300 seconds"
    status, out, err, exited = ended
    assert status == 0, (status, err[-2000:])
    assert "exited" in out, (out, err[-2000:])
    returned = [float(line.split()[1]) for line in out.splitlines() if line.startswith("returned ")]
    assert returned, (out, err[-2000:])
    assert exited - returned[0] < seconds, f"exited {exited - returned[0]:.1f} s after returning"


@given("the scenario's PostgreSQL database orders text by ICU's \"{locale}\" rules")
def step_icu_database(context: Context, locale: str) -> None:
    assert not hasattr(context, "postgres_world"), "name the database before the actor"
    context.postgres_url = context.new_postgres_database(locale)
    texts = ["B", "_c", "a"]  # Python's order: byte by byte
    query = "SELECT t FROM unnest(ARRAY['a', 'B', '_c']) t ORDER BY t"
    ordered = [row[0] for row in pg_rows(context.postgres_url, query)]
    assert sorted(ordered) == texts, ordered
    assert ordered != texts, f"not a language's order: {ordered}"


@when('it makes calls keyed "{keys}" together')
def step_calls_keyed(context: Context, keys: str) -> None:
    state = pg(context)
    actor = state.actor
    assert actor is not None
    named = names(keys)

    async def calls() -> None:
        answers = await actor.run_many([f"Hello {key}" for key in named], keys=named)
        assert len(answers) == len(named), answers
        assert all(isinstance(answer, ActorResponse) and answer.text for answer in answers), answers

    world(context).run(calls())


@then('the ledger lists its requests in the order "{keys}", as the SQLite ledger does')
def step_listed_in_order(context: Context, keys: str) -> None:
    from lowtide.ledger.postgres.ledger import PostgresLedger

    ledger = PostgresLedger(pg(context).url)
    try:
        listed = [record.key for record in ledger.requests()]
    finally:
        ledger.close()
    assert listed == names(keys), listed
    assert sorted(listed) == listed, "not Python's (and SQLite's) order of the keys"


_PAYLOADS = {
    ("batches", "counts"), ("batches", "note"), ("batches", "create_steps"), ("batches", "trace"), ("identity", "id"),
    ("live_quotas", "state"), ("request_traces", "context"), ("requests", "params"), ("results", "response"),
    ("results", "error"), ("results", "cost_usd"), ("results", "live_cost_usd"), ("run_items", "job"),
    ("run_items", "reason"), ("runs", "configuration"), ("runs", "options"), ("agent_runs", "input"),
    ("agent_runs", "result"), ("agent_runs", "error"), ("agent_runs", "cost_usd"), ("agent_journal", "result"),
    ("agent_journal", "error"), ("agent_journal", "cost_usd"),
}  # fmt: skip
"""The text columns that hold what was said, sent or decided (JSON, notes, digits), never compared nor indexed."""


@then("every column of the ledger's tables that holds a name, key or state compares byte by byte")
def step_byte_order(context: Context) -> None:
    columns = pg_rows(
        pg(context).url,
        "SELECT c.table_name, c.column_name, c.collation_name FROM information_schema.columns c"
        " JOIN information_schema.tables t USING (table_schema, table_name)"
        " WHERE c.table_schema = current_schema() AND c.data_type = 'text' AND t.table_type = 'BASE TABLE'",
    )
    assert len(columns) > 50, columns
    by_locale = {(table, column) for table, column, collation in columns if collation != "C"}
    assert by_locale == _PAYLOADS, f"compared by the database's locale: {sorted(by_locale - _PAYLOADS)}"
