"""Steps shared by the durable batch features: keyed and concurrent calls, programs that end, and what the ledger
and the API hold afterwards."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import subprocess
import sys
from collections import Counter
from typing import Any

import httpx2
from _support import (
    API_KEY,
    World,
    answer_to,
    check_error,
    checked_models,
    emulated_reply_to,
    first_prompt,
    names,
    new_program_actor,
    world,
    yaml_doc,
)
from step_context import Context, given, then, when

from lowtide import Actor, ActorError, ActorResponse, Ticket
from lowtide.ledger.records import BatchIntent
from lowtide.ledger.store import NewRequest
from lowtide.providers.anthropic.mapping import CUSTOM_ID_PATTERN, batch_entry, to_message_params

# -- actors ----------------------------------------------------------------------------------------------------------


def _settings(name: str, text: str | None) -> dict[str, Any]:
    return {"name": name, "model": "claude-sonnet-5-5", **yaml_doc(text)}


@given('actors "{first}" and "{second}", each with:')
def step_two_actors(context: Context, first: str, second: str) -> None:
    w = world(context)
    for name in (first, second):
        w.add_actor(_settings(name, context.text))


@given('actors "{name}" with their own API clients, each with:')
def step_own_client_actors(context: Context, name: str) -> None:
    """Actors that build (and so own, and close) their client: given only an HTTP client to the emulator and a key."""
    w = world(context)
    w.witnessed["own-client actor"] = [_settings(name, context.text)]


def _own_client_actor(w: World) -> Actor:
    [settings] = w.witnessed["own-client actor"]
    http = httpx2.AsyncClient(transport=w.transport(), base_url=w.emu.base_url)
    actor = Actor(settings, http_client=http, api_key=API_KEY, clock=w.clock)
    w.cleanups.append(actor.aclose)
    return actor


@when('a first such actor is asked "{prompt:Q}" and then closed')
def step_first_own_actor(context: Context, prompt: str) -> None:
    w = world(context)
    actor = _own_client_actor(w)

    async def ask_and_close() -> ActorResponse[Any]:
        async with actor:
            return await actor.run(prompt)

    w.response = w.attempt_async(ask_and_close)
    w.succeeded()


@when('a second such actor is asked "{prompt:Q}"')
def step_second_own_actor(context: Context, prompt: str) -> None:
    w = world(context)
    actor = _own_client_actor(w)
    w.response = w.attempt_async(lambda: actor.run(prompt))


# -- calls -----------------------------------------------------------------------------------------------------------


def _ask(w: World, actor: Actor, prompt: str, **kwargs: Any) -> None:
    w.response = w.attempt_async(lambda: actor.run(prompt, **kwargs))
    w.asked[prompt] = w.response if w.error is None else w.error


@when('the actor is asked "{prompt:Q}" with the key "{key}"')
def step_ask_with_key(context: Context, prompt: str, key: str) -> None:
    w = world(context)
    _ask(w, w.current_actor(), prompt, key=key)


@when('the actor is asked "{prompt:Q}" with the key "{key}" and:')
def step_ask_with_key_and(context: Context, prompt: str, key: str) -> None:
    w = world(context)
    _ask(w, w.current_actor(), prompt, key=key, **yaml_doc(context.text))


@then('both answers called "{tool}" with exactly this input:')
def step_both_called_exactly(context: Context, tool: str) -> None:
    w = world(context)
    expected = json.loads(context.text)
    assert len(w.answers) >= 2, w.answers
    for answer in (w.answers[0], w.answers[-1]):
        [call] = answer.tool_calls
        assert call.name == tool, call
        assert call.input == expected, call.input
        assert all(type(call.input[name]) is type(value) for name, value in expected.items()), call.input


@when('actor "{name}" is asked "{prompt:Q}"')
def step_named_actor_asked(context: Context, name: str, prompt: str) -> None:
    w = world(context)
    _ask(w, w.actors[name], prompt)


@when('a new program\'s actor "{name}" is asked "{prompt:Q}" with the key "{key}"')
def step_new_program_asks(context: Context, name: str, prompt: str, key: str) -> None:
    w = world(context)
    actor = new_program_actor(w, name)
    w.started_at = w.clock.now()
    w.error = None
    try:
        w.response = w.in_program(lambda: actor.run(prompt, key=key))
    except ActorError as exc:
        w.response, w.error = None, exc


@when('the actor and a new program\'s actor ask "{prompt:Q}" with the key "{key}" at once')
def step_two_programs_at_once(context: Context, prompt: str, key: str) -> None:
    w = world(context)
    first, second = w.current_actor(), new_program_actor(w, w.current_actor().name)

    async def both() -> list[ActorResponse[Any]]:
        return list(await asyncio.gather(first.run(prompt, key=key), second.run(prompt, key=key)))

    w.answers = w.attempt_async(both) or []
    w.succeeded()


@then("both were answered with the same answer")
def step_both_same(context: Context) -> None:
    w = world(context)
    first, second = w.answers
    assert first.text.startswith('Emulated reply to "'), first.text
    assert first.model_dump(exclude={"parsed"}) == second.model_dump(exclude={"parsed"}), (first, second)


@when("the actor is asked these prompts at once:")
@when("these calls are made at once:")
def step_ask_at_once(context: Context) -> None:
    """Every row is one call (`prompt`, and optionally the `key` and the `actor` to ask), all started together."""
    w = world(context)
    rows = [row.as_dict() for row in context.table]
    # Each actor's model is looked up first, as in a process that has called before: with the scenario's manual
    # clock a batch's coalescing window takes no time, and calls held up by look-ups would miss it.
    w.run(checked_models({w.actors[row["actor"]] if row.get("actor") else w.current_actor() for row in rows}))

    async def all_at_once() -> list[Any]:
        calls = [
            (w.actors[row["actor"]] if row.get("actor") else w.current_actor()).run(
                row["prompt"], **({"key": row["key"]} if row.get("key") else {})
            )
            for row in rows
        ]
        return await asyncio.gather(*calls, return_exceptions=True)

    w.error = None
    results = w.run(all_at_once())
    for row, result in zip(rows, results, strict=True):
        if isinstance(result, BaseException) and not isinstance(result, ActorError):
            raise result
        w.asked[row.get("key") or row["prompt"]] = result


@when("the actor is asked {count:d} prompts of {chars:d} characters at once")
def step_ask_long_prompts_at_once(context: Context, count: int, chars: int) -> None:
    w = world(context)
    actor = w.current_actor()
    prompts = [f"Prompt {index}: " + "x" * (chars - len(f"Prompt {index}: ")) for index in range(count)]

    async def all_at_once() -> list[Any]:
        return await asyncio.gather(*(actor.run(prompt) for prompt in prompts), return_exceptions=True)

    for prompt, result in zip(prompts, w.run(all_at_once()), strict=True):
        w.asked[prompt] = result


@when("the actor is asked {count:d} numbered questions at once")
def step_ask_numbered(context: Context, count: int) -> None:
    w = world(context)
    actor = w.current_actor()
    keys = [f"question-{index:05d}" for index in range(count)]

    async def all_at_once() -> list[Any]:
        calls = (actor.run(f"Question {index}?", key=key) for index, key in enumerate(keys))
        return await asyncio.gather(*calls, return_exceptions=True)

    w.asked.update(zip(keys, w.run(all_at_once()), strict=True))


@when("the API's call counts are noted")
def step_note_calls(context: Context) -> None:
    w = world(context)
    w.witnessed["noted calls"] = [Counter(w.emu.calls)]


# -- parking ---------------------------------------------------------------------------------------------------------


def _park(w: World, actor: Actor, prompt: str, key: str, *, in_program: bool) -> None:
    async def park() -> Ticket:
        ticket = await actor.submit(prompt, key=key)
        # The time the ticket came back: the loop goes on running the actor's poller (and moving the clock) after.
        w.witnessed.setdefault("parked at", []).append((key, w.clock.now()))
        return ticket

    w.error = None
    try:
        ticket = w.in_program(park) if in_program else w.run(park())
    except ActorError as exc:
        w.error = exc
        return
    w.tickets[key] = ticket


@when('the actor parks "{prompt:Q}" with the key "{key}"')
def step_park(context: Context, prompt: str, key: str) -> None:
    w = world(context)
    _park(w, w.current_actor(), prompt, key, in_program=False)


@given('the actor parked "{prompt:Q}" with the key "{key}", in a program that then ended')
@when('the actor parks "{prompt:Q}" with the key "{key}", in a program that then ends')
def step_park_in_program(context: Context, prompt: str, key: str) -> None:
    w = world(context)
    _park(w, new_program_actor(w, w.current_actor().name), prompt, key, in_program=True)
    w.succeeded()


# -- answers ---------------------------------------------------------------------------------------------------------


@then("every call was answered with the emulated reply to its prompt")
def step_every_call_answered(context: Context) -> None:
    w = world(context)
    assert w.asked, "no calls were made"
    for label, outcome in w.asked.items():
        assert isinstance(outcome, ActorResponse), f"{label!r} was not answered: {outcome!r}"
        assert outcome.text.startswith('Emulated reply to "'), outcome.text
        request = w.ledger().request(label)
        prompt = first_prompt(request.params) if request is not None else label
        # The emulated model quotes a long prompt cut short: its beginning names the prompt answered.
        assert outcome.text.startswith(emulated_reply_to(prompt)[:60]), (label, outcome.text)


@then('the call for "{label}" failed with a {name:w} saying "{text}"')
def step_call_failed_with(context: Context, label: str, name: str, text: str) -> None:
    outcome = world(context).asked.get(label)
    check_error(outcome, name)
    assert text in str(outcome), str(outcome)


@then("the answers came in batches of {sizes}")
def step_batch_sizes(context: Context, sizes: str) -> None:
    w = world(context)
    per_batch = Counter(answer_to(w, label).ids.batch_id for label in w.asked)
    assert sorted(per_batch.values(), reverse=True) == [int(size) for size in names(sizes)], per_batch
    assert None not in per_batch, per_batch


@then("all answers came from one batch")
def step_one_batch(context: Context) -> None:
    w = world(context)
    batch_ids = {answer_to(w, label).ids.batch_id for label in w.asked}
    assert len(batch_ids) == 1, batch_ids
    assert None not in batch_ids, batch_ids


@then('the answer\'s custom_id is "{custom_id}"')
def step_answer_custom_id(context: Context, custom_id: str) -> None:
    assert world(context).answer().ids.custom_id == custom_id, world(context).answer().ids


@then('the answer\'s custom_id is its key "{key}" and the ledger\'s identity, "{key2}_<identity>"')
def step_answer_custom_id_of_key(context: Context, key: str, key2: str) -> None:
    w = world(context)
    identity = w.current_actor().ledger.identity()
    assert re.fullmatch(r"[0-9a-f]{12}", identity), identity
    assert w.answer().ids.custom_id == f"{key2}_{identity}" == w.custom_id(key), w.answer().ids


@then("the answer's custom_id is derived from its key, and valid for the API")
def step_answer_custom_id_derived(context: Context) -> None:
    custom_id = world(context).answer().ids.custom_id or ""
    assert custom_id.startswith("k-"), custom_id
    assert CUSTOM_ID_PATTERN.fullmatch(custom_id), custom_id


@then("the answer is the same answer as the first one")
def step_same_answer(context: Context) -> None:
    w = world(context)
    assert len(w.answers) >= 2, w.answers
    first, last = w.answers[0], w.answers[-1]
    assert last.model_dump(exclude={"parsed"}) == first.model_dump(exclude={"parsed"}), (first, last)


@then("the two answers came from different batches")
def step_different_batches(context: Context) -> None:
    w = world(context)
    first, last = w.answers[0], w.answers[-1]
    assert first.ids.batch_id != last.ids.batch_id, (first.ids, last.ids)


@then('the answer came from the batch of the ticket "{key}"')
def step_answer_from_ticket_batch(context: Context, key: str) -> None:
    w = world(context)
    ticket: Ticket = w.tickets[key]
    assert ticket.batch_id is not None, (ticket, w.answer().ids)
    assert w.answer().ids.batch_id == ticket.batch_id, (ticket, w.answer().ids)


@then('the answer came from another batch than the ticket "{key}"')
def step_answer_not_from_ticket_batch(context: Context, key: str) -> None:
    w = world(context)
    ticket: Ticket = w.tickets[key]
    assert ticket.batch_id is not None, ticket
    assert w.answer().ids.batch_id not in (None, ticket.batch_id), (ticket, w.answer())


@then("the batch was recorded {seconds:g} seconds after the call")
def step_batch_recorded_after(context: Context, seconds: float) -> None:
    ledger = world(context).ledger()
    [request] = ledger.requests()
    [batch] = ledger.batches()
    assert batch.intent_at - request.created_at == seconds, (request.created_at, batch.intent_at)


@then("every batch the ledger recorded is at most {size:d} bytes")
def step_batches_at_most(context: Context, size: int) -> None:
    batches = world(context).ledger().batches()
    assert batches, "the ledger recorded no batch"
    assert all(batch.request_bytes <= size for batch in batches), [b.request_bytes for b in batches]


@then('the answer to "{label}" came from the batch that holds exactly "{custom_ids}"')
def step_answer_batch_holds(context: Context, label: str, custom_ids: str) -> None:
    w = world(context)
    batch_id = answer_to(w, label).ids.batch_id
    assert batch_id is not None
    held = sorted(custom_id for custom_id, _ in w.emu.batch(batch_id).requests)
    assert held == sorted(w.custom_id(key) for key in names(custom_ids)), held


@then("{name:w} is raised again, the same as the first time")
def step_raised_again(context: Context, name: str) -> None:
    w = world(context)
    [first], again = w.witnessed["noted error"], w.failure()
    check_error(again, name)
    assert type(again) is type(first), (first, again)
    assert str(again) == str(first), (str(first), str(again))
    for field in ("batch_id", "custom_id", "error_type", "api_message", "retryable"):
        assert getattr(again, field, None) == getattr(first, field, None), field


@when("the error is noted")
def step_note_error(context: Context) -> None:
    w = world(context)
    w.witnessed["noted error"] = [w.failure()]
    w.witnessed["noted calls"] = [Counter(w.emu.calls)]


# -- the API's side --------------------------------------------------------------------------------------------------


@then("the API received no calls since they were noted")
def step_no_calls_since(context: Context) -> None:
    w = world(context)
    [noted] = w.witnessed["noted calls"]
    assert Counter(w.emu.calls) == noted, (noted, w.emu.calls)


@then("the API committed {count:d} batch")
@then("the API committed {count:d} batches")
def step_api_committed(context: Context, count: int) -> None:
    assert world(context).emu.created_batches == count, world(context).emu.created_batches


@then("the API was sent each of these requests once: {keys}")
def step_api_sent_once(context: Context, keys: str) -> None:
    w = world(context)
    created = w.emu.created_custom_ids
    assert created == Counter({w.custom_id(key): 1 for key in names(keys)}), created


# -- the ledger ------------------------------------------------------------------------------------------------------


_REQUEST_COLUMNS = {
    "key": lambda r: r.key,
    "custom_id": lambda r: r.custom_id,
    "actor": lambda r: r.actor,
    "model": lambda r: r.model,
    "state": lambda r: r.state.value,
    "attempts": lambda r: str(r.attempts),
    "prompt": lambda r: r.params["messages"][0]["content"],
    "error": lambda r: (r.error or {}).get("class", ""),
    "cost": lambda r: "recorded" if r.cost_usd is not None and r.live_cost_usd is not None else "none",
}


@then("the ledger holds these requests:")
def step_ledger_requests(context: Context) -> None:
    """Rows name requests by `key`, or by `prompt` when their keys were derived."""
    by = "key" if "key" in context.table.headings else "prompt"
    records = {_REQUEST_COLUMNS[by](record): record for record in world(context).ledger().requests()}
    assert len(records) == len(context.table.rows), f"the ledger holds {sorted(records)}"
    for row in context.table:
        record = records.get(row[by])
        assert record is not None, f"no request {row[by]!r} in {sorted(records)}"
        for column in context.table.headings:
            actual = _REQUEST_COLUMNS[column](record)
            expected = row[column].replace("<identity>", world(context).ledger().identity())
            assert actual == expected, f"{row[by]}.{column} is {actual!r}, not {expected!r}"


@then('the ledger holds {count:d} request, whose key starts with "{prefix}"')
@then('the ledger holds {count:d} requests, whose keys start with "{prefix}"')
def step_ledger_request_keys(context: Context, count: int, prefix: str) -> None:
    records = world(context).ledger().requests()
    assert len(records) == count, records
    assert all(record.key.startswith(prefix) for record in records), [record.key for record in records]


@then("the ledger holds no requests and no batches")
def step_ledger_empty(context: Context) -> None:
    w = world(context)
    if not w.ledger_path.exists():
        return
    ledger = w.ledger()
    assert ledger.requests() == [], ledger.requests()
    assert ledger.batches() == [], ledger.batches()


@then("the ledger holds these batches, oldest first:")
def step_ledger_batches(context: Context) -> None:
    batches = world(context).ledger().batches()
    assert len(batches) == len(context.table.rows), batches
    for batch, row in zip(batches, context.table, strict=True):
        assert batch.state.value == row["state"], batch
        assert str(batch.request_count) == row["requests"], batch
        if "note" in context.table.headings:
            assert (batch.note or "") == row["note"], batch.note
        if "API batch" in context.table.headings:
            has_id = "yes" if batch.provider_batch_id else "no"
            assert has_id == row["API batch"], batch


@then('the ledger records for the request "{key}" the cost of its answer, at batch and live prices')
def step_ledger_cost_of(context: Context, key: str) -> None:
    w = world(context)
    record = w.ledger().request(key)
    assert record is not None
    answer = answer_to(w, key)
    assert answer.cost is not None, answer
    assert record.cost_usd == answer.cost.total_usd, (record.cost_usd, answer.cost)
    assert record.live_cost_usd == answer.cost.live_equivalent_usd, (record.live_cost_usd, answer.cost)


# -- work a dead (or distant) program left in the ledger -------------------------------------------------------------


def _dead_program() -> str:
    """An owner name, as the ledger records one, of a program on this host that has exited."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return f"{socket.gethostname()}/{child.pid}/deadbeef"


def _claim_for(w: World, owner: str, key: str, prompt: str, *, lease: float = 120.0) -> NewRequest:
    actor = w.current_actor()
    params = to_message_params(actor.request(prompt))
    new = NewRequest(
        key=key,
        custom_id=w.custom_id(key),
        actor=actor.name,
        model=actor.configuration.model,
        params=params,
        max_attempts=actor.configuration.batch.max_attempts,
    )
    now = w.clock.now()
    w.ledger().claim([new], owner=owner, until=now + lease, now=now)
    return new


@given('the ledger holds the request "{key}" asking "{prompt}", claimed by a program that has since died')
def step_claimed_by_dead(context: Context, key: str, prompt: str) -> None:
    w = world(context)
    _claim_for(w, _dead_program(), key, prompt)


@given(
    'the ledger holds the request "{key}" asking "{prompt}",'
    " claimed by a program on another host whose lease ends in {seconds:g} seconds"
)
def step_claimed_elsewhere(context: Context, key: str, prompt: str, seconds: float) -> None:
    w = world(context)
    _claim_for(w, "build-server-7/4242/cafe", key, prompt, lease=seconds)
    w.witnessed["lease ends"] = [w.clock.now() + seconds]


@then("the batch was recorded once the other program's lease had run out")
def step_after_lease(context: Context) -> None:
    w = world(context)
    [lease_ends] = w.witnessed["lease ends"]
    [batch] = w.ledger().batches()
    assert batch.intent_at >= lease_ends, (batch.intent_at, lease_ends)
    # It watched the ledger meanwhile, at the actor's watch interval, and sent nothing.
    interval = w.current_actor().configuration.batch.watch_interval
    assert w.clock.sleeps.count(interval) >= (lease_ends - w.started_at) / interval, w.clock.sleeps


async def _record_intent(w: World, owner: str, key: str, prompt: str, *, created: bool) -> None:
    new = _claim_for(w, owner, key, prompt)
    now = w.clock.now()
    assert isinstance(new.params, dict), new.params
    entry = batch_entry(new.custom_id, new.params)
    w.ledger().record_intent(
        BatchIntent(
            "lt_left-by-a-dead-program",
            provider="anthropic",
            endpoint=w.emu.base_url,
            members=[(new.key, new.custom_id)],
            request_bytes=len(json.dumps(entry)),
            owner=owner,
            until=now + 120,
            now=now,
        )
    )
    if created:  # the create reached the API; the program died before it could record the batch's id
        client = w.client_over(w.transport())
        await client.messages.batches.create(requests=[entry])


@given(
    'the ledger holds a batch of the request "{key}" asking "{prompt}",'
    " recorded by a program that died before creating it"
)
def step_intent_dead_before_create(context: Context, key: str, prompt: str) -> None:
    w = world(context)
    w.run(_record_intent(w, _dead_program(), key, prompt, created=False))


@given(
    'the ledger holds a batch of the request "{key}" asking "{prompt}",'
    " recorded by a program that died once the API had created it"
)
def step_intent_dead_after_create(context: Context, key: str, prompt: str) -> None:
    w = world(context)
    w.run(_record_intent(w, _dead_program(), key, prompt, created=True))
