"""Steps for reconciliation that never guesses, and for background errors that reach their waiting calls."""

from __future__ import annotations

import asyncio
import gc
import logging
import sqlite3
from collections import Counter
from typing import Any

from _support import World, check_error, checked_models, emulated_reply_to, new_program_actor, world
from step_context import Context, given, then, when

from lowtide import Actor, ActorResponse
from lowtide.ledger.sqlite import Ledger
from lowtide.ledger.store import BatchState

_ENGINE_LOG = "lowtide.batching.engine.batch_engine"


def _prompts(w: World) -> dict[str, str]:
    prompts = w.value.get("prompts") if isinstance(w.value, dict) else None
    assert isinstance(prompts, dict), "no calls were made"
    return prompts  # type: ignore[return-value]


def _ask_all(w: World, actor: Actor, prompts: dict[str, str]) -> None:
    async def all_at_once() -> list[Any]:
        calls = (actor.run(prompt, key=key) for key, prompt in prompts.items())
        return await asyncio.gather(*calls, return_exceptions=True)

    w.asked = dict(zip(prompts, w.run(all_at_once()), strict=True))


def _engine_log(w: World) -> list[logging.LogRecord]:
    kept = w.witnessed.get("engine log")
    if kept is None:
        kept = w.witnessed["engine log"] = w.keep_log(_ENGINE_LOG, logging.INFO)
    return kept


def _when_logged(w: World, text: str) -> asyncio.Event:
    """An event set once lowtide's engine logs a message containing `text`."""
    event = asyncio.Event()

    class Watch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if text in record.getMessage():
                event.set()

    handler = Watch(logging.INFO)
    target = logging.getLogger(_ENGINE_LOG)
    previous = target.level
    target.setLevel(logging.INFO)
    target.addHandler(handler)

    def restore() -> None:
        target.removeHandler(handler)
        target.setLevel(previous)

    w.cleanups.append(restore)
    return event


# -- faults ------------------------------------------------------------------------------------------------------------


@given("the API will answer every create {seconds:g} seconds after it commits")
def step_every_create_late(context: Context, seconds: float) -> None:
    world(context).emu.faults.delay_after_commit("batches.create", seconds=seconds, times=1000)


@given("the API will commit the next {times:d} batches but drop the connection before answering")
def step_drop_many(context: Context, times: int) -> None:
    world(context).emu.faults.drop_after_commit("batches.create", times=times)


@given('the first create waits, before it reaches the API, until lowtide logs "{text}"')
def step_hold_before(context: Context, text: str) -> None:
    w = world(context)
    logged = _when_logged(w, text)
    w.hooks.before("batches.create", logged.wait, nth=1)


@given('the API holds its answer to the first create it commits until lowtide logs "{text}"')
def step_hold_after(context: Context, text: str) -> None:
    w = world(context)
    logged = _when_logged(w, text)
    w.hooks.after("batches.create", logged.wait, nth=1)


@given("the API holds its answers to the creates it commits until lowtide first lists the batches")
def step_hold_until_listed(context: Context) -> None:
    w = world(context)
    listed = asyncio.Event()
    w.hooks.before("batches.list", listed.set)
    w.hooks.after("batches.create", listed.wait, nth=0)


@given("another process adopts the lost batch for its intent just before lowtide first lists the batches")
def step_adopted_elsewhere(context: Context) -> None:
    w = world(context)

    async def adopt() -> None:
        ledger = w.ledger()
        [intent] = ledger.batches(states=(BatchState.INTENT, BatchState.UNKNOWN))
        client = w.emu.client()
        try:
            [remote] = [batch async for batch in client.messages.batches.list()]
        finally:
            await client.close()
        assert ledger.adopt(intent.id, provider_batch_id=remote.id, now=w.clock.now())

    w.hooks.before("batches.list", adopt)


@given(
    '"{rival}" asks "{prompt}" with the key "{key}" as lowtide first lists the batches, its create answered once '
    'lowtide logs "{text}"'
)
def step_rival_during_listing(context: Context, rival: str, prompt: str, key: str, text: str) -> None:
    """The first listing waits until `rival`'s call has recorded its intent and the API has committed its create; the
    create's answer is held until lowtide logs `text`, so the rival's batch is listed while its create is in flight.
    Held until an unknown create is reconciled too: a look that adopted the rival's batch must fail the scenario's
    checks, not hang it."""
    w = world(context)
    logged, adopted = _when_logged(w, text), _when_logged(w, "reconciled with the API's")
    committed = asyncio.Event()

    async def held() -> None:
        committed.set()
        waits = [asyncio.ensure_future(logged.wait()), asyncio.ensure_future(adopted.wait())]
        _, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for wait in pending:
            wait.cancel()

    async def rival_call() -> None:
        w.witnessed["rival call"] = [(key, prompt, asyncio.ensure_future(w.actors[rival].run(prompt, key=key)))]
        await committed.wait()

    w.hooks.after("batches.create", held, nth=1)  # the first create the API commits: the one that failed is not
    w.hooks.before("batches.list", rival_call)


@given('the ledger\'s "{method}" fails once with "{failure}"')
def step_ledger_fails(context: Context, method: str, failure: str) -> None:
    """The ledger's `method` raises once. A store of its own async face (PostgreSQL's) fails there, where the engine
    calls it; a local store fails in its sync method, which the engine's inline face calls."""
    w = world(context)
    ledger = w.ledger()
    kind, _, message = failure.partition(": ")
    fired: list[bool] = []

    def fault() -> Exception:
        fired.append(True)
        return RuntimeError(message)

    if hasattr(ledger, "asynchronous"):
        from lowtide.ledger.postgres.aio import AsyncPostgresLedger as face  # (its faces already made fail too)

        real_async = getattr(face, method)

        async def failing_async(self: Any, *args: Any, **kwargs: Any) -> Any:
            if fired:
                return await real_async(self, *args, **kwargs)
            raise fault()

        setattr(face, method, failing_async)
        w.cleanups.append(lambda: setattr(face, method, real_async))
        return
    real = getattr(ledger, method)

    def failing(*args: Any, **kwargs: Any) -> Any:
        setattr(ledger, method, real)  # once
        if kind == "sqlite3":
            # Raised inside a real transaction, as SQLite would: the store rolls it back and says so.
            assert isinstance(ledger, Ledger), ledger
            with ledger.transaction():
                raise sqlite3.OperationalError(message)
        raise fault()

    setattr(ledger, method, failing)
    w.cleanups.append(lambda: setattr(ledger, method, real))


@given("the actor answered a first call")
def step_first_call(context: Context) -> None:
    """Its checks done: calls made at once now reach the ledger in the same turn of the event loop, and so are
    recorded in one transaction on any store (before, each reads the ledger first, which on a remote store ends in
    turns of its own)."""
    w = world(context)
    _ask_all(w, w.current_actor(), {"k-0": "question 0"})
    assert isinstance(w.asked["k-0"], ActorResponse), w.asked["k-0"]


@given("nothing more")
def step_nothing_more(context: Context) -> None:
    """An Examples row that needs no setup of its own."""


@given('the clock fails the next wait of {seconds:g} seconds with "{failure}"')
def step_clock_fails(context: Context, seconds: float, failure: str) -> None:
    w = world(context)
    real = w.clock.sleep
    message = failure.partition(": ")[2]

    async def sleep(wait: float) -> None:
        if abs(wait - seconds) < 1e-5:  # the clock's epoch seconds leave a float's last bits to chance
            w.clock.sleep = real  # type: ignore[method-assign]
            raise RuntimeError(message)
        await real(wait)

    w.clock.sleep = sleep  # type: ignore[method-assign]
    w.cleanups.append(lambda: setattr(w.clock, "sleep", real))


@given("lowtide's engine log is kept")
def step_keep_engine_log(context: Context) -> None:
    w = world(context)
    _engine_log(w)
    target = logging.getLogger(_ENGINE_LOG)
    previous = target.level
    target.setLevel(logging.INFO)
    w.cleanups.append(lambda: target.setLevel(previous))


# -- calls -------------------------------------------------------------------------------------------------------------


@when('{count:d} calls ask "{prompt}" with the keys "{key}" at once')
def step_many_calls(context: Context, count: int, prompt: str, key: str) -> None:
    w = world(context)
    prompts = {key.format(i=i): prompt.format(i=i) for i in range(1, count + 1)}
    w.value = {"prompts": prompts}
    _ask_all(w, w.current_actor(), prompts)


@when("a new program makes the same {count:d} calls")
def step_same_calls_new_program(context: Context, count: int) -> None:
    w = world(context)
    prompts = _prompts(w)
    assert len(prompts) == count, prompts
    actor = new_program_actor(w, w.current_actor().name)
    _ask_all(w, actor, prompts)


@when('"{first}" asks "{prompt1}" with the key "{key1}" and "{second}" asks "{prompt2}" with the key "{key2}", at once')
def step_two_actors(
    context: Context, first: str, prompt1: str, key1: str, second: str, prompt2: str, key2: str
) -> None:
    w = world(context)
    w.value = {"prompts": {key1: prompt1, key2: prompt2}}
    # Both made ready first: their windows (virtual time) open as their calls claim, in the order the scenario says.
    w.run(checked_models([w.actors[first], w.actors[second]]))

    async def both() -> tuple[ActorResponse[Any] | BaseException, ActorResponse[Any] | BaseException]:
        return await asyncio.gather(
            w.actors[first].run(prompt1, key=key1), w.actors[second].run(prompt2, key=key2), return_exceptions=True
        )

    w.asked = dict(zip((key1, key2), w.run(both()), strict=True))


@when('"{first}" asks "{prompt}" with the key "{key}", and the call "{second}" made meanwhile ends too')
def step_call_and_rival(context: Context, first: str, prompt: str, key: str, second: str) -> None:
    w = world(context)

    async def both() -> dict[str, ActorResponse[Any] | BaseException]:
        try:
            mine: ActorResponse[Any] | BaseException = await w.actors[first].run(prompt, key=key)
        except Exception as error:  # the outcome is what the scenario checks
            mine = error
        [(rival_key, _, rival)] = w.witnessed["rival call"]
        [theirs] = await asyncio.gather(rival, return_exceptions=True)
        return {key: mine, rival_key: theirs}

    w.run(checked_models([w.actors[first], w.actors[second]]))
    w.asked = w.run(both())
    [(rival_key, rival_prompt, _)] = w.witnessed["rival call"]
    w.value = {"prompts": {key: prompt, rival_key: rival_prompt}}


# -- outcomes ----------------------------------------------------------------------------------------------------------


@then("each of the {count:d} calls was answered with the emulated reply to its question")
@then("both calls were answered with the emulated reply to their questions")
def step_each_answered(context: Context, count: int = 2) -> None:
    w = world(context)
    prompts = _prompts(w)
    assert len(w.asked) == count == len(prompts), (count, len(w.asked))
    for key, outcome in w.asked.items():
        assert isinstance(outcome, ActorResponse), f"{key!r} was not answered: {outcome!r}"
        assert outcome.text.startswith(emulated_reply_to(prompts[key])), (key, outcome.text)


@then('each of the {count:d} calls failed with a {name:w} saying "{text}"')
def step_each_failed(context: Context, count: int, name: str, text: str) -> None:
    w = world(context)
    assert len(w.asked) == count, w.asked
    for key, outcome in w.asked.items():
        check_error(outcome, name)
        assert text in str(outcome), (key, str(outcome))


@then("the API created each of the {count:d} requests exactly once")
def step_created_once(context: Context, count: int) -> None:
    w = world(context)
    expected = Counter({w.custom_id(key): 1 for key in _prompts(w)})
    assert len(expected) == count, expected
    created = w.emu.created_custom_ids
    twice = {custom_id: n for custom_id, n in created.items() if n > 1}
    assert not twice, f"created more than once: {twice}"
    assert created == expected, created


@then("the ledger holds no unresolved batch")
def step_no_unresolved(context: Context) -> None:
    unresolved = world(context).ledger().batches(states=(BatchState.INTENT, BatchState.UNKNOWN))
    assert not unresolved, unresolved


@then("the ledger's batches are, in any order:")
def step_batches_any_order(context: Context) -> None:
    batches = world(context).ledger().batches()
    seen = Counter(
        (b.state.value, str(b.request_count), "yes" if b.provider_batch_id else "no", b.note or "") for b in batches
    )
    wanted = Counter((row["state"], row["requests"], row["API batch"], row["note"]) for row in context.table)
    assert seen == wanted, seen


@then("each answer came from the API batch its ledger batch adopted, which holds its request")
def step_answers_from_own_batch(context: Context) -> None:
    w = world(context)
    ledger = w.ledger()
    for key, outcome in w.asked.items():
        assert isinstance(outcome, ActorResponse), outcome
        record = ledger.request(key)
        assert record is not None, key
        assert record.batch_id is not None, record
        batch = ledger.batch(record.batch_id)
        assert batch is not None, record
        assert batch.provider_batch_id == outcome.ids.batch_id, f"{key}: {batch.provider_batch_id} {outcome.ids}"
        held = [custom_id for custom_id, _ in w.emu.batch(outcome.ids.batch_id or "").requests]
        assert record.custom_id in held, f"{key} ({record.custom_id}) answered from a batch holding {held}"


@then('the request "{key}" is in the batch noted "{note}"')
def step_request_in_noted(context: Context, key: str, note: str) -> None:
    ledger = world(context).ledger()
    record = ledger.request(key)
    assert record is not None, key
    assert record.batch_id is not None, record
    batch = ledger.batch(record.batch_id)
    assert batch is not None, record
    assert batch.note == note, batch


@then('the request "{key}" travelled in the batch noted "{note}", then in another')
def step_request_travelled(context: Context, key: str, note: str) -> None:
    ledger = world(context).ledger()
    travelled = [b for b in ledger.batches() if key in ledger.members(b.id).values()]
    assert [b.note for b in travelled] == [note, None], travelled


@then('the log says "{text}"')
def step_log_says(context: Context, text: str) -> None:
    messages = [record.getMessage() for record in _engine_log(world(context))]
    assert any(text in message for message in messages), messages


@then("the event loop reported no unhandled error")
def step_no_loop_errors(context: Context) -> None:
    gc.collect()  # a dropped task with an unretrieved exception reports it when collected
    assert not context.loop_errors, context.loop_errors
