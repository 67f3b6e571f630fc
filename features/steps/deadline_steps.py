"""Steps for deadlines across venues: a bulk run's route, its dry run, a late batch moved."""

from __future__ import annotations

import asyncio
from typing import Any

from _bulk_support import anthropic_batches as _batches
from _bulk_support import bulk_state as _bulk
from _bulk_support import prompts as _prompts
from _bulk_support import run_result as _result
from _support import World, check_error, emulated_reply_to, world
from step_context import Context, given, then, when

from lowtide import ActorResponse
from lowtide.bulk.outputs.results import ItemStatus
from lowtide.core.clock import ManualClock
from lowtide.errors import ActorError
from lowtide.ledger.store import RequestState
from lowtide.routing.deadlines import parse_deadline

_SETTLE = 50  # (as bulk_runs_steps: a timer that only sleeps must not race through virtual time past a create)


def _settled(w: World) -> None:
    if isinstance(w.clock, ManualClock):
        w.clock.settle = _SETTLE


@given("the ledger's history holds {count:d} batches of this provider that took {seconds:g} seconds")
def step_history(context: Context, count: int, seconds: float) -> None:
    w = world(context)
    before = w.emu.processing_seconds
    w.emu.processing_seconds = seconds
    w.run(w.current_actor().map([f"Earlier {n}" for n in range(count)], items_per_batch=1, run_id="earlier"))
    w.emu.processing_seconds = before
    w.asked["batches before"] = count


@given("the emulated API's batches now take {hours:g} hours")
def step_batches_late(context: Context, hours: float) -> None:
    world(context).emu.processing_seconds = hours * 3600


@when('the actor maps the prompts with the deadline "{deadline}"')
def step_map_deadline(context: Context, deadline: str) -> None:
    w = world(context)
    _settled(w)
    w.error = None
    state = _bulk(w)
    try:
        state["deadline at"] = parse_deadline(deadline, now=w.clock.now()).at
    except ActorError:
        state["deadline at"] = None
    try:
        state["result"] = w.run(w.current_actor().map(_prompts(w), deadline=deadline))
    except ActorError as exc:
        w.error = exc


@when('the actor records the prompts as run "{run_id}" with the deadline "{deadline}"')
def step_record_deadline(context: Context, run_id: str, deadline: str) -> None:
    w = world(context)
    run = w.current_actor().bulk(run_id=run_id, deadline=deadline).add_jobs(_prompts(w))
    assert run.record() == run_id


@when("{hours:g} hours pass on the scenario's clock")
def step_hours_pass(context: Context, hours: float) -> None:
    world(context).clock.advance(hours * 3600)


@when('the actor plans the prompts with the deadline "{deadline}"')
def step_plan_deadline(context: Context, deadline: str) -> None:
    w = world(context)
    _bulk(w)["plan"] = w.run(w.current_actor().map(_prompts(w), dry_run=True, deadline=deadline))


@then('the run was refused with a {name} saying "{text}"')
def step_refused(context: Context, name: str, text: str) -> None:
    error = world(context).error
    check_error(error, name)
    assert text in str(error), str(error)


@then('the plan\'s route is "{venue}"')
def step_route(context: Context, venue: str) -> None:
    plan: Any = _bulk(world(context))["plan"]
    assert plan.route is not None, plan.lines()
    assert plan.route.venue.name == venue, plan.lines()


@then("the API received {batches:d} batches and {calls:d} live calls")
def step_batches_and_calls(context: Context, batches: int, calls: int) -> None:
    counted = world(context).emu.calls
    assert (counted["batches.create"], counted["messages.create"]) == (batches, calls), counted


@then("every result is the emulated reply to its own prompt")
def step_replies(context: Context) -> None:
    w = world(context)
    result = _result(w)
    for item, prompt in zip(result.items, _prompts(w), strict=True):
        assert item.status is ItemStatus.SUCCEEDED, (item.index, item.status, item.reason)
        assert item.text is not None, item.index
        assert item.text.startswith(emulated_reply_to(prompt)[:40]), (item.index, item.text)


def _states(w: World) -> list[tuple[RequestState | None, RequestState | None]]:
    """Each item's first attempt's state and its second's (None: no such request)."""
    ledger = w.ledger()
    result = _result(w)
    out: list[tuple[RequestState | None, RequestState | None]] = []
    for item in result.items:
        run_id = result.run_id
        first = ledger.request(f"{run_id}-{item.index}")
        second = ledger.request(f"{run_id}-{item.index}-a2")
        out.append((first.state if first else None, second.state if second else None))
    return out


@then("the late batch answered some items before its cancel took, and they were not sent again")
def step_answered_kept(context: Context) -> None:
    states = _states(world(context))
    kept = [i for i, (first, second) in enumerate(states) if first is RequestState.SUCCEEDED]
    assert 0 < len(kept) < len(states), states
    assert all(states[i][1] is None for i in kept), states


@then("only the items the batch's results show canceled were sent live, each once")
def step_only_canceled_moved(context: Context) -> None:
    w = world(context)
    states = _states(w)
    canceled = [i for i, (first, _) in enumerate(states) if first is RequestState.CANCELED]
    moved = [i for i, (_, second) in enumerate(states) if second is RequestState.SUCCEEDED]
    assert canceled, states
    assert canceled == moved, states
    late = _batches(w)[-1]
    assert late.request_counts.canceled == len(canceled), late.request_counts
    assert w.emu.calls["messages.create"] == len(canceled), w.emu.calls


@then("no item was paid for twice")
def step_paid_once(context: Context) -> None:
    w = world(context)
    ledger = w.ledger()
    result = _result(w)
    for item in result.items:
        paid = [r for k in (f"{result.run_id}-{item.index}", f"{result.run_id}-{item.index}-a2")
                if (r := ledger.request(k)) is not None and r.state is RequestState.SUCCEEDED]  # fmt: skip
        assert len(paid) == 1, (item.index, paid)


@then("the run ended before its deadline")
def step_before_deadline(context: Context) -> None:
    w = world(context)
    at = _bulk(w)["deadline at"]
    assert at is not None
    assert w.clock.now() <= at, (w.clock.now(), at)


@then("the OpenAI API answered {count:d} live calls at the flex tier and created no batch")
def step_flex_calls(context: Context, count: int) -> None:
    w = world(context)
    calls = w.emu.calls
    live = calls["openai.responses.create"] + calls["openai.chat.completions.create"]
    assert (live, calls["openai.batches.create"]) == (count, 0), calls
    # Each at half the price the same prompt costs at the standard tier (asked again now, live).
    for item, prompt in zip(_result(w).items, _prompts(w), strict=True):
        standard = w.run(w.current_actor().run(prompt, mode="live"))
        assert item.response is not None, item
        assert item.response.cost is not None, item
        assert standard.cost is not None
        assert item.response.cost.total_usd * 2 == standard.cost.total_usd, (item.response.cost, standard.cost)


@when('the actor is asked "{prompt}" with the deadline "{deadline}"')
def step_call_deadline(context: Context, prompt: str, deadline: str) -> None:
    w = world(context)
    _settled(w)
    w.error = None
    try:
        w.asked["call"] = w.run(w.current_actor().run(prompt, deadline=deadline))
    except ActorError as exc:
        w.error = exc


@when('the actor is asked {count:d} prompts "{template}" at once with the deadline "{deadline}", and 1 without')
def step_calls_deadline(context: Context, count: int, template: str, deadline: str) -> None:
    w = world(context)
    _settled(w)
    actor = w.current_actor()
    prompts = [template.format(n=n) for n in range(count)]
    w.asked["prompts"] = prompts
    w.asked["deadline at"] = parse_deadline(deadline, now=w.clock.now()).at
    w.asked["live before"] = w.emu.calls["messages.create"]
    answered_at: dict[str, float] = {}

    async def ask(prompt: str, due: str | None) -> object:
        answer = await (actor.run(prompt, deadline=due) if due is not None else actor.run(prompt))
        answered_at[prompt] = w.clock.now()
        return answer

    async def all_at_once() -> list[object]:
        return list(
            await asyncio.gather(*(ask(p, deadline) for p in prompts), ask("No hurry", None), return_exceptions=True)
        )

    w.asked["answers"] = w.run(all_at_once())
    w.asked["answered at"] = answered_at


@then("every call was answered with the emulated reply to its own prompt")
def step_calls_answered(context: Context) -> None:
    w = world(context)
    prompts = [*w.asked["prompts"], "No hurry"]
    for prompt, answer in zip(prompts, w.asked["answers"], strict=True):
        assert isinstance(answer, ActorResponse), answer
        assert answer.text.startswith(emulated_reply_to(prompt)[:40]), (prompt, answer.text)


def _late_batches(w: World) -> list[Any]:
    """The batches created after the ledger's history: the scenario's own."""
    return _batches(w)[w.asked["batches before"] :]


@then("the calls with the deadline travelled in one batch of their own, the call without it in another")
def step_lanes(context: Context) -> None:
    w = world(context)
    sizes = sorted(sum(b.request_counts.model_dump().values()) for b in _late_batches(w))
    assert sizes == [1, len(w.asked["prompts"])], sizes


@then("the late batch answered some calls before its cancel took, and only the calls it canceled were sent live, once")
def step_calls_moved(context: Context) -> None:
    w = world(context)
    [late] = [b for b in _late_batches(w) if b.request_counts.canceled]
    counts = late.request_counts
    assert 0 < counts.succeeded < len(w.asked["prompts"]), counts
    assert counts.succeeded + counts.canceled == len(w.asked["prompts"]), counts
    assert w.emu.calls["messages.create"] - w.asked["live before"] == counts.canceled, w.emu.calls


@then("the calls with the deadline were all answered before it")
def step_calls_on_time(context: Context) -> None:
    w = world(context)
    due = w.asked["deadline at"]
    late = {p: at for p, at in w.asked["answered at"].items() if p != "No hurry" and at > due}
    assert not late, (late, due)


@then("the call without the deadline was answered by its batch, never canceled")
def step_no_hurry(context: Context) -> None:
    w = world(context)
    [alone] = [b for b in _late_batches(w) if sum(b.request_counts.model_dump().values()) == 1]
    assert (alone.request_counts.succeeded, alone.request_counts.canceled) == (1, 0), alone.request_counts
    answer = w.asked["answers"][-1]
    assert isinstance(answer, ActorResponse), answer
    assert answer.ids.batch_id is not None, answer


@when('the actor runs {count:d} prompts "{template}" with run_many and the deadline "{deadline}"')
def step_many_deadline(context: Context, count: int, template: str, deadline: str) -> None:
    w = world(context)
    _settled(w)
    prompts = [template.format(n=n) for n in range(count)]
    w.asked["prompts"] = prompts
    w.asked["deadline at"] = parse_deadline(deadline, now=w.clock.now()).at
    w.asked["live before"] = w.emu.calls["messages.create"]
    w.asked["outcomes"] = w.run(w.current_actor().run_many(prompts, deadline=deadline))
    w.asked["returned at"] = w.clock.now()


@then("every outcome is the emulated reply to its own prompt")
def step_many_answered(context: Context) -> None:
    w = world(context)
    for prompt, outcome in zip(w.asked["prompts"], w.asked["outcomes"], strict=True):
        assert isinstance(outcome, ActorResponse), outcome
        assert outcome.text.startswith(emulated_reply_to(prompt)[:40]), (prompt, outcome.text)


@then("the late batch answered some requests before its cancel took, and only those it canceled were sent live, once")
def step_many_moved(context: Context) -> None:
    w = world(context)
    [late] = _late_batches(w)
    counts = late.request_counts
    assert 0 < counts.succeeded < len(w.asked["prompts"]), counts
    assert counts.succeeded + counts.canceled == len(w.asked["prompts"]), counts
    assert w.emu.calls["messages.create"] - w.asked["live before"] == counts.canceled, w.emu.calls
    by_batch = [o for o in w.asked["outcomes"] if isinstance(o, ActorResponse) and o.ids.batch_id is not None]
    assert len(by_batch) == counts.succeeded, by_batch


@then("run_many returned before its deadline")
def step_many_on_time(context: Context) -> None:
    w = world(context)
    assert w.asked["returned at"] <= w.asked["deadline at"], (w.asked["returned at"], w.asked["deadline at"])


@then('the call was refused with a {name} saying "{text}"')
def step_call_refused(context: Context, name: str, text: str) -> None:
    step_refused(context, name, text)


@then('the call was answered with the emulated reply to "{prompt}"')
def step_call_answered(context: Context, prompt: str) -> None:
    w = world(context)
    response = w.asked.get("call")
    assert response is not None, w.error
    assert response.text.startswith(emulated_reply_to(prompt)[:40]), response.text


@when("the emulator is asked over HTTP to make its batches take {seconds:g} seconds")
def step_processing_over_http(context: Context, seconds: float) -> None:
    import httpx2

    w = world(context)

    async def post() -> int:
        async with httpx2.AsyncClient(transport=w.emu.transport(), base_url=w.emu.base_url) as client:
            return (await client.post("/_emulator/processing", json={"seconds": seconds})).status_code

    w.asked["status"] = w.run(post())


@then("the emulator answered {status:d} and its batches now take {seconds:g} seconds")
def step_processing_answered(context: Context, status: int, seconds: float) -> None:
    w = world(context)
    assert w.asked["status"] == status, w.asked["status"]
    assert w.emu.processing_seconds == seconds, w.emu.processing_seconds


def _indexes(text: str) -> list[int]:
    return [int(part) for part in text.replace(" and ", ", ").split(", ")]


@given('the first attempts of items {indexes} of run "{run_id}" end as canceled in their batch')
def step_first_canceled(context: Context, indexes: str, run_id: str) -> None:
    w = world(context)
    for index in _indexes(indexes):
        w.emu.faults.outcome(w.custom_id(f"{run_id}-{index}"), "canceled")


@when('the prompts are mapped as run "{run_id}" by the deadline "{deadline}"')
def step_map_run_deadline(context: Context, run_id: str, deadline: str) -> None:
    w = world(context)
    _settled(w)
    w.asked["live before"] = w.emu.calls["messages.create"]
    _bulk(w)["result"] = w.run(w.current_actor().map(_prompts(w), run_id=run_id, deadline=deadline))


@then("items {indexes} were answered live under their second attempts' keys, and nothing else was sent live")
def step_moved_again(context: Context, indexes: str) -> None:
    w = world(context)
    result = _result(w)
    ledger = w.ledger()
    wanted = _indexes(indexes)
    for index in wanted:
        first = ledger.request(f"{result.run_id}-{index}")
        second = ledger.request(f"{result.run_id}-{index}-a2")
        assert first is not None, index
        assert first.state is RequestState.CANCELED, (index, first.state)
        assert second is not None, index
        assert second.state is RequestState.SUCCEEDED, (index, second.state)
        assert second.batch_id is None, (index, second.batch_id)
    sent = w.emu.calls["messages.create"] - w.asked["live before"]
    assert sent == len(wanted), (sent, wanted)
