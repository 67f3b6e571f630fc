"""Steps of the checks each provider makes before anything is spent (features/pre_send_limits.feature): text that is
not valid Unicode, a request's size, its input tokens against the model's context window, the model (OpenAI's
models endpoint), each provider's parameter ranges; and of what the emulator refuses as the APIs do."""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Any

import httpx2
import openai
from _openai_provider_support import OPENAI_KEY, openai_client
from _support import PathRefused, World, literal, world, yaml_doc
from step_context import Context, given, then, when

from lowtide.emulator import Emulator

# The model each provider's actors use: Claude Haiku 4.5 reads at most 200,000 tokens, GPT-5.4 mini 272,000; the
# emulator counts a token per four characters.
MODELS = {"Anthropic": "claude-haiku-4-5", "OpenAI": "gpt-5.4-mini"}
PROVIDERS = {"Anthropic": "anthropic", "OpenAI": "openai"}
LOOK_UPS = frozenset(
    {
        "models.retrieve",
        "models.list",
        "messages.count_tokens",
        "openai.models.retrieve",
        "openai.models.list",
        "openai.responses.input_tokens",
    }
)
COUNTS = ("messages.count_tokens", "openai.responses.input_tokens")


class Recording(httpx2.AsyncBaseTransport):
    """Passes requests to `inner`, keeping each POST's path and body: what the API was sent."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, kept: list[tuple[str, bytes]]) -> None:
        self._inner = inner
        self._kept = kept

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method == "POST":
            self._kept.append((request.url.path, await request.aread()))
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def _kept(w: World) -> list[tuple[str, bytes]]:
    return w.witnessed.setdefault("sent", [])


def _start(context: Context, provider: str, *, refused: str | None = None) -> World:
    """The emulator, and the provider's SDK client over the scenario's hooked transport, whose POSTs are kept (and
    calls to paths starting with `refused` refused)."""
    w = world(context)
    w.emulator = Emulator(clock=w.clock)
    inner: httpx2.AsyncBaseTransport = Recording(w.transport(), _kept(w))
    if refused is not None:
        inner = PathRefused(inner, refused)
    w.client = w.client_over(inner) if provider == "Anthropic" else openai_client(w, inner)
    w.witnessed["provider"] = [provider]
    return w


def _settings(provider: str, name: str, mode: str, text: str | None = None) -> dict[str, Any]:
    return {
        "name": name,
        "provider": PROVIDERS[provider],
        "model": MODELS[provider],
        "batch_processing": mode,
        **yaml_doc(text),
    }


@given('{provider:w}\'s emulated API and an actor "{name}" in {mode:w} mode')
def step_provider_actor(context: Context, provider: str, name: str, mode: str) -> None:
    _start(context, provider).add_actor(_settings(provider, name, mode))


@given('{provider:w}\'s emulated API and an actor "{name}" in {mode:w} mode, with:')
def step_provider_actor_with(context: Context, provider: str, name: str, mode: str) -> None:
    _start(context, provider).add_actor(_settings(provider, name, mode, context.text))


@given('{provider:w}\'s emulated API, whose {path} refuses connections, and an actor "{name}" in {mode:w} mode')
def step_provider_actor_refused(context: Context, provider: str, path: str, name: str, mode: str) -> None:
    _start(context, provider, refused=path).add_actor(_settings(provider, name, mode))


@given("{provider:w}'s emulated API")
def step_provider_api(context: Context, provider: str) -> None:
    _start(context, provider)


@when('a {provider:w} actor "{name}" is configured with:')
def step_provider_configured(context: Context, provider: str, name: str) -> None:
    w = world(context)
    w.attempt(lambda: w.add_actor(_settings(provider, name, "live", context.text)))


# -- calls ------------------------------------------------------------------------------------------------------------


def _long(thousands: int) -> str:
    """A prompt of `thousands` thousand characters (ASCII): a quarter as many tokens, as the emulator counts."""
    return "Tide " * (thousands * 200)


@when("the actor is asked a prompt of {thousands:d} thousand characters")
def step_ask_long(context: Context, thousands: int) -> None:
    w = world(context)
    w.response = w.attempt_async(lambda: w.current_actor().run(_long(thousands)))


_HOW = {"batched": "batch", "live": "live"}


@when("the actor maps three prompts, {how:w}, the second of {thousands:d} thousand characters")
def step_map_long(context: Context, how: str, thousands: int) -> None:
    _map(world(context), ["Short one", _long(thousands), "Short three"], {"mode": _HOW[how]})


@when("the actor maps {count:d} short prompts, {how:w}")
def step_map_short(context: Context, count: int, how: str) -> None:
    _map(world(context), [f"Review {index}" for index in range(count)], {"mode": _HOW[how]})


@when("the actor maps, {mode:w}, in Python:")
def step_map_in_mode(context: Context, mode: str) -> None:
    _map(world(context), literal(context.text), {"mode": mode})


def _map(w: World, inputs: list[Any], options: dict[str, Any]) -> None:
    actor = w.current_actor()
    w.value = w.attempt_async(lambda: actor.map(inputs, **options))


@when("the actor runs three prompts with run_many, the second of {thousands:d} thousand characters")
def step_run_many_long(context: Context, thousands: int) -> None:
    w = world(context)
    actor = w.current_actor()
    w.outcomes = w.attempt_async(lambda: actor.run_many(["Short one", _long(thousands), "Short three"])) or []


@when("the actor is asked {count:d} prompts at once")
def step_ask_many(context: Context, count: int) -> None:
    w = world(context)
    actor = w.current_actor()

    async def ask() -> list[Any]:
        import asyncio

        return list(await asyncio.gather(*(actor.run(f"Question {index}") for index in range(count))))

    w.attempt_async(ask)


# -- what was sent and recorded ---------------------------------------------------------------------------------------


@then("the API was asked nothing but look-ups")
def step_only_lookups(context: Context) -> None:
    calls = {route: count for route, count in world(context).emu.calls.items() if count}
    assert set(calls) <= LOOK_UPS, calls


@then("the API counted tokens {count:d} time")
@then("the API counted tokens {count:d} times")
def step_counted(context: Context, count: int) -> None:
    calls = world(context).emu.calls
    assert sum(calls[route] for route in COUNTS) == count, calls


@then("the answer is the emulated reply to a long prompt")
def step_long_answered(context: Context) -> None:
    answer = world(context).answer()
    assert answer.text.startswith('Emulated reply to "Tide Tide'), answer.text[:80]


@then("the run's {count:d} items were answered")
def step_run_answered(context: Context, count: int) -> None:
    w = world(context)
    w.succeeded()
    result = w.value
    assert len(result.items) == count, result.summary()
    assert all(item.ok for item in result.items), result.summary()


@then('the run\'s summary says "{text}"')
def step_run_summary(context: Context, text: str) -> None:
    w = world(context)
    w.succeeded()
    assert text in w.value.summary(), w.value.summary()


@then("the answer's cost is unknown")
def step_cost_unknown(context: Context) -> None:
    answer = world(context).answer()
    assert answer.cost is None, answer.cost


@then("the API was sent {name:w} = {value:g}")
def step_sent(context: Context, name: str, value: float) -> None:
    sent = _sent_requests(world(context))
    assert sent, "the API was sent no request"
    assert all(body.get(name) == value for body in sent), [body.get(name) for body in sent]


def _sent_requests(w: World) -> list[dict[str, Any]]:
    """The bodies of the model requests the API was sent: live calls' bodies, and each request of a batch."""
    bodies: list[dict[str, Any]] = []
    for path, raw in _kept(w):
        if path in ("/v1/messages", "/v1/responses", "/v1/chat/completions"):
            bodies.append(json.loads(raw))
        elif path == "/v1/messages/batches":
            bodies.extend(entry["params"] for entry in json.loads(raw)["requests"])
        elif path == "/v1/files":
            for line in raw.split(b"\n"):
                if line.startswith(b'{"custom_id"'):
                    bodies.append(json.loads(line)["body"])
    return bodies


# -- the emulator, called directly ------------------------------------------------------------------------------------


def _sdk(context: Context, call: Callable[[Any], Coroutine[Any, Any, Any]], *, anthropic: bool) -> None:
    """Call the emulator through an SDK client, keeping what comes back (or the SDK's error) in `w.value`."""
    w = world(context)
    client = w.emu.client(api_key="sk-ant-api03-x") if anthropic else w.emu.openai_client(api_key=OPENAI_KEY)
    w.cleanups.append(client.close)

    async def go() -> Any:
        try:
            return await call(client)
        except Exception as exc:
            return exc

    w.value = w.run(go())


@when('the emulator is sent a Messages request of {thousands:d} thousand characters for "{model}"')
def step_emulator_messages(context: Context, thousands: int, model: str) -> None:
    _sdk(
        context,
        lambda c: c.messages.create(
            model=model, max_tokens=100, messages=[{"role": "user", "content": _long(thousands)}]
        ),
        anthropic=True,
    )


@when('the emulator is sent a Responses request of {thousands:d} thousand characters for "{model}"')
def step_emulator_responses(context: Context, thousands: int, model: str) -> None:
    _sdk(context, lambda c: c.responses.create(model=model, input=_long(thousands)), anthropic=False)


@when('the emulator is sent a Chat Completions request of {thousands:d} thousand characters for "{model}"')
def step_emulator_chat(context: Context, thousands: int, model: str) -> None:
    _sdk(
        context,
        lambda c: c.chat.completions.create(model=model, messages=[{"role": "user", "content": _long(thousands)}]),
        anthropic=False,
    )


@when('the emulator\'s OpenAI token counting is asked for the Responses request "{prompt}" to "{model}"')
def step_emulator_count(context: Context, prompt: str, model: str) -> None:
    world(context).witnessed["counted"] = [prompt]
    _sdk(context, lambda c: c.responses.input_tokens.count(model=model, input=prompt), anthropic=False)


@when('the emulator\'s OpenAI API is asked for the model "{model}"')
def step_emulator_model(context: Context, model: str) -> None:
    _sdk(context, lambda c: c.models.retrieve(model), anthropic=False)


@when("the emulator's OpenAI API is asked for its models")
def step_emulator_models(context: Context) -> None:
    async def listed(client: openai.AsyncOpenAI) -> list[Any]:
        return [model async for model in client.models.list()]

    _sdk(context, listed, anthropic=False)


@then('the emulator refused it with status {status:d} and the message "{message}"')
def step_emulator_refused(context: Context, status: int, message: str) -> None:
    error = world(context).value
    assert getattr(error, "status_code", None) == status, error
    assert message in str(error), str(error)


@then('the emulator refused it with status {status:d}, code "{code}" and param "{param}"')
def step_emulator_refused_code(context: Context, status: int, code: str, param: str) -> None:
    error = world(context).value
    assert isinstance(error, openai.APIStatusError), error
    assert (error.status_code, error.code, error.param) == (status, code, param), (error.status_code, error.body)


@then("the count is the input tokens a Responses call with that prompt reports")
def step_count_matches(context: Context) -> None:
    w = world(context)
    counted = w.value
    assert counted.object == "response.input_tokens", counted
    prompt = w.witnessed["counted"][0]
    _sdk(context, lambda c: c.responses.create(model="gpt-5.4-mini", input=prompt), anthropic=False)
    reply = w.value
    assert reply.usage is not None, reply
    assert reply.usage.input_tokens == counted.input_tokens, (reply.usage, counted)


@then('the model "{model}" is described as OpenAI describes a model')
def step_model_described(context: Context, model: str) -> None:
    found = world(context).value
    assert isinstance(found, openai.types.Model), found
    assert (found.id, found.object, found.owned_by) == (model, "model", "system"), found
    assert isinstance(found.created, int), found
    assert found.created > 0, found


@then('the models listed include "{first}" and "{second}", and no Claude model')
def step_models_listed(context: Context, first: str, second: str) -> None:
    models = world(context).value
    assert isinstance(models, list), models
    ids = [model.id for model in models]
    assert first in ids, ids
    assert second in ids, ids
    assert not any(name.startswith("claude") for name in ids), ids
