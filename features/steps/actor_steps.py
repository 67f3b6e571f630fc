"""Steps shared by the features that run actors against the emulated API: setting up, asking, and what came back."""

from __future__ import annotations

import os
from typing import Any

from _support import check_error, dig, emulated_reply_to, literal, names, remember_env, shown, world, yaml_doc
from step_context import Context, given, then, when

from lowtide import ActorResponse, TextContent

# -- the emulated API ------------------------------------------------------------------------------------------------


@given("an emulated Anthropic API")
def step_emulator(context: Context) -> None:
    world(context).start_emulator()


@given("an emulated Anthropic API whose batches take {seconds:g} seconds")
def step_emulator_processing(context: Context, seconds: float) -> None:
    world(context).start_emulator(processing_seconds=seconds)


@given('an emulated Anthropic API whose batches take {seconds:g} seconds, which also serves "{models}"')
def step_emulator_processing_models(context: Context, seconds: float, models: str) -> None:
    world(context).start_emulator(processing_seconds=seconds, extra_models=names(models))


@given('an emulated Anthropic API that also serves the models "{models}"')
def step_emulator_models(context: Context, models: str) -> None:
    world(context).start_emulator(extra_models=names(models))


@given('an emulated Anthropic API that accepts only the key "{key}"')
def step_emulator_keys(context: Context, key: str) -> None:
    world(context).start_emulator(api_keys=[key])


@then("the API received these calls:")
def step_api_calls(context: Context) -> None:
    calls = world(context).emu.calls
    for row in context.table:
        assert calls[row["call"]] == int(row["count"]), f"{row['call']}: {calls[row['call']]} calls; all: {calls}"


@then("the API was only asked about the model")
def step_api_only_model_checked(context: Context) -> None:
    calls = {route: count for route, count in world(context).emu.calls.items() if count}
    assert calls == {"models.retrieve": 1}, calls


@then("the API received no calls at all")
def step_api_no_calls(context: Context) -> None:
    calls = world(context).emu.calls
    assert sum(calls.values()) == 0, calls


# -- actors ----------------------------------------------------------------------------------------------------------


def _settings(name: str, text: str | None) -> dict[str, Any]:
    return {"name": name, "model": "claude-sonnet-5-5", **yaml_doc(text)}


@given('an actor "{name}" with:')
def step_actor_with(context: Context, name: str) -> None:
    world(context).add_actor(_settings(name, context.text))


@when('an actor "{name}" is configured with:')
def step_actor_configured(context: Context, name: str) -> None:
    w = world(context)
    w.attempt(lambda: w.add_actor(_settings(name, context.text)))


# The API caches nothing shorter than the model's minimum (1,024 tokens for claude-sonnet-4-5): 4,500 characters.
_LONG_SYSTEM_PROMPT = "You are the harbour master's assistant; you know every tide table of the coast by heart. " * 50


@given('an actor "{name}" whose system prompt is long enough to cache, with:')
def step_actor_long_system_prompt(context: Context, name: str) -> None:
    world(context).add_actor({**_settings(name, context.text), "system_prompt": _LONG_SYSTEM_PROMPT})


@given('an actor "{name}" in {mode:w} mode')
def step_actor_in_mode(context: Context, name: str, mode: str) -> None:
    world(context).add_actor(_settings(name, f"batch_processing: {mode}"))


@given('an actor "{name}" with no API client, whose key variable "{variable}" is unset')
def step_actor_without_key(context: Context, name: str, variable: str) -> None:
    remember_env(context, variable)
    os.environ.pop(variable, None)
    world(context).add_actor(_settings(name, f"api_key_env: {variable}"), client=None)


@when('the actor is asked "{prompt:Q}"')
def step_ask(context: Context, prompt: str) -> None:
    w = world(context)
    w.response = w.attempt_async(lambda: w.current_actor().run(prompt))


@when('the actor is asked "{prompt:Q}" in {mode:w} mode')
def step_ask_in_mode(context: Context, prompt: str, mode: str) -> None:
    w = world(context)
    w.response = w.attempt_async(lambda: w.current_actor().run(prompt, mode=mode))


@when('the actor is asked "{prompt:Q}" with:')
def step_ask_with(context: Context, prompt: str) -> None:
    w = world(context)
    kwargs = yaml_doc(context.text)
    w.response = w.attempt_async(lambda: w.current_actor().run(prompt, **kwargs))


@when("the actor is asked with:")
def step_ask_with_only(context: Context) -> None:
    w = world(context)
    kwargs = yaml_doc(context.text)
    w.response = w.attempt_async(lambda: w.current_actor().run(**kwargs))


@when("the actor is asked, in Python, with:")
def step_ask_python(context: Context) -> None:
    w = world(context)
    kwargs = literal(context.text)
    w.response = w.attempt_async(lambda: w.current_actor().run(**kwargs))


@when("the actor runs these prompts as one call of run_many:")
def step_run_many(context: Context) -> None:
    w = world(context)
    actor = w.current_actor()

    w.custom_ids = [row.get("custom_id") or f"request-{index}" for index, row in enumerate(context.table)]

    def build() -> list[Any]:
        return [actor.request(row["prompt"], custom_id=row.get("custom_id") or None) for row in context.table]

    requests = w.attempt(build)
    if requests is not None:
        w.outcomes = w.attempt_async(lambda: actor.run_many(requests)) or []


# -- answers ---------------------------------------------------------------------------------------------------------


@then('the answer is the emulated reply to "{prompt}"')
def step_answer_reply(context: Context, prompt: str) -> None:
    text = world(context).answer().text
    assert text.startswith(emulated_reply_to(prompt)), text


@then('the answer is "{text}"')
def step_answer_is(context: Context, text: str) -> None:
    answer = world(context).answer().text
    assert answer == text, answer


@then("the answer came through {mode:w} mode")
def step_answer_mode(context: Context, mode: str) -> None:
    response = world(context).answer()
    assert response.mode.value == mode, response.mode


@then("the actor's provider for {mode:w} mode is {provider:w}")
def step_actor_provider(context: Context, mode: str, provider: str) -> None:
    found = world(context).current_actor().provider(mode)
    assert type(found).__name__ == provider, found


@then("the actor resolves {wanted:w} mode to {mode:w} mode")
def step_actor_resolves(context: Context, wanted: str, mode: str) -> None:
    assert world(context).current_actor().resolve_mode(wanted).value == mode


# -- outcomes of run_many --------------------------------------------------------------------------------------------


@then('the outcome of "{custom_id}" is the emulated reply to "{prompt}"')
def step_outcome_reply(context: Context, custom_id: str, prompt: str) -> None:
    outcome = world(context).outcome(custom_id)
    assert isinstance(outcome, ActorResponse), f"{custom_id} failed: {outcome!r}"
    assert outcome.text.startswith(emulated_reply_to(prompt)), outcome.text


@then('the outcome of "{custom_id}" is the answer "{text}"')
def step_outcome_answer(context: Context, custom_id: str, text: str) -> None:
    outcome = world(context).outcome(custom_id)
    assert isinstance(outcome, ActorResponse), f"{custom_id} failed: {outcome!r}"
    assert outcome.text == text, outcome.text


@then('the outcome of "{custom_id}" is a {name:w} saying "{text}"')
@then('the outcome of "{custom_id}" is an {name:w} saying "{text}"')
def step_outcome_error(context: Context, custom_id: str, name: str, text: str) -> None:
    outcome = world(context).outcome(custom_id)
    check_error(outcome, name)
    assert text in str(outcome), str(outcome)


@then("all outcomes came from the same batch")
def step_same_batch(context: Context) -> None:
    w = world(context)
    w.succeeded()
    batch_ids = {outcome.ids.batch_id for outcome in w.outcomes if isinstance(outcome, ActorResponse)}
    assert len(batch_ids) == 1, batch_ids
    assert None not in batch_ids, batch_ids


# -- the shape of a response -----------------------------------------------------------------------------------------


@then("the response has these fields:")
def step_response_fields(context: Context) -> None:
    w = world(context)
    response = w.answer()
    for row in context.table:
        actual = shown(dig(response, row["field"]))
        expected = (
            row["value"].replace("<identity>", w.ledger().identity()) if "<identity>" in row["value"] else row["value"]
        )
        assert actual == expected, f"{row['field']} is {actual!r}, not {expected!r}"


@then("the response ids start with:")
def step_response_prefixes(context: Context) -> None:
    response = world(context).answer()
    for row in context.table:
        actual = shown(dig(response, row["field"]))
        assert actual.startswith(row["prefix"]), f"{row['field']} is {actual!r}"


@then("the response content is one text block holding the answer")
def step_response_one_text_block(context: Context) -> None:
    response = world(context).answer()
    [block] = response.content
    assert isinstance(block, TextContent), response.content
    assert block.text == response.text, response.content


@then('the response content holds the block types "{types}"')
def step_response_block_types(context: Context, types: str) -> None:
    response = world(context).answer()
    assert [block.type for block in response.content] == names(types), response.content


@then('the response\'s thinking mentions "{text}"')
def step_response_thinking(context: Context, text: str) -> None:
    response = world(context).answer()
    assert text in response.thinking, response.thinking


@then("the response reports some input and output tokens, and no cache use")
def step_response_usage_plain(context: Context) -> None:
    usage = world(context).answer().usage
    assert usage.input_tokens > 0, usage
    assert usage.output_tokens > 0, usage
    assert usage.cache_read_input_tokens == usage.cache_creation_input_tokens == 0, usage
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens, usage


@then('the actor called the tool "{tool}" with a string "{text_field}" and a number "{number_field}"')
def step_tool_called(context: Context, tool: str, text_field: str, number_field: str) -> None:
    response = world(context).answer()
    [call] = response.tool_calls
    assert call.name == tool, call
    assert call.id.startswith("toolu_"), call
    assert isinstance(call.input[text_field], str), call.input
    assert isinstance(call.input[number_field], int | float), call.input


@when("the actor is closed")
def step_actor_closed(context: Context) -> None:
    w = world(context)
    w.succeeded()
    w.run(w.current_actor().aclose())
