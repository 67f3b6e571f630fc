"""Steps for `lowtide.testing.FakeBatchProvider`, written as a user's test would use it: a `FakeBatchAPI` on the
scenario's clock, registered under a name of the test's choice with the registry its actors are given."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from _support import world
from pydantic import BaseModel
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import (
    Actor,
    ActorError,
    ActorRequest,
    ActorResponse,
    BatchProcessingMode,
    BatchSettings,
    BatchTimeoutError,
    Provider,
    ProviderOptions,
    ProviderRegistry,
)
from lowtide.calls import parking
from lowtide.providers import BatchLimits
from lowtide.testing import Failure, FakeBatchAPI, FakeBatchCodec, FakeBatchProvider, FakeOutcome, Reply


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    fake_apis: dict[str, FakeBatchAPI]


class Tide(BaseModel):
    name: str
    height_m: float


def fakes(context: Context) -> dict[str, FakeBatchAPI]:
    """The scenario's fake APIs, by the provider name each is registered under."""
    if not hasattr(context, "fake_apis"):
        context.fake_apis = {}
    found: dict[str, FakeBatchAPI] = context.fake_apis
    return found


def fake(context: Context, name: str = "fake") -> FakeBatchAPI:
    return fakes(context)[name]


# -- arranging ---------------------------------------------------------------------------------------------------


@given('a fake batch API whose batches take {seconds:g} seconds, registered as the provider "{name}"')
def step_fake_api(context: Context, seconds: float, name: str) -> None:
    w = world(context)
    api = FakeBatchAPI(w.clock, processing_seconds=seconds)
    if w.registry is None:
        w.registry = ProviderRegistry()
    FakeBatchProvider.register(w.registry, api, name=name)
    fakes(context)[name] = api


@given("the fake API takes at most {requests:d} requests and {mib:d} MiB a batch")
def step_fake_limits(context: Context, requests: int, mib: int) -> None:
    """Limits of the scenario's choosing, so that going over them costs a few requests, not the default 10,000."""
    registry = world(context).registry
    assert registry is not None
    provider = registry.resolve("fake", BatchProcessingMode.BATCH).factory
    codec = getattr(provider, "codec", None)
    assert isinstance(codec, FakeBatchCodec), codec
    codec.limits = BatchLimits(max_requests=requests, max_bytes=mib * 2**20)


@given("the fake API keeps lowtide's intent id")
def step_keeps_intent(context: Context) -> None:
    assert fake(context).echoes_intent


@given("the fake API does not keep lowtide's intent id")
def step_no_intent(context: Context) -> None:
    # Set before the actor's first call: its backend reads it when the provider is built.
    fake(context).echoes_intent = False


@given('the fake API will answer "{key}" with "{text}"')
def step_script_reply(context: Context, key: str, text: str) -> None:
    fake(context).script(key, Reply(text))


@given('the fake API will fail "{key}" with "{error_type}" saying "{message}"')
def step_script_failure(context: Context, key: str, error_type: str, message: str) -> None:
    fake(context).script(key, Failure(error_type, message))


@given('the fake API will fail "{key}" retryably with "{error_type}" saying "{message}"')
def step_script_retryable(context: Context, key: str, error_type: str, message: str) -> None:
    fake(context).script(key, Failure(error_type, message, retryable=True), Reply())


@given('the fake API will end "{key}" as canceled')
def step_script_canceled(context: Context, key: str) -> None:
    fake(context).script(key, "canceled")


@given('the fake API will end "{key}" as expired, {times:d} time')
@given('the fake API will end "{key}" as expired, {times:d} times')
def step_script_expired(context: Context, key: str, times: int) -> None:
    outcomes: list[FakeOutcome] = ["expired"] * times
    fake(context).script(key, *outcomes)


@given("the fake API will create the next batch and lose its answer")
def step_drop_answer(context: Context) -> None:
    fake(context).drop_create_answer()


@given("the fake API will lose the next create on its way")
def step_drop_create(context: Context) -> None:
    fake(context).drop_create()


@given("the fake API will refuse the next create")
def step_refuse_create(context: Context) -> None:
    fake(context).refuse_create()


# -- acting ------------------------------------------------------------------------------------------------------


@when('the test cancels the parked batch of "{key}"')
def step_cancel_parked(context: Context, key: str) -> None:
    w = world(context)
    batch_id = w.tickets[key].batch_id
    assert batch_id is not None, w.tickets[key]
    w.in_program(lambda: parking.cancel(w.ledger(), batch_id, clock=w.clock, registry=w.registry))


@when('the actor is asked for a Tide with the key "{key}"')
def step_ask_tide(context: Context, key: str) -> None:
    w = world(context)
    w.response = w.attempt_async(lambda: w.current_actor().run("Which tide?", key=key, response_model=Tide))


@when("the actor is asked for a tool call")
def step_ask_tool(context: Context) -> None:
    w = world(context)
    tool = {"name": "lookup", "description": "Look a tide up.", "input_schema": {"type": "object"}}
    w.attempt_async(lambda: w.current_actor().run("Which tide?", key="tool", tools=[tool]))


@when("the actor is asked for an image's text")
def step_ask_image(context: Context) -> None:
    w = world(context)
    image = {"type": "image", "source": {"type": "url", "url": "https://example.com/tide.png"}}
    messages = [{"role": "user", "content": [image, {"type": "text", "text": "What does it say?"}]}]
    w.attempt_async(lambda: w.current_actor().run(messages=messages, key="image"))


@when('the provider "{name}" answers "{prompts}" as one batch, outside the ledger')
def step_outside_ledger(context: Context, name: str, prompts: str) -> None:
    actor, provider = _provider_named(context, name)
    requests = [actor.request(prompt.strip()) for prompt in prompts.split(",")]
    w = world(context)
    w.outcomes = w.run(provider.complete_many(requests))


# What `the provider ... is asked, as one batch outside the ledger, for WHAT` sends, made when asked for.
_ASKED_FOR: dict[str, Callable[[Actor], list[ActorRequest]]] = {
    "no requests": lambda actor: [],
    'two requests with the custom id "twin"': lambda actor: [
        actor.request("one", custom_id="twin"),
        actor.request("two", custom_id="twin"),
    ],
    "4 requests": lambda actor: [actor.request("tide")] * 4,
    "2 requests of 1.1 million characters each": lambda actor: [actor.request("x" * 1_100_000)] * 2,
    '"one, two"': lambda actor: [actor.request("one"), actor.request("two")],
}


@when('the provider "{name}" is asked, as one batch outside the ledger, for {what}')
def step_outside_ledger_refused(context: Context, name: str, what: str) -> None:
    """`complete_many` over requests the API cannot take in one batch (`what` says which), or a plain pair; what it
    raises kept for the Then steps."""
    actor, provider = _provider_named(context, name)
    requests = _ASKED_FOR[what](actor)
    w = world(context)
    w.outcomes = w.attempt_async(lambda: provider.complete_many(requests)) or []


def _provider_named(context: Context, name: str) -> tuple[Actor, Provider]:
    """The scenario's actor and its provider, which must be the one registered as `name`."""
    actor = world(context).current_actor()
    provider = actor.provider()
    assert provider.name == name, provider.name
    return actor, provider


@when("a ledger rebuild surveys the fake API's account")
def step_rebuild_survey(context: Context) -> None:
    """What `lowtide ledger rebuild` asks first of each account its actors reach: the batches it lists."""
    from lowtide.rebuild import sources_of, survey

    actor, provider = _provider_named(context, "fake")
    backend = provider.batch_backend()
    assert backend is not None
    w = world(context)
    w.attempt(lambda: w.run(survey(sources_of([(backend, actor.name, "fake-1", BatchSettings())]))))


@then('the timeout names the requests "{custom_ids}"')
def step_timeout_names(context: Context, custom_ids: str) -> None:
    error = world(context).failure()
    assert isinstance(error, BatchTimeoutError), repr(error)
    assert error.custom_ids == [c.strip() for c in custom_ids.split(",")], error.custom_ids


@when("a FakeBatchProvider is built without being registered")
def step_unregistered(context: Context) -> None:
    w = world(context)
    w.attempt(lambda: FakeBatchProvider(ProviderOptions(clock=w.clock)))


# -- observing ---------------------------------------------------------------------------------------------------


@then("the fake API answered each of the {count:d} calls with its question")
def step_answered(context: Context, count: int) -> None:
    w = world(context)
    prompts = w.value["prompts"]
    assert len(w.asked) == count, w.asked
    for key, outcome in w.asked.items():
        assert isinstance(outcome, ActorResponse), (key, outcome)
        assert outcome.text == f"fake: {prompts[key]}", (key, outcome.text)
        assert outcome.provider == "fake", outcome.provider


@then('the call for "{label}" was answered "{text}"')
def step_call_answered(context: Context, label: str, text: str) -> None:
    outcome = world(context).asked.get(label)
    assert isinstance(outcome, ActorResponse), (label, outcome)
    assert outcome.text == text, outcome.text


@then('the fake API created each of the keys "{keys}" once, in {batches:d} batch')
@then('the fake API created each of the keys "{keys}" once, in {batches:d} batches')
def step_created_once(context: Context, keys: str, batches: int) -> None:
    api = fake(context)
    assert dict(api.created) == {key.strip(): 1 for key in keys.split(",")}, api.created
    assert len(api.batches) == batches, list(api.batches)


@then(
    'the fake API created the key "{k1}" {n1:d} times, "{k2}" {n2:d} times and "{k3}" {n3:d} time,'
    " in {batches:d} batches"
)
def step_created_times(context: Context, k1: str, n1: int, k2: str, n2: int, k3: str, n3: int, batches: int) -> None:
    api = fake(context)
    assert dict(api.created) == {k1: n1, k2: n2, k3: n3}, api.created
    assert len(api.batches) == batches, list(api.batches)


@then("the fake API was asked to create {asked:d} batches and made {made:d}")
def step_creates(context: Context, asked: int, made: int) -> None:
    api = fake(context)
    assert (api.creates, len(api.batches)) == (asked, made), (api.creates, list(api.batches))


@then("the fake API made {batches:d} batches of {requests:d} requests in all")
@then('the fake API "{name}" made {batches:d} batches of {requests:d} requests in all')
def step_made(context: Context, batches: int, requests: int, name: str = "fake") -> None:
    api = fake(context, name)
    assert len(api.batches) == batches, list(api.batches)
    assert sum(api.created.values()) == requests, api.created


@then('the fake API "{name}" has its batch "{status}"')
def step_batch_status(context: Context, name: str, status: str) -> None:
    api = fake(context, name)
    (batch,) = api.batches.values()
    assert api.status(batch) == status, (api.status(batch), api.now() - batch.created_at)


@then("the waiting call failed with a {name:w}")
def step_waiting_failed(context: Context, name: str) -> None:
    error = world(context).error
    assert error is not None
    assert type(error).__name__ == name, repr(error)


@then('it was refused with a {name:w} saying "{text}"')
def step_refused(context: Context, name: str, text: str) -> None:
    error = world(context).error
    assert isinstance(error, ActorError), repr(error)
    assert type(error).__name__ == name, repr(error)
    assert text in str(error), str(error)


@then('the parsed answer is a Tide named "{name}", {height:g} m high')
def step_parsed_tide(context: Context, name: str, height: float) -> None:
    parsed = world(context).answer().parsed
    assert parsed == Tide(name=name, height_m=height), parsed


@then('the answers are "{texts}"')
def step_answers(context: Context, texts: str) -> None:
    outcomes = world(context).outcomes
    assert [o.text if isinstance(o, ActorResponse) else o for o in outcomes] == [
        text.strip() for text in texts.split(",")
    ], outcomes
