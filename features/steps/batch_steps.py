"""Steps for the batch provider: what a batch holds, how long the actor waited, faults, and collecting results."""

from __future__ import annotations

from typing import Any

from _support import (
    BreakingTransport,
    TruncatingTransport,
    check_error,
    emulated_reply_to,
    names,
    shown,
    world,
    yaml_doc,
)
from step_context import Context, given, then, when

from lowtide import ActorResponse, BatchTimeoutError, ClaudeBatchProvider
from lowtide.providers.anthropic.batch import PreparedBatch

# -- faults ----------------------------------------------------------------------------------------------------------


@given('the API will fail the next "{route}" call with status {status:d}')
def step_fail_next(context: Context, route: str, status: int) -> None:
    world(context).emu.faults.fail_next(route, status)


@given('the API will fail the next "{route}" call with status {status:d} and retry-after {seconds:g}')
def step_fail_next_retry_after(context: Context, route: str, status: int, seconds: float) -> None:
    world(context).emu.faults.fail_next(route, status, retry_after=seconds)


@given('the API will fail the next {times:d} "{route}" calls with status {status:d}')
def step_fail_next_times(context: Context, times: int, route: str, status: int) -> None:
    world(context).emu.faults.fail_next(route, status, times=times)


@given('the API will end request "{key}" as errored with {error_type:w} "{message}"')
def step_outcome_errored(context: Context, key: str, error_type: str, message: str) -> None:
    w = world(context)
    w.emu.faults.outcome(w.custom_id(key), "errored", error_type=error_type, message=message)


@given("the connection will break halfway through the next results download")
def step_breaking_results(context: Context) -> None:
    w = world(context)
    w.client = w.client_over(BreakingTransport(w.transport(), suffix="/results"))


@given("the next results download will end halfway through, as if the connection closed cleanly")
def step_truncated_results(context: Context) -> None:
    w = world(context)
    w.client = w.client_over(TruncatingTransport(w.transport()))


# -- what the batch holds --------------------------------------------------------------------------------------------


@then('the batch holds exactly the request "{key}" with these params:')
def step_batch_holds(context: Context, key: str) -> None:
    w = world(context)
    batch_id = w.answer().ids.batch_id
    assert batch_id is not None
    requests = list(w.emu.batch(batch_id).requests)
    assert requests == [(w.custom_id(key), yaml_doc(context.text))], requests


def _timeout(context: Context) -> BatchTimeoutError:
    error = world(context).failure()
    assert isinstance(error, BatchTimeoutError), error
    return error


@then("that batch has ended with its request canceled")
def step_batch_canceled(context: Context) -> None:
    w = world(context)
    snapshot = w.emu.batch(_timeout(context).batch_id)
    assert snapshot.processing_status == "ended", snapshot
    assert snapshot.request_counts["canceled"] == 1, snapshot


@then("that batch is still in progress")
def step_batch_in_progress(context: Context) -> None:
    w = world(context)
    snapshot = w.emu.batch(_timeout(context).batch_id)
    assert snapshot.processing_status == "in_progress", snapshot


# -- waiting ---------------------------------------------------------------------------------------------------------


def _seconds(text: str) -> list[float]:
    return [float(item) for item in names(text)]


def _after_window(context: Context) -> list[float]:
    """The actor's waits after the first: its coalescing window, whose length the actor's configuration gives."""
    w = world(context)
    sleeps = w.clock.sleeps
    window = w.current_actor().configuration.batch.coalesce_window
    assert sleeps, "the actor never waited, not even for its coalescing window"
    assert sleeps[0] == window, f"the first wait is {sleeps[0]}, not the {window} second coalescing window: {sleeps}"
    return sleeps[1:]


@then("after its {window:g} second coalescing window, the actor waited {waits} seconds")
def step_waited_after_window(context: Context, window: float, waits: str) -> None:
    assert world(context).current_actor().configuration.batch.coalesce_window == window
    rest = _after_window(context)
    assert rest == _seconds(waits), world(context).clock.sleeps


@then("the actor's first wait after its coalescing window was {seconds:g} seconds")
def step_first_wait_after_window(context: Context, seconds: float) -> None:
    rest = _after_window(context)
    assert rest, world(context).clock.sleeps
    assert rest[0] == seconds, world(context).clock.sleeps


@then(
    "besides its coalescing window and its {poll:g} second polls,"
    " the actor waited once for between {least:g} and {most:g} seconds"
)
def step_waited_backoff_after_window(context: Context, poll: float, least: float, most: float) -> None:
    others = [sleep for sleep in _after_window(context) if sleep != poll]
    assert len(others) == 1, world(context).clock.sleeps
    assert least <= others[0] <= most, world(context).clock.sleeps


@then("the answer arrived {seconds:g} seconds after the call")
def step_arrived_after(context: Context, seconds: float) -> None:
    w = world(context)
    w.answer()
    assert w.clock.now() - w.started_at == seconds, w.clock.now() - w.started_at


@when("{seconds:g} more seconds pass")
def step_time_passes(context: Context, seconds: float) -> None:
    world(context).clock.advance(seconds)


@then("the timeout error names the batch, a wait of {elapsed:g} seconds and a maximum of {max_wait:g} seconds")
def step_timeout_numbers(context: Context, elapsed: float, max_wait: float) -> None:
    error = _timeout(context)
    world(context).emu.batch(error.batch_id)  # the batch the API created
    assert error.batch_id in str(error), str(error)
    assert (error.elapsed, error.max_wait) == (elapsed, max_wait), (error.elapsed, error.max_wait)


@then("the timeout error says the batch was canceled")
def step_timeout_canceled(context: Context) -> None:
    assert _timeout(context).canceled is True


@then("the timeout error says the batch was not canceled")
def step_timeout_not_canceled(context: Context) -> None:
    assert _timeout(context).canceled is False


# -- the provider's own steps: submit, wait, collect -----------------------------------------------------------------


def _provider(context: Context) -> ClaudeBatchProvider:
    provider = world(context).current_actor().provider("batch")
    assert isinstance(provider, ClaudeBatchProvider), provider
    return provider


@when('the actor\'s batch provider waits for that batch by its id and collects "{key}" asked "{prompt}"')
def step_pick_up(context: Context, key: str, prompt: str) -> None:
    w = world(context)
    batch_id = _timeout(context).batch_id
    provider = _provider(context)
    custom_id = w.custom_id(key)  # as the ledger gave it
    request = w.current_actor().request(prompt, custom_id=custom_id)

    async def pick_up() -> Any:
        await provider.wait(batch_id)
        return await provider.collect(batch_id, {custom_id: request})

    collected = w.attempt_async(pick_up) or {}
    w.collected = {key: collected[custom_id]} if custom_id in collected else collected


@when('the actor\'s batch provider is asked "{prompt}" directly')
def step_provider_complete(context: Context, prompt: str) -> None:
    w = world(context)
    request = w.current_actor().request(prompt)
    w.response = w.attempt_async(lambda: _provider(context).complete(request))


@when("the actor's batch provider collects that batch by its id alone")
def step_collect_by_id(context: Context) -> None:
    w = world(context)
    batch_id = _timeout(context).batch_id
    provider = _provider(context)
    w.value = batch_id
    collected = w.attempt_async(lambda: provider.collect(batch_id)) or {}
    keys = {record.custom_id: record.key for record in w.ledger().requests()}
    w.collected = {keys.get(custom_id, custom_id): outcome for custom_id, outcome in collected.items()}


@then('the timeout error names the requests "{keys}"')
def step_timeout_custom_ids(context: Context, keys: str) -> None:
    w = world(context)
    assert _timeout(context).custom_ids == [w.custom_id(key) for key in names(keys)], _timeout(context).custom_ids


@then('the collected outcomes name that batch and the requests "{keys}"')
def step_collected_ids(context: Context, keys: str) -> None:
    w = world(context)
    w.succeeded()
    assert sorted(w.collected) == sorted(names(keys)), list(w.collected)
    for key, outcome in w.collected.items():
        assert isinstance(outcome, ActorResponse), outcome
        assert outcome.ids.batch_id == w.value, outcome.ids
        assert outcome.ids.custom_id == w.custom_id(key), outcome.ids


@when('the actor\'s batch provider submits "{prompt}" and collects its results at once')
def step_collect_early(context: Context, prompt: str) -> None:
    w = world(context)
    provider = _provider(context)
    prepared = PreparedBatch([w.current_actor().request(prompt)])

    async def hasty() -> Any:
        batch = await provider.submit(prepared)
        return await provider.collect(batch.id, prepared.requests)

    w.collected = w.attempt_async(hasty) or {}


@when('the actor\'s batch provider submits "{prompts}" as "{ids}" and, once it ends, collects only "{wanted}"')
def step_collect_some(context: Context, prompts: str, ids: str, wanted: str) -> None:
    w = world(context)
    actor = w.current_actor()
    provider = _provider(context)
    prepared = PreparedBatch(
        [
            actor.request(prompt, custom_id=custom_id)
            for prompt, custom_id in zip(names(prompts), names(ids), strict=True)
        ]
    )
    requests = {
        custom_id: prepared.requests.get(custom_id) or actor.request("Who am I?", custom_id=custom_id)
        for custom_id in names(wanted)
    }

    async def partial() -> Any:
        batch = await provider.submit(prepared)
        await provider.wait(batch)
        return await provider.collect(batch.id, requests)

    w.collected = w.attempt_async(partial) or {}


@then('the collected outcome of "{custom_id}" is the emulated reply to "{prompt}"')
def step_collected_reply(context: Context, custom_id: str, prompt: str) -> None:
    w = world(context)
    w.succeeded()
    outcome = w.collected[custom_id]
    assert isinstance(outcome, ActorResponse), outcome
    assert outcome.text.startswith(emulated_reply_to(prompt)), outcome.text


@then('the collected outcome of "{custom_id}" is a {name:w} saying "{text}"')
def step_collected_error(context: Context, custom_id: str, name: str, text: str) -> None:
    w = world(context)
    w.succeeded()
    outcome = w.collected[custom_id]
    check_error(outcome, name)
    assert text in str(outcome), str(outcome)


@then('nothing was collected for "{custom_id}"')
def step_nothing_collected(context: Context, custom_id: str) -> None:
    w = world(context)
    w.succeeded()
    assert custom_id not in w.collected, w.collected


# -- outcomes --------------------------------------------------------------------------------------------------------


@then("the failed outcomes are:")
def step_failed_outcomes(context: Context) -> None:
    w = world(context)
    for row in context.table:
        outcome = w.outcome(row["custom_id"])
        check_error(outcome, row["error"])
        assert getattr(outcome, "batch_id", "").startswith("msgbatch_"), outcome
        for key in ("error_type", "api_message", "retryable"):
            actual = shown(getattr(outcome, key, None))
            assert actual == row[key], f"{row['custom_id']}.{key} is {actual!r}, not {row[key]!r}"


def _usage(context: Context, custom_id: str) -> Any:
    outcome = world(context).outcome(custom_id)
    assert isinstance(outcome, ActorResponse), outcome
    return outcome.usage


@when("the actor runs each of these prompts in a call of run_many of its own, one after another:")
def step_run_many_each(context: Context) -> None:
    """A batch each: the requests of one batch are processed side by side and never read each other's cache
    writes (as Anthropic's batch docs say, and the emulator does); a later batch reads what an earlier one wrote."""
    w = world(context)
    actor = w.current_actor()
    w.custom_ids, outcomes = [], []
    for row in context.table:
        w.custom_ids.append(row["custom_id"])
        request = actor.request(row["prompt"], custom_id=row["custom_id"])
        outcomes.extend(w.attempt_async(lambda request=request: actor.run_many([request])) or [])
    w.outcomes = outcomes


@then('the outcome of "{custom_id}" wrote to the prompt cache and read nothing from it')
def step_cache_write(context: Context, custom_id: str) -> None:
    usage = _usage(context, custom_id)
    assert usage.cache_creation_input_tokens > 0, usage
    assert usage.cache_read_input_tokens == 0, usage


@then('the outcome of "{custom_id}" read from the prompt cache what "{writer}" wrote')
def step_cache_read(context: Context, custom_id: str, writer: str) -> None:
    usage, written = _usage(context, custom_id), _usage(context, writer)
    assert usage.cache_read_input_tokens == written.cache_creation_input_tokens > 0, (usage, written)
    assert usage.cache_creation_input_tokens == 0, usage


# -- requests lowtide refuses to send --------------------------------------------------------------------------------


@when("the actor's batch provider completes these prompts directly, outside the ledger:")
def step_complete_many_directly(context: Context) -> None:
    w = world(context)
    actor = w.current_actor()
    w.custom_ids = [row.get("custom_id") or f"request-{index}" for index, row in enumerate(context.table)]
    requests = [actor.request(row["prompt"], custom_id=row.get("custom_id") or None) for row in context.table]
    w.outcomes = w.attempt_async(lambda: _provider(context).complete_many(requests)) or []


@when("the actor's batch provider completes an empty list of requests directly")
def step_complete_many_empty(context: Context) -> None:
    w = world(context)
    w.outcomes = w.attempt_async(lambda: _provider(context).complete_many([])) or []


@when("the actor's batch provider completes {count:d} copies of a {chars:d} character prompt directly")
def step_complete_many_copies(context: Context, count: int, chars: int) -> None:
    w = world(context)
    request = w.current_actor().request("x" * chars)
    w.outcomes = w.attempt_async(lambda: _provider(context).complete_many([request] * count)) or []


# -- API errors ------------------------------------------------------------------------------------------------------


@then("the API error has status {status:d} and a request id")
def step_api_error_ids(context: Context, status: int) -> None:
    error = world(context).failure()
    assert getattr(error, "status_code", None) == status, error
    request_id = getattr(error, "request_id", None) or ""
    assert request_id.startswith("req_"), error
    assert request_id in str(error), str(error)
    assert f"status {status}" in str(error), str(error)
