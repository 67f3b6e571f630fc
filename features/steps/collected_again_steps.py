"""Steps of collected_again.feature: a batch collected again stores only the results its ledger lacks."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal

from _openai_provider_support import MODEL as OPENAI_MODEL
from _support import world
from step_context import Context, given, then

from lowtide import MemoryLedger
from lowtide.batching.policy import result_row
from lowtide.bulk.results import RunResult
from lowtide.ledger.records import COPIED
from lowtide.ledger.store import BatchState


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
