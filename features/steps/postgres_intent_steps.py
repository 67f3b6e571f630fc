"""Steps for a PostgreSQL ledger's intents meeting other transactions: the scenario's database
(`context.postgres_url`), a ledger holding one owner's queued requests (scope "s"), and either another transaction
(psycopg's) that takes row locks in the order that makes a circle with the intent's, or another host's gathering of
the scope (`claims.take_pending`, driven statement by statement on a connection of the step's, so that it can be held
between its lock and its take). The other transaction never detects the deadlock itself (its `deadlock_timeout` is
ten minutes): the intent's connection, waiting first, is the one PostgreSQL ends, every time."""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from _pg_ledgers import pg_rows
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.ledger.postgres import claims
from lowtide.ledger.postgres.ledger import PostgresLedger
from lowtide.ledger.postgres.steps import Op, Reply, Sql
from lowtide.ledger.records import BatchIntent, NewRequest, PendingRequest


class Context(StepContext, Protocol):
    intent: IntentWorld


@dataclass
class IntentWorld:
    ledger: PostgresLedger
    owner: str
    keys: list[str]
    other: Any = None
    """The other transaction's connection (psycopg's), not in autocommit: its locks are held until it commits."""
    writer: threading.Thread | None = None
    recorded: list[str] | None = None
    error: BaseException | None = None
    given_first: bool = False
    gatherer: Any = None
    """Another host's connection, gathering the scope in a transaction the steps drive."""
    gathering: Op[list[PendingRequest]] | None = None
    next_statement: Sql | None = None
    gathered: list[PendingRequest] = field(default_factory=list[PendingRequest])


def _world(context: Context) -> IntentWorld:
    return context.intent


@given('a PostgreSQL ledger holding {count:d} requests claimed and queued by "{owner}"')
def step_queued(context: Context, count: int, owner: str) -> None:
    ledger = PostgresLedger(context.postgres_url)
    context.cleanups.append(ledger.close)
    keys = [f"key-{index:05d}" for index in range(count)]
    now = time.time()
    requests = [NewRequest(key, f"id-{key}", "deadlock", "m", {"n": key}, scope="s") for key in keys]
    ledger.claim_new(requests, owner=owner, until=now + 3600, now=now)
    context.intent = IntentWorld(ledger, owner, keys)


@given("another transaction holds the queued request last in key order")
def step_other_holds_last(context: Context) -> None:
    import psycopg

    state = _world(context)
    other = psycopg.connect(context.postgres_url)  # not in autocommit: a transaction until it commits
    state.other = other
    context.cleanups.append(other.close)
    # Never the one to find the circle: the intent's connection is (the test cluster lets the role set this).
    other.execute("SET deadlock_timeout = '10min'")
    other.execute("SET statement_timeout = '60s'")  # a hang said as an error, not a stuck scenario
    other.execute("SELECT key FROM pending_requests WHERE key = %s FOR UPDATE", (state.keys[-1],))


@when('"{owner}" starts recording a batch of all of them through the {face} store')
def step_start_intent(context: Context, owner: str, face: str) -> None:
    _start_intent(context, owner, face, scope="")


@when('"{owner}" starts recording a batch of all of them, of their scope, through the {face} store')
def step_start_scoped_intent(context: Context, owner: str, face: str) -> None:
    _start_intent(context, owner, face, scope="s")


def _start_intent(context: Context, owner: str, face: str, *, scope: str) -> None:
    state = _world(context)
    members = [(key, f"id-{key}") for key in state.keys]
    arguments: dict[str, Any] = {
        "provider": "anthropic",
        "endpoint": "messages",
        "members": members,
        "request_bytes": 100 * len(members),
        "owner": owner,
        "until": time.time() + 3600,
        "now": time.time(),
        "scope": scope,
    }

    async def through_async() -> list[str]:
        return await state.ledger.asynchronous().record_intent(BatchIntent("batch-1", **arguments))

    def write() -> None:
        try:
            if face == "async":
                state.recorded = asyncio.run(through_async())
            else:
                assert face == "sync", face
                state.recorded = state.ledger.record_intent(BatchIntent("batch-1", **arguments))
        except BaseException as exc:  # said by the step that reads it
            state.error = exc

    state.writer = threading.Thread(target=write, name="intent", daemon=True)
    state.writer.start()


@when("once that write waits on the other transaction, the other asks for the queued request first in key order")
def step_other_asks_first(context: Context) -> None:
    state = _world(context)
    _wait_for_intent_waiting(context)
    # Blocks until the first request's lock is free: the intent holds it (its first statement deleted it) until
    # PostgreSQL ends the intent's transaction.
    state.other.execute("SELECT key FROM pending_requests WHERE key = %s FOR UPDATE", (state.keys[0],))
    state.given_first = True


@then("the other transaction is given it while still holding the last: PostgreSQL ended the intent's transaction")
def step_given(context: Context) -> None:
    # The intent had deleted the first request and could not commit without the last, which the other transaction
    # holds: the first's lock was freed only by PostgreSQL ending the intent's transaction (had nothing ended it, the
    # other's request would have failed at its statement_timeout).
    assert _world(context).given_first


@when("the other transaction commits")
def step_other_commits(context: Context) -> None:
    _world(context).other.commit()


@then("the batch is recorded with all {count:d} requests as its members, and the write raised no error")
def step_recorded(context: Context, count: int) -> None:
    state = _world(context)
    assert state.writer is not None
    state.writer.join(timeout=60)
    assert not state.writer.is_alive(), "the intent is still waiting after the other transaction committed"
    assert state.error is None, f"the intent failed: {state.error!r}"
    assert state.recorded is not None
    assert len(state.recorded) == count, len(state.recorded)
    assert len(state.ledger.members("batch-1")) == count
    batch = state.ledger.batch("batch-1")
    assert batch is not None
    assert (batch.state, batch.request_count) == ("intent", count), batch
    left = pg_rows(context.postgres_url, "SELECT count(*) FROM pending_requests")
    assert left[0][0] == 0, f"{left[0][0]} requests still queued"


def _wait_for_intent_waiting(context: Context) -> None:
    """Until the intent's statement waits on a row lock (it has deleted the first chunk's rows, the first request's
    among them, and reached the last request, which the other transaction holds)."""
    state = _world(context)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        waiting = pg_rows(
            context.postgres_url,
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
            " AND query LIKE 'WITH joined AS (DELETE FROM pending_requests%%'",
        )
        if waiting[0][0]:
            return
        assert state.writer is not None
        assert state.writer.is_alive(), f"the intent ended: {state.error!r}"
        time.sleep(0.05)
    raise AssertionError("the intent never waited on the other transaction's lock")


@given('host "{owner}" has begun gathering their scope, and not yet taken any call')
def step_gathering_begun(context: Context, owner: str) -> None:
    import psycopg

    state = _world(context)
    gatherer = psycopg.connect(context.postgres_url)  # not in autocommit: one transaction, as the store's
    state.gatherer = gatherer
    context.cleanups.append(gatherer.close)
    now = time.time()
    state.gathering = claims.take_pending("s", owner=owner, until=now + 3600, now=now, limit=10_000, max_bytes=10**9)
    state.next_statement = next(state.gathering)
    assert "pg_try_advisory_xact_lock" in str(state.next_statement.query), state.next_statement
    _step_gathering(state)  # its lock taken: the gathering under way


@when("that gathering goes on and ends")
def step_gathering_ends(context: Context) -> None:
    state = _world(context)
    while state.gathering is not None:
        _step_gathering(state)
    state.gatherer.commit()


@then("that write waits for the gathering")
def step_write_waits(context: Context) -> None:
    state = _world(context)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        waiting = pg_rows(
            context.postgres_url,
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory'",
        )
        if waiting[0][0]:
            return
        assert state.writer is not None
        assert state.writer.is_alive(), (
            f"the write did not wait for the gathering: it recorded {state.recorded and len(state.recorded)} calls"
            f" while another host gathered them ({state.error!r})"
        )
        time.sleep(0.05)
    raise AssertionError("the write neither waited for the gathering nor ended")


@then('the gathering took all {count:d} calls for "{owner}"')
def step_gathered(context: Context, count: int, owner: str) -> None:
    state = _world(context)
    assert len(state.gathered) == count, f"the gathering took {len(state.gathered)} calls"
    owners = pg_rows(context.postgres_url, "SELECT DISTINCT owner FROM pending_requests")
    assert owners == [(owner,)], owners


@then("the write recorded no batch: it left all of them out")
def step_left_out(context: Context) -> None:
    state = _world(context)
    assert state.writer is not None
    state.writer.join(timeout=60)
    assert not state.writer.is_alive(), "the write is still waiting after the gathering ended"
    assert state.error is None, f"the write failed: {state.error!r}"
    assert state.recorded == [], f"the write recorded {state.recorded and len(state.recorded)} calls"
    assert state.ledger.batch("batch-1") is None


def _step_gathering(state: IntentWorld) -> None:
    """Run the gathering's next statement on its connection and hand it the reply; `state.gathering` is None once
    the operation has returned (what it took in `state.gathered`)."""
    assert state.gathering is not None
    assert state.next_statement is not None
    cursor = state.gatherer.execute(state.next_statement.query, state.next_statement.params)
    described = cursor.description
    rows = cursor.fetchall() if described is not None else []
    reply = Reply(rows, cursor.rowcount, tuple(column.name for column in described or ()))
    try:
        state.next_statement = state.gathering.send(reply)
    except StopIteration as done:
        state.gathered = list(done.value)
        state.gathering = None
        state.next_statement = None
