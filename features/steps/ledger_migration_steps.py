"""Steps for a ledger written by an earlier lowtide with requests in flight: read after the migration as that lowtide
read it, and worked on from there."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from _support import world
from step_context import Context as StepContext
from step_context import then, when

from lowtide.ledger.copy import copy_ledger
from lowtide.ledger.memory import MemoryLedger
from lowtide.ledger.records import BatchCreated, BatchIntent, NewRequest, OutcomeRow, RequestState
from lowtide.ledger.sqlite import Ledger
from lowtide.ledger.store import LedgerStore
from lowtide.providers.anthropic.backend import AnthropicBatchCodec


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    ledger_copies: list[LedgerStore]
    intents_made: list[str]


_DATA = Path(__file__).resolve().parent.parent / "data"


def _writer() -> ModuleType:
    """`features/data/ledger_v5.py`, which wrote the schema-5 ledger and says what a lowtide reads from it."""
    spec = importlib.util.spec_from_file_location("ledger_v5", _DATA / "ledger_v5.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@when('the ledger "{name}" is opened by this lowtide')
def step_open_old(context: Context, name: str) -> None:
    w = world(context)
    w.value = Ledger(w.path(name))
    w.cleanups.append(w.value.close)


@then('it reads every request, batch member, run item and copied row as schema 5\'s lowtide read them ("{expected}")')
def step_reads_as_before(context: Context, expected: str) -> None:
    read: dict[str, Any] = _writer().what_it_reads(world(context).value)
    before: dict[str, Any] = json.loads((_DATA / expected).read_text())
    assert read.keys() == before.keys(), read.keys()
    for part, rows in before.items():
        assert read[part] == rows, (part, read[part], rows)


@when('batch "{batch}" answers "{answered}" and sends "{retried}" back for a retry')
def step_batch_answers(context: Context, batch: str, answered: str, retried: str) -> None:
    ledger: Ledger = world(context).value
    ledger.record_outcomes(
        batch,
        [
            OutcomeRow(answered, RequestState.SUCCEEDED, {"id": "msg", "text": answered}),
            OutcomeRow(retried, RequestState.PENDING, error={"type": "overloaded_error"}),
        ],
        now=20.0,
    )
    ledger.requeue([retried], owner="host:3", until=300.0, now=20.0)


@when('"{keys}" go into batch "{batch}"')
def step_into_batch(context: Context, keys: str, batch: str) -> None:
    ledger: Ledger = world(context).value
    members = [(k.strip(), f"c-{k.strip()}") for k in keys.split(",")]
    context.intents_made = [*getattr(context, "intents_made", []), batch]
    ledger.record_intent(
        BatchIntent(
            batch,
            provider="anthropic",
            endpoint="https://api.anthropic.com",
            members=members,
            request_bytes=10,
            owner="host:3",
            until=300.0,
            now=21.0,
            trace=_trace_of(batch),
        )
    )


def _trace_of(batch: str) -> str:
    """The trace context an intent of `batch` carries (a span id of its own)."""
    return json.dumps({"traceparent": f"00-{'ab' * 16}-{batch.encode().hex():0>16}-01"})


@then('batch "{batch}" keeps the trace context its intent carried, and the batches from before the migration keep none')
def step_batch_trace(context: Context, batch: str) -> None:
    ledger: LedgerStore = world(context).value
    kept = {record.id: record.trace for record in ledger.batches()}
    assert kept[batch] == _trace_of(batch), kept
    made = context.intents_made
    assert all(trace == (_trace_of(b) if b in made else None) for b, trace in kept.items()), kept


@when('the API takes batch "{batch}"')
def step_api_takes(context: Context, batch: str) -> None:
    world(context).value.record_submitted(BatchCreated(batch, f"msgbatch_{batch}", "running", now=22.0))


@when('the create of batch "{batch}" is refused')
def step_refused(context: Context, batch: str) -> None:
    world(context).value.record_refused(batch, note="refused", now=23.0)


@then("the requests read")
def step_requests_read(context: Context) -> None:
    ledger: Ledger = world(context).value
    for row in context.table:
        record = ledger.request(row["key"])
        assert record is not None, row["key"]
        found = [record.state.value, record.batch_id or "", str(record.attempts), record.owner or ""]
        wanted = [row["state"], row["batch"], row["attempts"], row["owner"]]
        assert found == wanted, (row["key"], found, wanted)


@when('it is copied into a new in-memory ledger, and that into the new SQLite file "{name}"')
def step_copy_through_memory(context: Context, name: str) -> None:
    w = world(context)
    memory = MemoryLedger()
    copy_ledger(w.value, memory)
    copy = Ledger(w.path(name))
    w.cleanups.append(copy.close)
    copy_ledger(memory, copy)
    context.ledger_copies = [memory, copy]


@then("it has an identity made by the migration, kept when it is opened again, and each copy has one of its own")
def step_identity_after_migration(context: Context) -> None:
    w = world(context)
    ledger: Ledger = w.value
    identity = ledger.identity()
    assert re.fullmatch(r"[0-9a-f]{12}", identity), identity
    again = Ledger(ledger.path)
    w.cleanups.append(again.close)
    assert again.identity() == identity
    copies = [copy.identity() for copy in context.ledger_copies]
    assert len({identity, *copies}) == 3, (identity, copies)


@then("a request claimed in it now carries its identity in its custom id, beside those claimed before")
def step_claimed_now(context: Context) -> None:
    ledger: Ledger = world(context).value
    before = {record.key: record.custom_id for record in ledger.requests()}
    key = "claimed-now"
    custom_id = AnthropicBatchCodec().custom_id_for(key, ledger.identity())
    params = {"model": "claude-haiku-4-5", "max_tokens": 8, "messages": [{"role": "user", "content": "now"}]}
    ledger.claim([NewRequest(key, custom_id, "old", "claude-haiku-4-5", params)], owner="host:3", until=300.0, now=30.0)
    after = {record.key: record.custom_id for record in ledger.requests()}
    assert after == {**before, key: f"{key}_{ledger.identity()}"}, after


@then('both copies read every request, batch member, run item and copied row as it does ("{expected}")')
def step_copies_read_the_same(context: Context, expected: str) -> None:
    before: dict[str, Any] = json.loads((_DATA / expected).read_text())
    for copy in context.ledger_copies:
        assert _writer().what_it_reads(copy) == before, copy.location
