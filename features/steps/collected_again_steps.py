"""Steps of collected_again.feature: a batch collected again stores only the results its ledger lacks."""

from __future__ import annotations

import asyncio
from collections import Counter
from decimal import Decimal
from typing import Any

from _openai_provider_support import MODEL as OPENAI_MODEL
from _support import world
from step_context import Context, given, then, when

from lowtide import MemoryLedger
from lowtide.batching.engine import collecting as collection
from lowtide.batching.engine.batch_engine import BatchEngine, GroupCall
from lowtide.batching.policy import result_row
from lowtide.bulk.outputs.results import RunResult
from lowtide.ledger.records import COPIED
from lowtide.ledger.store import BatchState, RequestRecord, RequestState, stored_json

_LATE_WAIT = 5.0
"""Real seconds a late call is given to get its answer once its batch's calls have theirs (time is virtual here: an
answer takes milliseconds; one missing after this never comes)."""


def _result(context: Context) -> RunResult:
    result = world(context).asked.get("bulk", {}).get("result")
    assert isinstance(result, RunResult), f"no run result (error: {world(context).error!r})"
    return result


def _results_by_key(context: Context) -> Counter[str]:
    """How many results the ledger holds for each key: every row of its results, however the store keeps them."""
    columns = COPIED["results"]
    key = columns.index("key")
    return Counter(row[key] for rows in world(context).ledger().export_rows("results") for row in rows)


def _keys(first: str, last: str) -> list[str]:
    run, start = first.rsplit("-", 1)
    return [f"{run}-{n}" for n in range(int(start), int(last.rsplit("-", 1)[1]) + 1)]


@given('an actor "{name}" of the {provider} API in batch mode, on {ledger}')
def step_actor_on(context: Context, name: str, provider: str, ledger: str) -> None:
    """As results_safety_steps' actor of the API in batch mode, on the scenario's ledger or on one in memory."""
    w = world(context)
    w.asked["provider"] = provider
    if ledger == "a ledger in memory":
        w.store = MemoryLedger()
    else:
        assert ledger == "the scenario's ledger", ledger
    batch = {"poll_interval": 10, "max_attempts": 1, "coalesce_window": 0.5}
    model = {"provider": "openai", "model": OPENAI_MODEL} if provider == "OpenAI" else {"model": "claude-sonnet-5-5"}
    settings = {"name": name, **model, "max_tokens": 64, "batch_processing": "batch", "batch": batch}
    w.add_actor(settings, **({"ledger": w.store} if w.store is not None else {}))


@given(
    'another process stores the answers "{first_text}" and "{second_text}" of "{first}" and "{second}" from the batch'
    " while the run waits on it"
)
def step_stored_elsewhere(context: Context, first_text: str, second_text: str, first: str, second: str) -> None:
    """When the run first asks the API about its batch (the run's calls are waiting on it), the ledger is given these
    answers from that batch, as a collection of another process's would have stored them before it stopped."""
    w = world(context)

    def store() -> None:
        actor = w.current_actor()
        ledger = w.ledger()
        [batch] = ledger.batches(states=[BatchState.WAITING])
        assert batch.provider_batch_id is not None
        rows = []
        for key, text in ((first, first_text), (second, second_text)):
            line = {
                "custom_id": w.custom_id(key),
                "result": {
                    "type": "succeeded",
                    "message": {
                        "id": f"msg_{key}",
                        "type": "message",
                        "role": "assistant",
                        "model": actor.configuration.model,
                        "content": [{"type": "text", "text": text}],
                        "stop_reason": "end_turn",
                        "stop_sequence": None,
                        "usage": {"input_tokens": 10, "output_tokens": 5},
                    },
                },
            }
            outcome, stored = actor.batch_codec().line_outcome(line, batch_id=batch.provider_batch_id, request_id=None)
            rows.append(result_row(key, outcome, stored, used=1, allowed=1))
        ledger.record_outcomes(batch.id, rows, now=w.clock.now())

    w.hooks.before("batches.retrieve", store)


@then('results 0 and 1 read "{first}" and "{second}", the others the API\'s answers')
def step_stored_texts(context: Context, first: str, second: str) -> None:
    items = list(_result(context))
    assert [item.text for item in items[:2]] == [first, second], [item.text for item in items]
    for item in items[2:]:
        assert item.text, item
        assert "Stored elsewhere" not in item.text, item.text


@then('the ledger holds {count:d} result for each of "{first}" to "{last}" that was answered, {total:d} in all')
def step_results_answered(context: Context, count: int, first: str, last: str, total: int) -> None:
    held = _results_by_key(context)
    answered = [key for key in _keys(first, last) if key in held]
    assert all(held[key] == count for key in answered), held
    assert sum(held[key] for key in answered) == total, held


@then('the ledger holds {count:d} result for each of "{first}" to "{last}", none stored twice')
def step_results_once(context: Context, count: int, first: str, last: str) -> None:
    held = _results_by_key(context)
    assert {key: held[key] for key in _keys(first, last)} == dict.fromkeys(_keys(first, last), count), held


@then("the ledger's sums count {count:d} answers, costing what the run's answers cost")
def step_sums_once(context: Context, count: int) -> None:
    result = _result(context)
    [line] = world(context).ledger().views.spend_by("provider")
    assert line.answers == count, line
    cost = result.cost_usd
    assert cost is not None, result.summary()
    assert cost > 0, cost
    assert line.cost_usd == cost, (line.cost_usd, cost)
    records = world(context).ledger().requests_for([item.key for item in result])
    assert sum((record.cost_usd or Decimal(0) for record in records), Decimal(0)) == cost, records


# -- calls that start waiting while their batch is being collected -------------------------------------------------


@given("a batch's results are stored {count:d} at a time")
def step_chunks_of(context: Context, count: int) -> None:
    """The first transaction of a batch's results holds `count` (each after twice the one before): a batch of a few
    requests is stored, and its calls answered, in several chunks, as one of thousands is."""
    real = collection.RESULTS_PER_TRANSACTION
    collection.RESULTS_PER_TRANSACTION = count
    world(context).cleanups.append(lambda: setattr(collection, "RESULTS_PER_TRANSACTION", real))


@when(
    'the actor\'s batch engine sends {count:d} prompts "{template}" as "{first}" to "{last}" in one batch, and a late'
    " call that read one of them waiting on it starts waiting at download {nth:d} of its results, once that one is"
    " answered"
)
def step_late_call(context: Context, count: int, template: str, first: str, last: str, nth: int) -> None:
    """The engine's own path for a group (a bulk run's), and a late call of the same engine: one that read a request's
    record while it waited on the batch, and comes to wait on the batch's collection (`_final`: the batch is polled
    here) only once the collection has handed that request's outcome out: it read the record before the result was
    stored, and was slow to come back (on a remote store: its read waited for the server). It starts at the `nth`
    download of the batch's results (the collection under way), for the first request whose call in the group is
    answered by then, and is given `_LATE_WAIT` real seconds to get its answer once the group's calls have theirs."""
    w = world(context)
    actor = w.current_actor()
    codec = actor.batch_codec()
    backend = actor.batch_backend()
    keys = _keys(first, last)
    assert len(keys) == count, (keys, count)
    read: dict[str, RequestRecord] = {}
    late: dict[str, Any] = {}

    def read_waiting() -> None:
        """The late call's read of the records, while their batch runs (before any result of it is stored)."""
        if not read:
            read.update((record.key, record) for record in w.ledger().requests_for(keys))

    w.hooks.before_every("batches.retrieve", read_waiting)

    async def send() -> None:
        engine = BatchEngine(backend, actor.ledger, endpoint=backend.endpoint, settings=actor.configuration.batch,
                             clock=w.clock)  # fmt: skip

        async def start_late() -> None:
            """At the `nth` download: once one of the group's calls is answered, a late call for it waits here."""
            for _ in range(500):
                if any(group[k].done() for k in keys):
                    break
                await asyncio.sleep(0.01)
            answered = [k for k in keys if group[k].done()]
            if not answered:
                return
            key = late["key"] = answered[0]
            record = read[key]
            late["read"] = record.state
            task = late["task"] = asyncio.ensure_future(engine._final(record))  # pyright: ignore[reportPrivateUsage]
            for _ in range(500):  # until it waits on this engine (or is answered already)
                waiting = engine._futures.get(key)  # pyright: ignore[reportPrivateUsage]
                if task.done() or (waiting is not None and waiting is not group[key] and not waiting.done()):
                    break
                await asyncio.sleep(0.01)

        w.hooks.before("batches.results", start_late, nth=nth)
        try:
            calls = []
            for n, k in enumerate(keys):
                params: dict[str, Any] = {
                    "model": actor.configuration.model,
                    "max_tokens": 64,
                    "messages": [{"role": "user", "content": template.replace("{n}", str(n))}],
                }
                calls.append(GroupCall(k, params, codec.request_size(w.custom_id(k), stored_json(params))))
            group = await engine.send_group(calls, actor=actor.name)
            outcomes = await asyncio.gather(*(group[k] for k in keys), return_exceptions=True)
            w.asked["outcomes"] = dict(zip(keys, outcomes, strict=True))
            task = late.get("task")
            assert task is not None, "the late call never started: no call of the group was answered at that download"
            try:
                late["outcome"] = await asyncio.wait_for(asyncio.shield(task), _LATE_WAIT)
            except TimeoutError:
                late["outcome"] = None
                task.cancel()
        finally:
            await engine.aclose()

    w.run(send())
    w.asked["late"] = late


def _texts(context: Context, count: int) -> dict[str, str]:
    outcomes: dict[str, Any] = world(context).asked["outcomes"]
    assert len(outcomes) == count, outcomes
    texts = {key: getattr(outcome, "text", outcome) for key, outcome in outcomes.items()}
    assert all(isinstance(text, str) and text for text in texts.values()), texts
    return texts


@then('each of the {count:d} calls got its answer, "{first}" and "{second}" reading "{first_text}" and "{second_text}"')
def step_group_answers_stored(
    context: Context, count: int, first: str, second: str, first_text: str, second_text: str
) -> None:
    texts = _texts(context, count)
    assert (texts[first], texts[second]) == (first_text, second_text), texts


@then("each of the {count:d} calls got the API's answer")
def step_group_answers(context: Context, count: int) -> None:
    texts = _texts(context, count)
    assert not any("Stored elsewhere" in text for text in texts.values()), texts


@then("the late call read its request waiting, and got what its request's call got, within the bounded wait")
def step_late_answered(context: Context) -> None:
    w = world(context)
    late: dict[str, Any] = w.asked["late"]
    key = late["key"]
    assert late.get("read") is RequestState.WAITING, late
    outcome = late.get("outcome")
    assert outcome is not None, (
        f"the late call for {key} got no answer within {_LATE_WAIT:g} s of its batch's other calls: it waits on a"
        " future nothing settles"
    )
    expected = getattr(w.asked["outcomes"][key], "text", None)
    assert getattr(outcome, "text", outcome) == expected, (outcome, expected)
