"""Steps of the checks made before anything is spent: the model and its limits, the content, tools, a call's own
arguments, deprecated models and unknown prices, and the models lowtide's examples name."""

from __future__ import annotations

import json
import logging
import re
import warnings
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import httpx2
from _support import FEATURES, PathRefused, World, literal, world
from step_context import Context, given, then, when

from lowtide import BatchProcessingMode, BulkRun, ModelDeprecationWarning, RunPlan, load_actors
from lowtide.cli.demo import bundled_configuration
from lowtide.cost.pricing import cost_of
from lowtide.emulator.anthropic.catalogue import ModelCatalogue
from lowtide.providers.anthropic.models import DEPRECATIONS

# -- the API -----------------------------------------------------------------------------------------------------------


@given("the API's models endpoint refuses connections")
def step_models_refused(context: Context) -> None:
    w = world(context)
    w.client = w.client_over(PathRefused(w.transport(), "/v1/models"))


@then("the API received only these calls:")
def step_only_calls(context: Context) -> None:
    calls = {route: count for route, count in world(context).emu.calls.items() if count}
    expected = {row["call"]: int(row["count"]) for row in context.table}
    assert calls == expected, calls


# -- actors and calls --------------------------------------------------------------------------------------------------


@given('an actor "{name}" that builds its own client, with the API key "{key}"')
def step_actor_own_client(context: Context, name: str, key: str) -> None:
    w = world(context)
    settings = {"name": name, "model": "claude-sonnet-5-5", "base_url": w.emu.base_url}
    http_client = httpx2.AsyncClient(transport=w.transport(), base_url=w.emu.base_url)
    w.cleanups.append(http_client.aclose)
    w.add_actor(settings, client=None, api_key=key, http_client=http_client)


@when('the actor is asked "{prompt:Q}" with a tool whose name is {length:d} characters long')
def step_ask_tool_name(context: Context, prompt: str, length: int) -> None:
    w = world(context)
    tool = {"name": "t" * length, "input_schema": {"type": "object", "properties": {}}}
    w.response = w.attempt_async(lambda: w.current_actor().run(prompt, tools=[tool]))


@when("the actor runs these prompts, with these models, as one call of run_many:")
def step_run_many_models(context: Context) -> None:
    w = world(context)
    actor = w.current_actor()
    requests = [actor.request(row["prompt"], model=row["model"]) for row in context.table]
    w.outcomes = w.attempt_async(lambda: actor.run_many(requests)) or []


@when("the actor maps, in Python:")
def step_map_python(context: Context) -> None:
    w = world(context)
    inputs = literal(context.text)
    w.attempt_async(lambda: w.current_actor().map(inputs))


@when("the actor maps, in Python, with a cost limit of ${limit:g}:")
def step_map_python_limit(context: Context, limit: float) -> None:
    w = world(context)
    inputs = literal(context.text)
    w.attempt_async(lambda: w.current_actor().map(inputs, max_cost_usd=limit))


# -- a call's own arguments --------------------------------------------------------------------------------------------


def _value(text: str) -> Any:
    """A Python value as a feature writes it: a literal, nan, inf and -inf (which have none), or a Decimal."""
    if text in ("nan", "inf", "-inf"):
        return float(text)
    if text.startswith("Decimal(") and text.endswith(")"):
        return Decimal(literal(text[len("Decimal(") : -1]))
    return literal(text)


@when('the actor is {called:w} "{prompt:Q}" with {argument:w} = {value}')
def step_call_with_argument(context: Context, called: str, prompt: str, argument: str, value: str) -> None:
    w = world(context)
    actor = w.current_actor()
    arguments = {argument: _value(value)}
    if called == "asked":
        w.response = w.attempt_async(lambda: actor.run(prompt, **arguments))
    else:
        assert called == "parking", called
        w.attempt_async(lambda: actor.submit(prompt, **arguments))


@when("the actor is asked for the {what:w} of key = {value}")
def step_key_lookup(context: Context, what: str, value: str) -> None:
    w = world(context)
    actor, key = w.current_actor(), _value(value)
    if what == "result":
        w.attempt_async(lambda: actor.result(key))
    else:
        assert what == "ticket", what
        w.attempt(lambda: actor.ticket(key))


@when("a bulk run is built with max_cost_usd = {value}")
def step_bulk_budget(context: Context, value: str) -> None:
    w = world(context)
    w.attempt(lambda: BulkRun(w.current_actor(), max_cost_usd=_value(value)))


# -- logs and warnings -------------------------------------------------------------------------------------------------


def _kept(w: World, logger: str) -> list[logging.LogRecord]:
    return w.witnessed.setdefault(f"log {logger}", [])


@given('the warnings of "{logger}" are kept')
def step_keep_warnings(context: Context, logger: str) -> None:
    w = world(context)
    w.witnessed[f"log {logger}"] = w.keep_log(logger, logging.WARNING)


@then('"{logger}" warned once: "{text}"')
def step_warned_once(context: Context, logger: str, text: str) -> None:
    messages = [record.getMessage() for record in _kept(world(context), logger)]
    assert messages == [text], messages


@then('"{logger}" warned of nothing')
def step_warned_nothing(context: Context, logger: str) -> None:
    messages = [record.getMessage() for record in _kept(world(context), logger)]
    assert messages == [], messages


@given("Python's warnings are recorded")
def step_record_warnings(context: Context) -> None:
    w = world(context)
    catcher = warnings.catch_warnings(record=True)
    recorded = catcher.__enter__()
    warnings.simplefilter("always")
    w.cleanups.append(lambda: catcher.__exit__(None, None, None))
    w.witnessed["python warnings"] = recorded


@then("Python warned of these deprecated models, once each:")
def step_deprecation_warnings(context: Context) -> None:
    recorded = world(context).witnessed["python warnings"]
    found = [item for item in recorded if issubclass(item.category, ModelDeprecationWarning)]
    assert [str(item.message) for item in found] == [row["warning"] for row in context.table], [
        str(item.message) for item in found
    ]
    # Attributed to the program's line that made the call, not to lowtide's code.
    for item in found:
        assert "/lowtide/" not in item.filename.replace("\\", "/"), item.filename


@then("Python warned of no deprecated model")
def step_no_deprecation_warning(context: Context) -> None:
    recorded = world(context).witnessed["python warnings"]
    assert not [item for item in recorded if issubclass(item.category, ModelDeprecationWarning)], recorded


# -- answers and costs -------------------------------------------------------------------------------------------------


@then("every answer so far has no cost")
def step_answers_no_cost(context: Context) -> None:
    w = world(context)
    assert w.answers, "no answers"
    assert all(answer.cost is None for answer in w.answers), [answer.cost for answer in w.answers]


@then("every answer so far is priced")
def step_answers_priced(context: Context) -> None:
    w = world(context)
    assert w.answers, "no answers"
    assert all(answer.cost is not None and answer.cost.total_usd > 0 for answer in w.answers), w.answers


# -- deprecations ------------------------------------------------------------------------------------------------------


@given('the models endpoint describes "{model}" as {lifecycle:w}, with the end of life {when}')
def step_models_endpoint_lifecycle(context: Context, model: str, lifecycle: str, when: str) -> None:
    retires_at = None if when == "not yet announced" else literal(when)

    def rewrite(body: bytes) -> bytes:
        info = json.loads(body)
        if info["id"] == model:
            info.update(lifecycle=lifecycle, retires_at=retires_at)
        return json.dumps(info).encode()

    world(context).hooks.rewrites["models.retrieve"] = rewrite


def _sdk_day(text: str) -> date:
    """A date as the SDK's tables write it: "November 30th, 2026"."""
    return datetime.strptime(re.sub(r"(\d)(st|nd|rd|th)", r"\1", text), "%B %d, %Y").date()


@then(
    "lowtide's table of deprecations holds every model of the SDK's tables of deprecated models, with the same end of"
    " life"
)
def step_deprecations_match_sdk(context: Context) -> None:
    # The SDK's one table (its Messages resource warns from this same table, imported).
    from anthropic._data import DEPRECATED_MODELS as DATA_TABLE

    # The SDK drops models long retired from its tables (2.13 did); lowtide keeps them, to name their replacement.
    sdk = {model: _sdk_day(day) for model, day in DATA_TABLE.items()}
    ours = {model: deprecation.end_of_life for model, deprecation in DEPRECATIONS.items()}
    assert sdk, "the SDK's tables are empty: read them from where this SDK keeps them"
    differ = {model: (ours.get(model), day) for model, day in sdk.items() if ours.get(model) != day}
    assert not differ, differ


@then("every replacement in lowtide's table is a model the emulator serves, not deprecated, that genai-prices prices")
def step_replacements_current(context: Context) -> None:
    catalogue = ModelCatalogue()
    for model, deprecated in DEPRECATIONS.items():
        replacement = deprecated.replacement
        entry = catalogue.serves(replacement)
        assert entry is not None, (model, replacement)
        assert entry.lifecycle == "active", (model, replacement)
        assert replacement not in DEPRECATIONS, (model, replacement)
        priced = cost_of({"input_tokens": 1000, "output_tokens": 1000}, replacement, mode=BatchProcessingMode.BATCH)
        assert priced is not None, (model, replacement)


# -- plans -------------------------------------------------------------------------------------------------------------


def _plan(w: World) -> RunPlan:
    # Where bulk_runs_steps keeps a plan, so that its steps ("the plan says ...") read this one too.
    plan = w.asked["bulk"]["plan"]
    assert isinstance(plan, RunPlan), plan
    return plan


@when("the actor plans, in Python, with {count:d} items per batch:")
def step_plan_python(context: Context, count: int) -> None:
    w = world(context)
    inputs = literal(context.text)
    plan = w.run(w.current_actor().map(inputs, dry_run=True, items_per_batch=count))
    w.asked.setdefault("bulk", {})["plan"] = plan


@then("the plan's batches cost:")
def step_plan_costs(context: Context) -> None:
    plan = _plan(world(context))
    shown = [(batch.cost_text(), batch.priced) for batch in plan.batches]
    assert len(shown) == len(context.table.rows), shown
    for row, (text, priced) in zip(context.table, shown, strict=True):
        if row["cost"] == "unknown":
            assert (text, priced) == ("cost unknown", False), shown
        else:
            assert priced, shown
            assert re.fullmatch(r"\$\d+\.\d{4} to \$\d+\.\d{4}", text), shown
    lines = plan.lines()
    for number, (text, _) in enumerate(shown, 1):
        assert any(line.startswith(f"  batch {number}: ") and line.endswith(text) for line in lines), lines


@then("the plan as JSON has no cost for the run, nor for any batch, and names the model '{model}'")
def step_plan_json(context: Context, model: str) -> None:
    shown = _plan(world(context)).as_json()
    assert (shown["cost_low_usd"], shown["cost_high_usd"]) == (None, None), shown
    assert all(b["cost_low_usd"] is None and b["cost_high_usd"] is None for b in shown["batches"]), shown
    assert shown["unpriced_model"] == model, shown


# -- the models lowtide's own examples name ----------------------------------------------------------------------------


def _check_current(models: set[str]) -> None:
    assert models, "no models found"
    catalogue = ModelCatalogue()
    for model in sorted(models):
        entry = catalogue.serves(model)
        assert entry is not None, model
        assert entry.lifecycle == "active", model
        assert model not in DEPRECATIONS, model
        assert cost_of({"input_tokens": 10, "output_tokens": 10}, model, mode=BatchProcessingMode.BATCH), model


@then("every model the demo's actors name is served by the emulator, not deprecated, and priced by genai-prices")
def step_demo_models_current(context: Context) -> None:
    _check_current({actor.model for actor in load_actors(bundled_configuration()).values()})


@then("every model the README's examples set is served by the emulator, not deprecated, and priced by genai-prices")
def step_readme_models_current(context: Context) -> None:
    readme = (FEATURES.parent / "README.md").read_text(encoding="utf-8")
    # The models its examples set (`model: ...`, `"model": "..."`), not the misspelt one it shows refused.
    _check_current(set(re.findall(r"""\bmodel["']?:\s*["']?(claude-[a-z0-9-]*[a-z0-9])""", readme)))
