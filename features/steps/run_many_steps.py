"""Steps of run_many.feature: several calls at once through the ledger, their keys, budgets and outcomes."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

from _support import World, answer_to, check_error, emulated_reply_to, literal, names, new_program_actor, world
from step_context import Context, given, then, when

from lowtide import Actor, ActorError, ActorResponse, BatchProcessingMode, Outcome
from lowtide.batching.keys import derive_key
from lowtide.cost.pricing import worst_case_cost


def _prompts(text: str) -> list[str]:
    return names(text)


def _many(w: World, actor: Actor, prompts: list[str], **options: Any) -> None:
    """`actor.run_many(prompts, ...)`, its outcomes kept (or the error it raised); each run_many call's list too."""
    outcomes = w.attempt_async(lambda: actor.run_many(prompts, **options))
    w.outcomes = outcomes or []
    if outcomes is not None:
        w.witnessed.setdefault("run_many", []).append(outcomes)
    w.value = {"prompts": prompts}


def _worst_case(actor: Actor, prompt: str) -> Decimal:
    """One request's worst case, as the budget checks count it: at batch prices through the codec, or live."""
    request = actor.request(prompt)
    if actor.resolve_mode() is BatchProcessingMode.LIVE:
        sent = request.model_dump(mode="json", include={"model", "max_tokens", "messages", "system", "tools"})
        estimate = worst_case_cost(sent, mode=BatchProcessingMode.LIVE)
    else:
        codec = actor.batch_codec()
        estimate = codec.worst_case_usd(codec.encode_request(request), None, mode=BatchProcessingMode.BATCH)
    assert estimate is not None, "the model has no price"
    return estimate


@given('an actor "{name}" in batch mode whose max_cost_usd is {times:g} times one request\'s worst case')
def step_actor_budget(context: Context, name: str, times: float) -> None:
    w = world(context)
    settings: dict[str, Any] = {"name": name, "model": "claude-sonnet-5-5", "batch_processing": "batch"}
    probe = Actor(settings, clock=w.clock)  # only to price a request: it sends nothing
    settings["max_cost_usd"] = float(_worst_case(probe, "Plan A") * Decimal(str(times)))
    w.add_actor(settings)


@when('the actor runs "{prompts}" with run_many')
def step_run_many_prompts(context: Context, prompts: str) -> None:
    w = world(context)
    _many(w, w.current_actor(), _prompts(prompts))


@when("the actor runs an empty list with run_many")
def step_run_many_empty(context: Context) -> None:
    w = world(context)
    _many(w, w.current_actor(), [])


@when('the actor runs "{prompts}" with run_many and the keys {keys}')
def step_run_many_keys(context: Context, prompts: str, keys: str) -> None:
    w = world(context)
    _many(w, w.current_actor(), _prompts(prompts), keys=literal(keys))


@when('the actor runs "{prompts}" with run_many and a budget of {times:g} times one request\'s worst case')
def step_run_many_budget(context: Context, prompts: str, times: float) -> None:
    w = world(context)
    actor = w.current_actor()
    budget = float(_worst_case(actor, "Plan A") * Decimal(str(times)))
    _many(w, actor, _prompts(prompts), max_cost_usd=budget)


@when('a new program\'s actor "{name}" runs "{prompts}" with run_many')
def step_new_program_run_many(context: Context, name: str, prompts: str) -> None:
    w = world(context)
    _many(w, new_program_actor(w, name), _prompts(prompts))


@when('the actor and a new program\'s actor "{name}" each run "{prompts}" with run_many, at once')
def step_two_programs_run_many(context: Context, name: str, prompts: str) -> None:
    w = world(context)
    asked = _prompts(prompts)
    first, second = w.current_actor(), new_program_actor(w, name)

    async def both() -> list[list[Outcome]]:
        return list(await asyncio.gather(first.run_many(asked), second.run_many(asked)))

    w.witnessed["run_many"] = list(w.run(both()))
    w.value = {"prompts": asked}


@when('at once, the actor runs "{prompts}" with run_many and is asked "{third}" and "{fourth}"')
def step_run_many_beside_runs(context: Context, prompts: str, third: str, fourth: str) -> None:
    w = world(context)
    actor = w.current_actor()

    async def together() -> tuple[list[Outcome], Any, Any]:
        return await asyncio.gather(actor.run_many(_prompts(prompts)), actor.run(third), actor.run(fourth))

    many, w.asked[third], w.asked[fourth] = w.run(together())
    w.witnessed["run_many"] = [many]
    w.outcomes = many
    w.value = {"prompts": _prompts(prompts)}


def _replies(outcomes: list[Outcome], prompts: list[str]) -> None:
    assert len(outcomes) == len(prompts), outcomes
    for outcome, prompt in zip(outcomes, prompts, strict=True):
        assert isinstance(outcome, ActorResponse), f"{prompt!r} was not answered: {outcome!r}"
        assert outcome.text.startswith(emulated_reply_to(prompt)), (prompt, outcome.text)


@then('both run_many calls got the emulated replies to "{prompts}", in order')
def step_both_got_replies(context: Context, prompts: str) -> None:
    w = world(context)
    w.succeeded()
    calls = w.witnessed["run_many"]
    assert len(calls) == 2, calls
    for outcomes in calls:
        _replies(outcomes, _prompts(prompts))
    first, second = calls
    assert [o.text for o in first] == [o.text for o in second], "the two calls got different answers"


@then('the run_many call got the emulated replies to "{prompts}", in order')
def step_got_replies(context: Context, prompts: str) -> None:
    w = world(context)
    w.succeeded()
    _replies(w.outcomes, _prompts(prompts))


@then("the run_many call got the same answers as the first time")
def step_same_answers(context: Context) -> None:
    w = world(context)
    w.succeeded()
    first, last = w.witnessed["run_many"][0], w.witnessed["run_many"][-1]
    assert [(o.text, o.ids) for o in first] == [(o.text, o.ids) for o in last], (first, last)


@then("the run_many call got no outcomes")
def step_no_outcomes(context: Context) -> None:
    w = world(context)
    w.succeeded()
    assert w.witnessed["run_many"] == [[]], w.witnessed["run_many"]


@then('the single calls got the emulated replies to "{prompts}"')
def step_single_calls(context: Context, prompts: str) -> None:
    w = world(context)
    for prompt in _prompts(prompts):
        assert answer_to(w, prompt).text.startswith(emulated_reply_to(prompt))


@then("the API created each of the {count:d} requests exactly once, in {batches:d} batch")
@then("the API created each of the {count:d} requests exactly once, in {batches:d} batches")
def step_created_once(context: Context, count: int, batches: int) -> None:
    w = world(context)
    created = w.emu.created_custom_ids
    assert len(created) == count, created
    assert set(created.values()) == {1}, created
    assert w.emu.created_batches == batches, w.emu.created_batches
    mine = {record.custom_id for record in w.ledger().requests()}
    assert set(created) <= mine, (set(created), mine)


@then('the ledger holds "{first}" under the key "{key}", and "{second}" under a key derived from it')
def step_keys_held(context: Context, first: str, key: str, second: str) -> None:
    w = world(context)
    actor = w.current_actor()
    codec = actor.batch_codec()
    derived = derive_key(codec.name, codec.encode_request(actor.request(second)))
    records = {record.key: record for record in w.ledger().requests()}
    assert set(records) == {key, derived}, sorted(records)
    assert records[key].state.value == records[derived].state.value == "succeeded", records


@then('the answer to "{prompt}" carries the custom id the ledger gave the key "{key}"')
def step_answer_custom_id(context: Context, prompt: str, key: str) -> None:
    w = world(context)
    index = w.value["prompts"].index(prompt)
    outcome = w.outcomes[index]
    assert isinstance(outcome, ActorResponse), outcome
    assert outcome.ids.custom_id == w.custom_id(key) == f"{key}_{w.ledger().identity()}", outcome.ids


@then("the run_many outcomes are, in order:")
def step_outcomes_in_order(context: Context) -> None:
    w = world(context)
    w.succeeded()
    assert len(w.outcomes) == len(context.table.rows), w.outcomes
    for outcome, row in zip(w.outcomes, context.table, strict=True):
        if row["outcome"] == "reply":
            assert isinstance(outcome, ActorResponse), outcome
            assert outcome.text.startswith(emulated_reply_to(row["saying"])), outcome.text
        else:
            check_error(outcome, row["outcome"])
            assert row["saying"] in str(outcome), str(outcome)


@then("{answered:d} of the run_many outcomes are the emulated replies to their prompts, and {failed:d} is an {name:w}")
def step_live_outcomes(context: Context, answered: int, failed: int, name: str) -> None:
    w = world(context)
    w.succeeded()
    prompts: list[str] = w.value["prompts"]
    replies = [o for o in w.outcomes if isinstance(o, ActorResponse)]
    errors = [o for o in w.outcomes if isinstance(o, ActorError)]
    assert (len(replies), len(errors)) == (answered, failed), w.outcomes
    for error in errors:
        check_error(error, name)
    for outcome, prompt in zip(w.outcomes, prompts, strict=True):
        if isinstance(outcome, ActorResponse):
            assert outcome.text.startswith(emulated_reply_to(prompt)), (prompt, outcome.text)
