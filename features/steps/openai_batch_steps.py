"""Steps for OpenAI actors in batch mode (features/openai_batch.feature): the Batch API through the official SDK,
against the emulator's OpenAI API, in process, on the scenario's manual clock."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from typing import Any

from _batch_providers import dead_after_openai_upload, later_result
from _openai_provider_support import RESPONSE_MODELS, openai_client
from _support import World, emulated_reply_to, names, world
from step_context import Context, given, then, when

from lowtide import Actor, ActorResponse, BatchProcessingMode
from lowtide.bulk.outputs.results import RunResult
from lowtide.bulk.planning.batches import RunPlan
from lowtide.calls import parking
from lowtide.providers.openai import OpenAIBatchProvider
from lowtide.providers.openai.remote import INTENT_KEY


def _batches(w: World) -> list[Any]:
    async def listing() -> list[Any]:
        return [batch async for batch in w.client.batches.list(limit=100)]

    return w.run(listing())


def _program_actor(w: World) -> Actor:
    """The current actor as a new program builds it: the same configuration and ledger, a client of its own."""
    actor = Actor(w.current_actor().configuration, client=openai_client(w), clock=w.clock, registry=w.registry)
    w.cleanups.append(actor.aclose)
    return actor


# -- the emulated account ---------------------------------------------------------------------------------------------


@given("the OpenAI API will commit the next batch but drop the connection before answering")
def step_openai_drop_after_commit(context: Context) -> None:
    world(context).emu.faults.drop_after_commit("openai.batches.create")


@given('the OpenAI API will fail the next "{route}" call with status {status:d}')
def step_openai_fail_next(context: Context, route: str, status: int) -> None:
    world(context).emu.faults.fail_next(route, status)


@given('the OpenAI API will lose the request "{key}" from both files of its batch')
def step_openai_lose(context: Context, key: str) -> None:
    w = world(context)
    w.emu.faults.lose(w.custom_id(key))


@given("OpenAI takes at most {count:d} request in a batch")
@given("OpenAI takes at most {count:d} requests in a batch")
def step_openai_batch_limit(context: Context, count: int) -> None:
    world(context).emu.openai.limits.max_batch_requests = count


@given(
    'the ledger holds an OpenAI intent for the key "{key}" asking "{prompt}", its input file uploaded by a program'
    " that died before creating the batch"
)
def step_openai_orphan_intent(context: Context, key: str, prompt: str) -> None:
    dead_after_openai_upload(world(context), key, prompt, "lt_orphaned_openai_intent", "/v1/responses")


@given("that input file was deleted since")
def step_openai_orphan_file_gone(context: Context) -> None:
    w = world(context)
    _, file_id = w.witnessed["orphan"]
    w.run(w.client.files.delete(file_id))
    w.emu.calls.clear()


# -- calls ------------------------------------------------------------------------------------------------------------


@when("its OpenAI batch is canceled")
def step_openai_cancel(context: Context) -> None:
    w = world(context)
    [batch] = _batches(w)
    w.run(w.client.batches.cancel(batch.id))


@when('a program parks "{prompt}" with the key "{key}" and ends')
def step_openai_park_in_program(context: Context, prompt: str, key: str) -> None:
    w = world(context)
    actor = _program_actor(w)
    w.tickets[key] = w.in_program(lambda: actor.submit(prompt, key=key))


@when('a later program waits for the result of "{key}"')
def step_openai_later_result(context: Context, key: str) -> None:
    w = world(context)
    later_result(w, _program_actor(w), key)


@when("the actor {what:w} a bulk run of {count:d} prompts, {size:d} to a batch")
def step_openai_bulk(context: Context, what: str, count: int, size: int) -> None:
    w = world(context)
    prompts = [f"Tide report {n}" for n in range(count)]
    outcome = w.run(w.current_actor().map(prompts, items_per_batch=size, dry_run=what == "plans"))
    w.witnessed.setdefault("bulk", []).append(outcome)


@when('the OpenAI batch provider answers "{first}" and "{second}" in one batch')
def step_openai_direct(context: Context, first: str, second: str) -> None:
    w = world(context)
    actor = w.current_actor()
    provider = actor.provider(BatchProcessingMode.BATCH)
    assert isinstance(provider, OpenAIBatchProvider), provider
    outcomes = w.run(provider.complete_many([actor.request(first), actor.request(second)]))
    w.answers = [outcome for outcome in outcomes if isinstance(outcome, ActorResponse)]
    assert len(w.answers) == len(outcomes), outcomes


# -- what came back ---------------------------------------------------------------------------------------------------


@then("every answer was priced at batch prices, half the live equivalent")
def step_openai_batch_priced(context: Context) -> None:
    for label, outcome in world(context).asked.items():
        assert isinstance(outcome, ActorResponse), (label, outcome)
        cost = outcome.cost
        assert cost is not None, label
        assert cost.pricing == "batch", (label, cost)
        assert cost.total_usd > 0, (label, cost)
        assert cost.total_usd * 2 == cost.live_equivalent_usd, (label, cost)


@then('the answer to "{label}" is the emulated reply to "{prompt}"')
def step_openai_answer_to(context: Context, label: str, prompt: str) -> None:
    outcome = world(context).asked[label]
    assert isinstance(outcome, ActorResponse), outcome
    assert outcome.text.startswith(emulated_reply_to(prompt)), outcome.text


@then("the OpenAI API was sent each of these requests once: {keys}")
def step_openai_sent_once(context: Context, keys: str) -> None:
    w = world(context)
    created = w.emu.openai.created_custom_ids
    assert created == Counter({w.custom_id(key): 1 for key in names(keys)}), created


@then("the OpenAI API committed {count:d} batch")
@then("the OpenAI API committed {count:d} batches")
def step_openai_committed(context: Context, count: int) -> None:
    assert world(context).emu.openai.created_batches == count, world(context).emu.openai.created_batches


@then('the OpenAI batch was created for "{url}" with lowtide\'s intent id in its metadata')
def step_openai_batch_metadata(context: Context, url: str) -> None:
    w = world(context)
    [batch] = _batches(w)
    assert batch.endpoint == url, batch.endpoint
    [recorded] = w.ledger().batches()
    assert batch.metadata == {INTENT_KEY: recorded.id}, (batch.metadata, recorded.id)
    assert recorded.provider_batch_id == batch.id, recorded


@then("the OpenAI batch was created from the file the dead program uploaded, under its intent id")
def step_openai_resumed(context: Context) -> None:
    w = world(context)
    intent, file_id = w.witnessed["orphan"]
    [batch] = _batches(w)
    assert batch.input_file_id == file_id, (batch.input_file_id, file_id)
    assert batch.metadata == {INTENT_KEY: intent}, batch.metadata


@then("the OpenAI account still holds the input file of the batch")
def step_openai_input_kept(context: Context) -> None:
    w = world(context)
    [batch] = _batches(w)
    kept = w.run(w.client.files.retrieve(batch.input_file_id))
    assert kept.purpose == "batch", kept


@then("the OpenAI batch has an error file and no output file")
def step_openai_error_file_only(context: Context) -> None:
    [batch] = _batches(world(context))
    assert batch.status == "completed", batch.status
    assert batch.output_file_id is None, batch.output_file_id
    assert batch.error_file_id is not None, batch


@then('every OpenAI batch ended "{status}"')
def step_openai_batches_ended(context: Context, status: str) -> None:
    statuses = [batch.status for batch in _batches(world(context))]
    assert statuses, "no batch"
    assert all(each == status for each in statuses), statuses


@when('lowtide cancels the OpenAI key "{key}"')
def step_openai_cancel_key(context: Context, key: str) -> None:
    w = world(context)
    client = openai_client(w)
    w.in_program(lambda: parking.cancel(w.ledger(), key, client=client, clock=w.clock))


@when("lowtide collects the ended OpenAI batches")
def step_openai_collect(context: Context) -> None:
    w = world(context)
    client = openai_client(w)
    w.in_program(lambda: parking.collect(w.ledger(), client=client, clock=w.clock))


@then("the OpenAI account holds no input file any more")
def step_openai_no_input_file(context: Context) -> None:
    w = world(context)

    async def purposes() -> list[str]:
        return [file.purpose async for file in w.client.files.list()]

    assert "batch" not in w.run(purposes()), "an input file was left behind"


@then("every OpenAI batch holds requests for one model")
def step_openai_one_model_each(context: Context) -> None:
    w = world(context)
    models: dict[str, set[str]] = {}
    for outcome in w.asked.values():
        assert isinstance(outcome, ActorResponse), outcome
        assert outcome.ids.batch_id is not None
        models.setdefault(outcome.ids.batch_id, set()).add(outcome.model)
    assert len(models) == 2, models
    assert all(len(each) == 1 for each in models.values()), models


@then("the answer parsed into a {model:w} with a string port and a number height_m")
def step_openai_parsed_batch(context: Context, model: str) -> None:
    response = world(context).answer()
    assert response.mode is BatchProcessingMode.BATCH, response.mode
    parsed = response.parsed
    assert isinstance(parsed, RESPONSE_MODELS[model]), parsed
    assert isinstance(getattr(parsed, "port", None), str), parsed
    assert isinstance(getattr(parsed, "height_m", None), float), parsed


@then("the plan has {count:d} batches with a cost range above $0")
def step_openai_plan(context: Context, count: int) -> None:
    plan = world(context).witnessed["bulk"][-1]
    assert isinstance(plan, RunPlan), plan
    assert len(plan.batches) == count, plan.batches
    assert all(b.priced and Decimal(0) < b.cost_low_usd <= b.cost_high_usd for b in plan.batches), plan.batches


@then("the run's {count:d} items succeeded in {batches:d} batches")
def step_openai_run_result(context: Context, count: int, batches: int) -> None:
    result = world(context).witnessed["bulk"][-1]
    assert isinstance(result, RunResult), result
    assert len(result.completed) == count, result.items
    assert all(item.response is not None and item.response.mode is BatchProcessingMode.BATCH for item in result.items)
    assert result.batches == batches, result.batches


@then('the outcomes are the emulated replies to "{first}" and "{second}", in order')
def step_openai_direct_outcomes(context: Context, first: str, second: str) -> None:
    answers = world(context).answers
    assert [a.text[: len(emulated_reply_to(p))] for a, p in zip(answers, (first, second), strict=True)] == [
        emulated_reply_to(first),
        emulated_reply_to(second),
    ], answers
