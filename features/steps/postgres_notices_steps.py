"""Steps for what keeps a PostgreSQL ledger's process in touch through an outage of its server, in the test's own
process: its listener of batches' notices and its heartbeat (`lowtide.ledger.postgres.notices`), on a cluster of the
scenario's own (`postgres_outage_steps`), and what a user sees: the warnings, a watcher woken, a lease renewed."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import unquote, urlsplit

from postgres_outage_steps import Context as OutageContext
from postgres_outage_steps import outage
from step_context import given, then, when

from lowtide.ledger.postgres.ledger import PostgresLedger
from lowtide.ledger.postgres.schema import NOTICE_CHANNEL

_PATIENCE = 60.0
"""Real seconds to wait for a thread's warning or a renewal on a loaded machine: longer is a hang."""


class Context(OutageContext, Protocol):
    """What this module keeps on the scenario's context."""

    in_touch: InTouch


@dataclass
class InTouch:
    ledger: PostgresLedger
    owner: str
    batch: str
    event: asyncio.Event
    lease: float
    said: list[str] = field(default_factory=list[str])
    lock: threading.Lock = field(default_factory=threading.Lock)
    back_at: float = 0.0

    def heard(self, *phrases: str) -> bool:
        with self.lock:
            return all(any(phrase in line for line in self.said) for phrase in phrases)


class _Said(logging.Handler):
    def __init__(self, state: InTouch) -> None:
        super().__init__(logging.WARNING)
        self.state = state

    def emit(self, record: logging.LogRecord) -> None:
        with self.state.lock:
            self.state.said.append(record.getMessage())


def _notify(url: str, payload: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True, connect_timeout=10) as db:
        db.execute("SELECT pg_notify(%s, %s)", (NOTICE_CHANNEL, payload))


def _until(condition: str, done: Callable[[], bool]) -> None:
    deadline = time.monotonic() + _PATIENCE
    while not done():
        assert time.monotonic() < deadline, f"not within {_PATIENCE} s: {condition}"
        time.sleep(0.05)


def _lease_until(url: str, owner: str) -> float:
    import psycopg

    with psycopg.connect(url, connect_timeout=10) as db:
        row = db.execute("SELECT lease_until FROM owners WHERE owner = %s", (owner,)).fetchone()
    return float(row[0]) if row is not None else 0.0


@given('a program\'s ledger on it keeps the lease of "{owner}" for {seconds:g} seconds and watches batch "{batch}"')
def step_in_touch(context: Context, owner: str, seconds: float, batch: str) -> None:
    state = outage(context)
    ledger = PostgresLedger(state.url)
    context.cleanups.append(ledger.close)
    ledger.keep_alive(owner, lease_seconds=seconds, now=time.time)

    async def watch() -> asyncio.Event:
        return ledger.notices.watch(batch)

    event = context.runner.run(watch())
    context.in_touch = touch = InTouch(ledger, owner, batch, event, seconds)
    said = _Said(touch)
    logger = logging.getLogger("lowtide.ledger")
    logger.addHandler(said)
    context.cleanups.append(lambda: logger.removeHandler(said))
    # Listening before the outage: a notice of the batch reaches the watcher (then it is waited on again).
    _notify(state.plain, batch)
    context.runner.run(asyncio.wait_for(event.wait(), _PATIENCE))
    event.clear()


@when("the server is stopped until the program has said it lost the ledger's notices and could not renew its leases")
def step_stopped_until_said(context: Context) -> None:
    state, touch = outage(context), context.in_touch
    state.cluster.shut_down()
    state.went_at = time.time()
    _until(
        "the program said it lost the ledger's notices and could not renew its leases",
        lambda: touch.heard("Lost the ledger's notices", "Could not renew this process's leases"),
    )


@when("the server is started again")
def step_started_again(context: Context) -> None:
    state = outage(context)
    state.cluster.start_up()
    state.back_at = context.in_touch.back_at = time.time()


@then('the program said it listens to the ledger\'s notices again, and the watcher of "{batch}" was woken')
def step_listening_again(context: Context, batch: str) -> None:
    touch = context.in_touch
    assert touch.batch == batch, touch.batch
    _until("the program said it listens again", lambda: touch.heard("Listening to the ledger's notices again"))
    # Notices sent while no one listened reached no one: every watcher is woken to read the ledger again.
    try:
        context.runner.run(asyncio.wait_for(touch.event.wait(), _PATIENCE))
    except TimeoutError:
        raise AssertionError(f"the watcher of {batch} was not woken when the program listened again") from None
    password = unquote(urlsplit(outage(context).plain).password or "")
    with touch.lock:
        assert not any(password in line for line in touch.said), touch.said
        lost = [line for line in touch.said if "Lost the ledger's notices" in line]
    assert len(lost) == 1, f"the loss said once an outage, not at each try: {touch.said}"


@then('the lease of "{owner}" is renewed past the server\'s return')
def step_lease_renewed(context: Context, owner: str) -> None:
    touch, state = context.in_touch, outage(context)
    assert touch.owner == owner, touch.owner
    # After a failed beat, the next comes as soon as the server answers: renewed then, the lease runs a whole lease
    # past the server's return (renewed before the stop, it ran out less than that after it).
    _until(
        f"the lease of {owner} renewed after the server's return",
        lambda: _lease_until(state.plain, owner) >= touch.back_at + touch.lease,
    )
    with touch.lock:
        failures = [line for line in touch.said if "Could not renew this process's leases" in line]
    assert len(failures) == 1, f"the failure said once an outage, not at each beat: {touch.said}"
