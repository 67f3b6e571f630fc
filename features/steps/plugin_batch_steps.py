"""Steps for a third-party batch provider (features/plugins/lowtide_tidepool_plugin.py) driven by lowtide's engine."""

from __future__ import annotations

import re
from typing import Any

from _support import entry_point, plugins_importable, world, yaml_doc
from step_context import Context, given, then, when

from lowtide import ActorResponse, BudgetExceededError, ProviderRegistry
from lowtide.calls import parking


def _api() -> Any:
    plugins_importable()
    import lowtide_tidepool_plugin

    return lowtide_tidepool_plugin.TidepoolAPI.shared


@given('the plugin batch provider "{name}" is installed, its batches taking {seconds:g} seconds')
def step_plugin_installed(context: Context, name: str, seconds: float) -> None:
    w = world(context)
    plugins_importable()
    import lowtide_tidepool_plugin

    lowtide_tidepool_plugin.TidepoolAPI.shared = lowtide_tidepool_plugin.TidepoolAPI(
        clock=w.clock, processing_seconds=seconds
    )
    w.registry = ProviderRegistry()
    assert w.registry.load_entry_points([entry_point(f"{name} = lowtide_tidepool_plugin:register")]) == [name]


@given('a plugin actor "{name}" of the provider "{provider}" with:')
def step_plugin_actor(context: Context, name: str, provider: str) -> None:
    w = world(context)
    w.client = None  # the plugin's API needs no SDK client
    w.add_actor({"name": name, **yaml_doc(context.text), "provider": provider})


@given("the tidepool API will create the next batch and drop the answer")
def step_drop_answer(context: Context) -> None:
    _api().drop_next_create_answer += 1


@given("the tidepool API will drop the next create before it arrives")
def step_drop_create(context: Context) -> None:
    _api().refuse_next_create += 1


@given('the tidepool API will fail the request with the key "{key}"')
def step_fail_request(context: Context, key: str) -> None:
    # The custom id comes from the plugin's own rule (with the ledger's identity), not lowtide's.
    _api().fail_custom_ids.add(world(context).custom_id(key))


@when("lowtide collects the tidepool batches")
def step_collect_plugin(context: Context) -> None:
    w = world(context)
    w.in_program(lambda: parking.collect(w.ledger(), clock=w.clock, registry=w.registry))


@when('the actor maps the prompts "{prompts}" in batches of {size:d}')
def step_map(context: Context, prompts: str, size: int) -> None:
    w = world(context)
    inputs = [item.strip() for item in prompts.split(",")]
    w.value = {"prompts": {f"item-{i}": p for i, p in enumerate(inputs)}, "run": None}
    w.value["run"] = w.run(w.current_actor().map(inputs, items_per_batch=size, progress="none"))


@then("each of the {count:d} calls was answered by tidepool with its question")
def step_answered_by_tidepool(context: Context, count: int) -> None:
    w = world(context)
    prompts = w.value["prompts"]
    assert len(w.asked) == count, w.asked
    for key, outcome in w.asked.items():
        assert isinstance(outcome, ActorResponse), (key, outcome)
        assert outcome.text == f"tidepool: {prompts[key]}", (key, outcome.text)
        assert outcome.provider == "tidepool", outcome.provider


@then("the tidepool API created each of the {count:d} requests exactly once, in {batches:d} batch")
@then("the tidepool API created each of the {count:d} requests exactly once, in {batches:d} batches")
def step_created_once(context: Context, count: int, batches: int) -> None:
    api = _api()
    assert len(api.created) == count, api.created
    assert set(api.created.values()) == {1}, api.created
    assert len(api.batches) == batches, list(api.batches)


@then("the tidepool API created {count:d} requests")
def step_created_count(context: Context, count: int) -> None:
    assert sum(_api().created.values()) == count, _api().created


@then('the ledger holds {count:d} succeeded requests of the provider "{provider}", each with its tidepool custom id')
def step_ledger_plugin(context: Context, count: int, provider: str) -> None:
    ledger = world(context).ledger()
    records = ledger.requests()
    assert len(records) == count, records
    for record in records:
        assert record.state.value == "succeeded", record
        assert re.fullmatch(r"tp-[0-9a-f]{16}", record.custom_id), record.custom_id
    assert {batch.provider for batch in ledger.batches()} == {provider}, ledger.batches()


@then("{answered:d} of the calls were answered and {failed:d} failed with a BudgetExceededError")
def step_budget(context: Context, answered: int, failed: int) -> None:
    outcomes = list(world(context).asked.values())
    assert sum(isinstance(o, ActorResponse) for o in outcomes) == answered, outcomes
    assert sum(isinstance(o, BudgetExceededError) for o in outcomes) == failed, outcomes


@then('the run\'s answers are, in order, "{answers}"')
def step_run_answers(context: Context, answers: str) -> None:
    run = world(context).value["run"]
    texts = [item.response.text if item.response is not None else None for item in run.items]
    assert texts == [item.strip() for item in answers.split(",")], texts
