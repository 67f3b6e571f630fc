"""Steps of providers_apart.feature: several providers' actors behind one address and one key, each provider's calls
sent to its own API (the emulator's own counters, read over its socket), and third-party providers whose quota scopes
read alike kept apart."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any, ClassVar

import httpx2
from _support import World, names, set_env, world
from step_context import Context, given, then, when

from lowtide import (
    ActorRequest,
    ActorResponse,
    BatchProcessingMode,
    Provider,
    ProviderIds,
    ProviderOptions,
    ProviderRegistry,
    TextContent,
    Usage,
)

# The emulator's counters of the batches each provider's API created, as `GET /_emulator/stats` names them.
_STATS = {"anthropic": "created_batches", "mistral": "mistral_created_batches", "gemini": "gemini_created_batches"}
# How long (real seconds) a plugin's call waits for the other's to start: far past what two calls on one event loop
# take to start, far short of the scenario's hang guard.
_MEET_SECONDS = 10.0


def _url(w: World) -> str:
    [url] = w.witnessed["server url"]
    return str(url)


@given("every provider's API emulated behind one address, whose batches take {seconds:g} second")
@given("every provider's API emulated behind one address, whose batches take {seconds:g} seconds")
def step_one_address(context: Context, seconds: float) -> None:
    world(context).serve_emulator(processing_seconds=seconds)


def _batch_actor(w: World, provider: str, name: str, model: str, url: str, variable: str) -> None:
    """An actor that builds its own client from its address and key variable, as a program would."""
    set_env(w, variable, "one-key-for-every-provider")
    w.client = None
    w.add_actor(
        {
            "name": name, "provider": provider, "model": model, "max_tokens": 64, "batch_processing": "batch",
            "base_url": url, "api_key_env": variable,
        }
    )  # fmt: skip


@given('a batch-mode "{provider}" actor "{name}" of the model "{model}" that reaches it with the key in "{variable}"')
def step_batch_actor(context: Context, provider: str, name: str, model: str, variable: str) -> None:
    w = world(context)
    _batch_actor(w, provider, name, model, _url(w), variable)


@given(
    'a batch-mode "{provider}" actor "{name}" of the model "{model}" that reaches it as "{host}" with the key in '
    '"{variable}"'
)
def step_batch_actor_at(context: Context, provider: str, name: str, model: str, host: str, variable: str) -> None:
    """The same server reached by another name: another endpoint to lowtide, the same key."""
    w = world(context)
    url = httpx2.URL(_url(w)).copy_with(host=host)
    _batch_actor(w, provider, name, model, str(url), variable)


def _created(w: World, provider: str) -> tuple[int, Counter[str]]:
    stats = httpx2.get(f"{_url(w)}/_emulator/stats").json()
    return stats[_STATS[provider]], Counter(stats[_STATS[provider].replace("batches", "custom_ids")])


def _custom_ids(w: World, actor: str, keys: str) -> Counter[str]:
    of = w.actors[actor]
    return Counter(of.batch_codec().custom_id_for(key, of.ledger.identity()) for key in names(keys))


@then('the "{provider}" API created {count:d} batch, holding the requests of "{actor}" keyed "{keys}"')
@then('the "{provider}" API created {count:d} batches, holding the requests of "{actor}" keyed "{keys}"')
def step_created(context: Context, provider: str, count: int, actor: str, keys: str) -> None:
    w = world(context)
    batches, custom_ids = _created(w, provider)
    assert (batches, custom_ids) == (count, _custom_ids(w, actor, keys)), (batches, custom_ids)


@then(
    'the "{provider}" API created {count:d} batches, one holding the requests of "{actor}" keyed "{keys}", one those '
    'of "{other}" keyed "{other_keys}"'
)
def step_created_two(context: Context, provider: str, count: int, actor: str, keys: str, other: str, other_keys: str):
    w = world(context)
    batches, custom_ids = _created(w, provider)
    expected = _custom_ids(w, actor, keys) + _custom_ids(w, other, other_keys)
    assert (batches, custom_ids) == (count, expected), (batches, custom_ids)
    # Each actor's requests in a batch of their own: none of the batches holds both actors' requests.
    assert w.emulator is not None
    emulator = w.emulator
    held = [
        {custom_id for custom_id, _ in emulator.batch(b.id).requests} for b in emulator.anthropic.batches.oldest_first()
    ]
    assert sorted(held, key=len) == [set(_custom_ids(w, other, other_keys)), set(_custom_ids(w, actor, keys))], held


# -- two third-party providers whose scopes read alike -----------------------------------------------------------------


class _Meeting:
    """Where two plugins' calls wait for each other: each call says it started, then waits for the other's start."""

    def __init__(self) -> None:
        self.started: dict[str, asyncio.Event] = {}

    async def meet(self, me: str, other: str) -> bool:
        self.started.setdefault(me, asyncio.Event()).set()
        try:
            await asyncio.wait_for(self.started.setdefault(other, asyncio.Event()).wait(), _MEET_SECONDS)
        except TimeoutError:
            return False
        return True


def _plugin(name: str, other: str, meeting: _Meeting) -> type[Provider]:
    class GatewayProvider(Provider):
        """A third-party live provider behind a gateway: its quota scope names the gateway and key, not itself."""

        mode: ClassVar[BatchProcessingMode] = BatchProcessingMode.LIVE

        def __init__(self, options: ProviderOptions) -> None:
            self.options = options

        def quota_scope(self) -> str:
            return "gateway:shared-key"

        async def complete(self, request: ActorRequest) -> ActorResponse[Any]:
            met = await meeting.meet(name, other)
            text = f"{name} met {other}" if met else f"{name} waited alone"
            return ActorResponse[Any](
                text=text, content=[TextContent(text=text)], stop_reason="end_turn",
                usage=Usage(input_tokens=1, output_tokens=3), cost=None, model=request.model, provider=name,
                mode=self.mode, ids=ProviderIds(),
            )  # fmt: skip

    GatewayProvider.name = name
    return GatewayProvider


@given('two live plugin providers "{first}" and "{second}" that both name their quota scope "gateway:shared-key"')
def step_plugins_alike(context: Context, first: str, second: str) -> None:
    w = world(context)
    meeting = _Meeting()
    registry = w.registry = ProviderRegistry()
    registry.register(first, BatchProcessingMode.LIVE, _plugin(first, second, meeting))
    registry.register(second, BatchProcessingMode.LIVE, _plugin(second, first, meeting))
    w.witnessed["plugins"] = [first, second]


@given("a live actor of each, allowed 1 call in flight at a time")
def step_plugin_actors(context: Context) -> None:
    w = world(context)
    for name in w.witnessed["plugins"]:
        w.add_actor({"name": f"{name}-actor", "provider": name, "model": "m", "live": {"max_concurrency": 1}})


@when("each actor makes a call that waits until the other's call has started")
def step_plugin_calls(context: Context) -> None:
    w = world(context)

    async def both() -> list[ActorResponse[Any]]:
        return list(await asyncio.gather(*(w.actors[f"{name}-actor"].run("hello") for name in w.witnessed["plugins"])))

    w.answers = w.run(both())


@then("both calls were answered")
def step_plugin_answers(context: Context) -> None:
    w = world(context)
    first, second = w.witnessed["plugins"]
    assert [answer.text for answer in w.answers] == [f"{first} met {second}", f"{second} met {first}"], w.answers
