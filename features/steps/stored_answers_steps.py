"""Steps of stored_answers.feature: an answer stored as the engine stores it (an Anthropic results line through its
batch codec and `policy.result_row`), its row read as the store holds it, and read back every way a reader does."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

import orjson
from _stores import open_store
from step_context import Context as StepContext
from step_context import then, when

from lowtide.batching.policy import result_row, stored_outcome
from lowtide.batching.records import response_from_json
from lowtide.errors import ActorError
from lowtide.ledger.copy import copy_ledger
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.memory import MemoryLedger
from lowtide.ledger.records import COPIED, OutcomeRow
from lowtide.ledger.sqlite import Ledger
from lowtide.messages.answers import Answer, response_of
from lowtide.providers.anthropic.mapping import line_outcome
from lowtide.types import ActorResponse


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    answered: Answered
    stored_json: str
    read_back: dict[str, Any]


@dataclass(frozen=True)
class Answered:
    """An answer as it was answered: its blocks' texts, the form the provider shaped it in, its response."""

    key: str
    batch: str
    blocks: list[str]
    shaped: dict[str, Any]
    response: ActorResponse[object]
    earlier_json: str
    """The JSON an earlier lowtide stored for it (its shaped form whole, keys sorted, not ASCII-escaped)."""


def _store(context: Context) -> LedgerStore:
    """The scenario's store, as ledger_store.feature's steps open it ('Given a <store> ledger store')."""
    store: LedgerStore | None = getattr(getattr(context, "contract", None), "store", None)
    assert store is not None, "no store: add 'Given a <store> ledger store'"
    return store


def _blocks(text: str) -> list[str]:
    return [json.loads(part) for part in text.split(" + ")]


def _answered(key: str, batch: str, blocks: list[str]) -> tuple[Answered, Answer]:
    line = {
        "custom_id": f"c-{key}",
        "result": {
            "type": "succeeded",
            "message": {
                "id": "msg_01",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": block} for block in blocks],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 12, "output_tokens": 9},
            },
        },
    }
    settled, shaped = line_outcome(line, batch_id="msgbatch_1", request_id="req_1")
    assert not isinstance(settled, ActorError), settled
    assert shaped is not None
    earlier = orjson.dumps(shaped, default=str, option=orjson.OPT_SORT_KEYS).decode()
    return Answered(key, batch, blocks, shaped, response_of(settled), earlier), settled


@when('the result of {key} in "{batch}" arrives at {now:g} answering in blocks {blocks}')
def step_answered(context: Context, key: str, batch: str, now: float, blocks: str) -> None:
    context.answered, settled = _answered(key, batch, _blocks(blocks))
    row = result_row(key, settled, context.answered.shaped, used=1, allowed=1)
    assert _store(context).record_outcomes(batch, [row], now=now) == 1


@when('an earlier lowtide stored the result of {key} in "{batch}" at {now:g}, answering in blocks {blocks}')
def step_answered_before(context: Context, key: str, batch: str, now: float, blocks: str) -> None:
    context.answered, settled = _answered(key, batch, _blocks(blocks))
    cost = settled.cost
    assert cost is not None
    row = OutcomeRow(
        key,
        result_row(key, settled, context.answered.shaped, used=1, allowed=1).state,
        response=context.answered.earlier_json,
        cost_usd=cost.total_usd,
        live_cost_usd=cost.live_equivalent_usd,
    )
    assert _store(context).record_outcomes(batch, [row], now=now) == 1


def _stored_json(store: LedgerStore, key: str) -> str:
    columns = COPIED["results"]
    rows = [dict(zip(columns, row, strict=True)) for chunk in store.export_rows("results") for row in chunk]
    found = [row["response"] for row in rows if row["key"] == key]
    assert len(found) == 1, rows
    return str(found[0])


@then("the stored answer of {key} holds its text once")
def step_text_once(context: Context, key: str) -> None:
    stored = _stored_json(_store(context), key)
    answered = context.answered
    assert answered.response.text == "".join(answered.blocks)
    assert "text" not in json.loads(stored), stored
    for block in answered.blocks:
        assert stored.count(json.dumps(block, ensure_ascii=False)) == 1, (block, stored)
    assert len(stored) < len(answered.earlier_json), (stored, answered.earlier_json)


@then("the stored answer of {key} holds its text twice, as it was stored")
def step_text_twice(context: Context, key: str) -> None:
    stored = _stored_json(_store(context), key)
    assert stored == context.answered.earlier_json, stored
    assert json.loads(stored)["text"] == context.answered.response.text


def _reads_as_answered(context: Context, found: dict[str, Any] | None, where: str) -> None:
    answered = context.answered
    assert found is not None, where
    assert found == answered.shaped, (where, found, answered.shaped)
    # Keys in the order an earlier lowtide's readers met them (the stored JSON's, sorted): a display shows the same.
    assert list(found) == list(json.loads(answered.earlier_json)), (where, list(found))
    assert response_from_json(found) == answered.response, where


@then('{key}\'s record, its answer from "{batch}" and a copy of the ledger read back the response as it was answered')
def step_reads_back(context: Context, key: str, batch: str) -> None:
    store = _store(context)
    record = store.request(key)
    assert record is not None
    _reads_as_answered(context, record.response, "record")
    settled = stored_outcome(record)
    assert not isinstance(settled, ActorError), settled
    assert response_of(settled) == context.answered.response, "the engine's outcome"
    answers = store.answers_of(batch, [key])
    assert len(answers) == 1
    _reads_as_answered(context, answers[0].response, "answers_of")
    copy: LedgerStore = MemoryLedger() if isinstance(store, Ledger) else open_store(context, "sqlite", fresh=True)
    copy_ledger(store, copy)
    copied = copy.request(key)
    assert copied is not None
    _reads_as_answered(context, copied.response, "copy")
    assert _stored_json(copy, key) == _stored_json(store, key), "a copy moves the stored form as it is"


def _stored_with(value: str) -> str:
    """A stored answer (its text left out, as `narrowed` stores it) whose one tool call's input holds `value`."""
    return (
        '{"content":[{"id":"toolu_1","input":{"value":' + value + '},"name":"record","type":"tool_use"},'
        '{"text":"Recorded.","type":"text"}],"mode":"batch","model":"claude-sonnet-4-5","provider":"anthropic"}'
    )


@when("a stored answer whose tool input holds {value} is read back")
def step_read_back_value(context: Context, value: str) -> None:
    from lowtide.ledger.answer_form import stored_answer

    context.stored_json = _stored_with(value)
    context.read_back = stored_answer(context.stored_json)


@then("it reads as Python's json reads it, value for value and type for type, its text put back")
def step_reads_as_json(context: Context) -> None:
    expected: dict[str, Any] = json.loads(context.stored_json)
    expected = dict(sorted({**expected, "text": "Recorded."}.items()))
    # repr tells 1 from 1.0, -0.0 from 0.0, and an int of any size from the float nearest it; nan is not equal to
    # itself, but its repr is its repr.
    assert repr(context.read_back) == repr(expected), (context.read_back, expected)
    assert list(context.read_back) == list(expected)
