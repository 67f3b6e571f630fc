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

from lowtide.ledger.records import BatchCreated, BatchIntent, KeyAnswer, KeyState, PendingRequest, RequestRecord


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    many_hosts_records_read: Counter[str]
    many_hosts_states_read: Counter[str]
    many_hosts_answers_read: Counter[str]
    many_hosts_states_asked: list[tuple[float, str]]
    """When (monotonic) each counted read of a state began, and its key."""
    many_hosts_gave_up_at: float


@given(
    'the first host to gather waits until "{low}" to "{high}" are claimed and writes its intent {seconds:g} seconds'
    " later; the other gathers nothing"
)
def step_gather_then_intent(context: Context, low: str, high: str, seconds: float) -> None:
    _first_gatherer(context, low, high, intent_after=seconds)


@given(
    'the first host to gather waits until "{low}" to "{high}" are claimed and records its batch created {seconds:g}'
    " seconds after creating it; the other gathers nothing"
)
def step_gather_then_created(context: Context, low: str, high: str, seconds: float) -> None:
    _first_gatherer(context, low, high, created_after=seconds)


def _first_gatherer(
    context: Context, low: str, high: str, *, intent_after: float = 0.0, created_after: float = 0.0
) -> None:
    """The first engine to gather takes the other host's calls only once they are all claimed, and writes its intent,
    or records its created batch, that much later (its batch is being created all that while); the others gather
    nothing (as when another process holds the scope's gathering). The engines of one process are told apart by
    owner, not by host id."""
    from lowtide.ledger.postgres.aio import AsyncPostgresLedger

    take, record = AsyncPostgresLedger.take_pending, AsyncPostgresLedger.record_intent
    submitted, states_of = AsyncPostgresLedger.record_submitted, AsyncPostgresLedger.states_of
    stem, first, last = low.rsplit("-", 1)[0], int(low.rsplit("-", 1)[1]), int(high.rsplit("-", 1)[1])
    keys = [f"{stem}-{n}" for n in range(first, last + 1)]
    gatherers: list[str] = []
    """The owners that gathered, in turn."""
    batches: set[str] = set()
    """The batches of the first."""

    async def gathering(self: AsyncPostgresLedger, scope: str, **kwargs: Any) -> list[PendingRequest]:
        gatherers.append(str(kwargs["owner"]))
        if gatherers[0] != kwargs["owner"]:
            return []
        deadline = time.monotonic() + 60
        while len(await states_of(self, keys)) < len(keys):  # the other host's claims, committed (not counted)
            assert time.monotonic() < deadline, "the other host's calls were never claimed"
            await asyncio.sleep(0.02)
        return await take(self, scope, **kwargs)

    async def later(self: AsyncPostgresLedger, intent: BatchIntent) -> list[str]:
        if gatherers and gatherers[0] == intent.owner:
            batches.add(intent.batch_id)
            await asyncio.sleep(intent_after)  # the calls it gathered are its, pending, all this while
        return await record(self, intent)

    async def created(self: AsyncPostgresLedger, created: BatchCreated) -> None:
        if created.batch_id in batches:
            await asyncio.sleep(created_after)  # the API has it; the ledger says it is being created
        await submitted(self, created)

    AsyncPostgresLedger.take_pending, AsyncPostgresLedger.record_intent = gathering, later
    AsyncPostgresLedger.record_submitted = created

    def restore() -> None:
        AsyncPostgresLedger.take_pending, AsyncPostgresLedger.record_intent = take, record
        AsyncPostgresLedger.record_submitted = submitted

    context.cleanups.append(restore)


@given("the hosts' reads of requests' records and states are counted")
def step_count_records(context: Context) -> None:
    from lowtide.ledger.postgres.aio import AsyncPostgresLedger

    records_for, states_of = AsyncPostgresLedger.requests_for, AsyncPostgresLedger.states_of
    answers_of = AsyncPostgresLedger.answers_of
    context.many_hosts_records_read = read = Counter[str]()
    context.many_hosts_states_read = states = Counter[str]()
    context.many_hosts_answers_read = answers = Counter[str]()
    context.many_hosts_states_asked = asked = list[tuple[float, str]]()

    async def counted(self: AsyncPostgresLedger, keys: Sequence[str]) -> list[RequestRecord]:
        records = await records_for(self, keys)
        read.update(record.key for record in records)
        return records

    async def counted_states(self: AsyncPostgresLedger, keys: Sequence[str]) -> list[KeyState]:
        began = time.monotonic()
        asked.extend((began, key) for key in keys)
        found = await states_of(self, keys)
        states.update(state.key for state in found)
        return found

    async def counted_answers(self: AsyncPostgresLedger, batch_id: str, keys: Sequence[str]) -> list[KeyAnswer]:
        found = await answers_of(self, batch_id, keys)
        answers.update(answer.key for answer in found)
        return found

    AsyncPostgresLedger.requests_for, AsyncPostgresLedger.states_of = counted, counted_states
    AsyncPostgresLedger.answers_of = counted_answers

    def restore() -> None:
        AsyncPostgresLedger.requests_for, AsyncPostgresLedger.states_of = records_for, states_of
        AsyncPostgresLedger.answers_of = answers_of

    context.cleanups.append(restore)


@then(
    'no request\'s record was read: the answers of "{low}" to "{high}" were read from their batch\'s results, once each'
)
def step_answers_once(context: Context, low: str, high: str) -> None:
    # Neither parameters nor records: a call answered by another host's batch is answered from that batch's results.
    assert not context.many_hosts_records_read, sorted(context.many_hosts_records_read.items())
    counts = _counted(context.many_hosts_answers_read, low, high)
    assert set(counts.values()) == {1}, counts


@then('no state of "{low}" to "{high}" was read more than once')
def step_states_once(context: Context, low: str, high: str) -> None:
    counts = _states_read(context, low, high)
    assert set(counts.values()) == {1}, counts


@then('the states of "{low}" to "{high}", but one, were read once each')
def step_states_once_but_one(context: Context, low: str, high: str) -> None:
    # When the intent left them out; once the one looked at meanwhile had moved into the batch, the others were found
    # among its members, their states not read again.
    counts = _states_read(context, low, high)
    assert sorted(counts.values())[:-1] == [1] * (len(counts) - 1), counts


@then('no state of "{low}" to "{high}" was asked for after their callers gave them up')
def step_no_look_after(context: Context, low: str, high: str) -> None:
    # Looked at while the other host had them (pending, its), until their callers gave up; not once after.
    keys = set(_counted(Counter[str](), low, high))
    asked = [(at, key) for at, key in context.many_hosts_states_asked if key in keys]
    assert asked, "their states were never looked at: the scenario did not wait on the other host's gathering"
    late = [
        (round(at - context.many_hosts_gave_up_at, 2), key) for at, key in asked if at > context.many_hosts_gave_up_at
    ]
    assert not late, late


def _states_read(context: Context, low: str, high: str) -> dict[str, int]:
    return _counted(context.many_hosts_states_read, low, high)


def _counted(read: Counter[str], low: str, high: str) -> dict[str, int]:
    stem, first, last = low.rsplit("-", 1)[0], int(low.rsplit("-", 1)[1]), int(high.rsplit("-", 1)[1])
    return {key: read[key] for key in (f"{stem}-{n}" for n in range(first, last + 1))}
