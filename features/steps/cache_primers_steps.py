"""Steps for cache-aware batches: a primer sent and answered first, the rest reading the prompt cache it wrote."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

from _bulk_support import anthropic_batches as _batches
from _bulk_support import bulk_state as _bulk
from _bulk_support import prompts as _prompts
from _bulk_support import run_result as _result
from _openai_provider_support import MODEL
from _support import World, world, yaml_doc
from step_context import Context, given, then, when

from lowtide.config.actors import BatchProcessingMode
from lowtide.cost.pricing import cost_of
from lowtide.providers.anthropic.caching import AnthropicCaching
from lowtide.types import Usage


def _text(length: int, word: str = "harbour") -> str:
    """A prompt of exactly `length` characters (the emulator counts a token per four)."""
    sentence = f"You are the {word} master's assistant; you know every tide table of the coast by heart. "
    return (sentence * (length // len(sentence) + 1))[:length]


def _numbers(text: str) -> list[int]:
    if " to " in text:
        first, last = text.split(" to ")
        return list(range(int(first), int(last) + 1))
    return [int(part) for part in re.split(r",\s*|\s+and\s+", text)]


def _usage(w: World, index: int) -> Usage:
    item = _result(w).items[index]
    assert item.answer is not None, (index, item.status, item.reason, item.error)
    return item.answer.usage


@given('an actor "{name}" whose system prompt is {length:d} characters long, with:')
def step_actor_system_prompt(context: Context, name: str, length: int) -> None:
    settings = {"name": name, "model": "claude-sonnet-5-5", **yaml_doc(context.text)}
    world(context).add_actor({**settings, "system_prompt": _text(length)})


@given(
    'the prompts "{template}", {count:d} of them, the last {last:d} with a system prompt of their own,'
    " {length:d} characters long"
)
def step_prompts_two_systems(context: Context, template: str, count: int, last: int, length: int) -> None:
    from lowtide.bulk.inputs.jobs import Job

    own = _text(length, word="lighthouse")
    prompts: list[Any] = [template.replace("{n}", str(n)) for n in range(count)]
    for n in range(count - last, count):
        prompts[n] = Job(prompt=prompts[n], overrides={"system": own})
    _bulk(world(context))["prompts"] = prompts


@given('the prompts "{template}", {count:d} of them, with prompts {items} errored in their first batch')
def step_prompts_errored_once(context: Context, template: str, count: int, items: str) -> None:
    w = world(context)
    _bulk(w)["prompts"] = [template.replace("{n}", str(n)) for n in range(count)]
    for n in _numbers(items):
        w.emu.faults.outcome(w.custom_id(f"reviews-{n}"), "errored")


@given('a text file "{name}" of {length:d} characters')
def step_long_text_file(context: Context, name: str, length: int) -> None:
    world(context).path(name).write_text(_text(length, word="pilot"), encoding="utf-8")


@given('jobs that each send the file "{name}" before their prompt "{template}", {count:d} of them')
def step_prompts_after_file(context: Context, name: str, template: str, count: int) -> None:
    from lowtide.bulk.inputs.jobs import Job

    w = world(context)
    _bulk(w)["prompts"] = [Job(prompt=template.replace("{n}", str(n)), file=w.path(name)) for n in range(count)]


@then("results {items} each read from the prompt cache what result {writer:d} wrote")
def step_results_read_primer(context: Context, items: str, writer: int) -> None:
    w = world(context)
    written = _usage(w, writer).cache_creation_input_tokens
    assert written > 0, _usage(w, writer)
    for index in _numbers(items):
        usage = _usage(w, index)
        assert (usage.cache_read_input_tokens, usage.cache_creation_input_tokens) == (written, 0), (index, usage)


@when("the actor plans the prompts")
def step_plan_prompts(context: Context) -> None:
    w = world(context)
    _bulk(w)["plan"] = w.run(w.current_actor().map(_prompts(w), dry_run=True))


@when("{hours:d} hours pass on the emulator's clock")
def step_hours_pass(context: Context, hours: int) -> None:
    world(context).clock.advance(hours * 3600.0)


@then(
    "the plan's expected saving is 10 uncached reads of {tokens:d} tokens less one write and 9 reads, at batch prices"
)
def step_plan_saving(context: Context, tokens: int) -> None:
    w = world(context)
    plan = _bulk(w)["plan"]
    caching, model = AnthropicCaching(), w.current_actor().configuration.model

    def price(usage: dict[str, object]) -> Decimal:
        cost = cost_of(usage, model, mode=BatchProcessingMode.BATCH, provider="anthropic")
        assert cost is not None
        return cost.total_usd

    expected = 10 * price(caching.uncached_usage(tokens)) - (
        price(caching.usage(read=0, written=tokens)) + 9 * price(caching.usage(read=tokens, written=0))
    )
    assert expected > 0, expected
    assert plan.cache.saving_usd == expected, (plan.cache.saving_usd, expected)
    assert f"expected saving ${expected:.4f}" in "\n".join(plan.lines()), plan.lines()
    assert plan.as_json()["prompt_cache"]["saving_usd"] == str(expected)


@then("the batch of {count:d} request had ended before the other was created")
@then("the batch of {count:d} requests had ended before the other was created")
def step_primer_first(context: Context, count: int) -> None:
    w = world(context)
    first, *later = _batches(w)
    assert len(w.emu.batch(first.id).requests) == count, first
    assert first.ended_at is not None
    assert later, first
    assert all(batch.created_at >= first.ended_at for batch in later), (first, later)


@then("result {index:d} wrote {tokens:d} tokens to the prompt cache for an hour and read none")
def step_primer_wrote(context: Context, index: int, tokens: int) -> None:
    w = world(context)
    usage = _usage(w, index)
    assert (usage.cache_creation_input_tokens, usage.cache_read_input_tokens) == (tokens, 0), usage
    # Written for the hour: the request the API received carried the one-hour marker.
    response = _result(w).items[index].response
    assert response is not None
    marked = [
        params for batch in _batches(w) for custom_id, params in w.emu.batch(batch.id).requests
        if custom_id == response.ids.custom_id
    ]  # fmt: skip
    assert marked, response.ids
    assert all('"ttl":"1h"' in json.dumps(params, separators=(",", ":")) for params in marked), marked


@then("results {items} each read {tokens:d} tokens from the prompt cache and wrote none")
def step_results_read(context: Context, items: str, tokens: int) -> None:
    w = world(context)
    for index in _numbers(items):
        usage = _usage(w, index)
        assert (usage.cache_read_input_tokens, usage.cache_creation_input_tokens) == (tokens, 0), (index, usage)


@then("results {items} each wrote to the prompt cache and read none")
def step_results_wrote(context: Context, items: str) -> None:
    w = world(context)
    for index in _numbers(items):
        usage = _usage(w, index)
        assert usage.cache_creation_input_tokens > 0, (index, usage)
        assert usage.cache_read_input_tokens == 0, (index, usage)


@then("no request the API received carried a cache marker")
def step_no_marker(context: Context) -> None:
    w = world(context)
    for batch in _batches(w):
        for _, params in w.emu.batch(batch.id).requests:
            assert "cache_control" not in json.dumps(params), params


@then("no result read from the prompt cache or wrote to it")
def step_no_cache(context: Context) -> None:
    for item in _result(world(context)).items:
        assert item.answer is not None
        usage = item.answer.usage
        assert usage.cache_read_input_tokens == usage.cache_creation_input_tokens == 0, usage


@then('the summary of the run says "{text}"')
def step_summary_says(context: Context, text: str) -> None:
    summary = _result(world(context)).summary()
    assert text in summary, summary


@then("the saving the summary names is what the cached tokens would have cost uncached, less what they cost")
def step_summary_saving(context: Context) -> None:
    w = world(context)
    result, model = _result(w), w.current_actor().configuration.model
    expected = Decimal(0)
    for item in result.items:
        assert item.answer is not None
        assert item.answer.cost is not None
        used = item.answer.usage
        uncached = used.model_copy(
            update={
                "input_tokens": used.input_tokens + used.cache_read_input_tokens + used.cache_creation_input_tokens,
                "cache_read_input_tokens": 0,
                "cache_creation_input_tokens": 0,
            }
        )
        priced = cost_of(uncached, model, mode=BatchProcessingMode.BATCH, provider="anthropic")
        assert priced is not None
        expected += priced.total_usd - item.answer.cost.total_usd
    report = result.report()
    assert expected > 0, expected
    assert report.cache_saved_usd == expected, (report.cache_saved_usd, expected)
    assert f"saving ${expected:.6f}" in result.summary(), result.summary()


@given('an OpenAI actor "{name}" whose instructions are {length:d} characters long, with:')
def step_openai_actor_system_prompt(context: Context, name: str, length: int) -> None:
    settings = {"name": name, "provider": "openai", "model": MODEL, **yaml_doc(context.text)}
    world(context).add_actor({**settings, "system_prompt": _text(length)})


@then("the OpenAI API received one batch, whose requests carry 2 prompt_cache_keys, one for each instruction")
def step_openai_cache_keys(context: Context) -> None:
    batches = list(world(context).emu.openai.batches.oldest_first())
    assert len(batches) == 1, batches
    keys: dict[str, set[str]] = {}
    for _, line in batches[0].requests:
        body = line  # (the emulator keeps each line's body)
        keys.setdefault(str(body.get("instructions")), set()).add(str(body.get("prompt_cache_key")))
    assert len(keys) == 2, keys
    assert all(len(found) == 1 for found in keys.values()), keys
    assert len(set.union(*keys.values())) == 2, keys
