"""Steps for calls another host gathered while their own host's intent was being written: when the gathering host
gathers and writes its intent, and how often each request's record is read."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any, Protocol

from step_context import Context as StepContext
from step_context import given, then

from lowtide.ledger.records import PendingRequest, RequestRecord


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    many_hosts_records_read: Counter[str]


@given(
    'the first host to gather waits until "{low}" to "{high}" are claimed and writes its intent {seconds:g} seconds'
    " later; the other gathers nothing"
)
def step_gather_then_intent(context: Context, low: str, high: str, seconds: float) -> None:
    from lowtide.ledger.postgres.aio import AsyncPostgresLedger

    take, intent = AsyncPostgresLedger.take_pending, AsyncPostgresLedger.record_intent
    stem, first, last = low.rsplit("-", 1)[0], int(low.rsplit("-", 1)[1]), int(high.rsplit("-", 1)[1])
    keys = [f"{stem}-{n}" for n in range(first, last + 1)]
    gatherers: list[str] = []
    """The owners that gathered, in turn (the engines of one process: told apart by owner, not by host id)."""

    async def gathering(self: AsyncPostgresLedger, scope: str, **kwargs: Any) -> list[PendingRequest]:
        gatherers.append(str(kwargs["owner"]))
        if gatherers[0] != kwargs["owner"]:
            return []  # as when another process holds the scope's gathering
        deadline = time.monotonic() + 60
        while len(await self.states_of(keys)) < len(keys):  # the other host's claims, committed
            assert time.monotonic() < deadline, "the other host's calls were never claimed"
            await asyncio.sleep(0.02)
        return await take(self, scope, **kwargs)

    async def later(self: AsyncPostgresLedger, batch_id: str, **kwargs: Any) -> list[str]:
        if gatherers and gatherers[0] == kwargs["owner"]:
            await asyncio.sleep(seconds)  # the calls it gathered are its, pending, all this while
        return await intent(self, batch_id, **kwargs)

    AsyncPostgresLedger.take_pending, AsyncPostgresLedger.record_intent = gathering, later

    def restore() -> None:
        AsyncPostgresLedger.take_pending, AsyncPostgresLedger.record_intent = take, intent

    context.cleanups.append(restore)


@given("the hosts' reads of requests' records are counted")
def step_count_records(context: Context) -> None:
    from lowtide.ledger.postgres.aio import AsyncPostgresLedger

    real = AsyncPostgresLedger.requests_for
    context.many_hosts_records_read = read = Counter[str]()

    async def counted(self: AsyncPostgresLedger, keys: Sequence[str]) -> list[RequestRecord]:
        records = await real(self, keys)
        read.update(record.key for record in records)
        return records

    AsyncPostgresLedger.requests_for = counted
    context.cleanups.append(lambda: setattr(AsyncPostgresLedger, "requests_for", real))


@then("no request's record was read more than once")
def step_read_once(context: Context) -> None:
    read = context.many_hosts_records_read
    assert read, "no record was read"
    assert max(read.values()) == 1, sorted(read.items())
