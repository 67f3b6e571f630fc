"""Steps for the emulated OpenAI API's batch webhooks (features/emulator_webhooks.feature): in process on a virtual
clock, to a recording receiver behind an ASGI transport; and over sockets, the emulator in a thread sending to
`lowtide webhooks` in a process of its own, which records the event in the ledger a waiting actor of this process
watches."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import httpx
import openai
from _openai_provider_support import MODEL, OPENAI_KEY
from _support import World, run_cli, set_env, world
from _webhook_support import Delivery, webhooks_command, whsec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import Actor
from lowtide.core.clock import VirtualClock
from lowtide.emulator import Emulator
from lowtide.emulator.server import serve_in_thread

_SECRET = whsec(b"the emulator's signing secret")
_URL = "http://receiver.invalid/webhooks/openai"


@dataclass
class Sent:
    """The in-process scenario's world: the emulator, its clock, the receiver's answers and what it received."""

    clock: VirtualClock
    emulator: Emulator
    client: openai.AsyncOpenAI
    """One client for the scenario: its first request reads the platform in a thread, which a virtual clock takes for
    idleness (time would move to the sender's wake-up meanwhile); made before any wake-up is due."""
    failing: int = 0
    deliveries: list[Delivery] = field(default_factory=list[Delivery])
    batch_id: str = ""
    created_at: float = 0.0


class Context(StepContext, Protocol):
    sent: Sent
    hook_sockets: Sockets


def _receiver(sent: Sent) -> Starlette:
    async def receive(request: Request) -> Response:
        sent.deliveries.append(Delivery(sent.clock.now(), await request.body(), dict(request.headers)))
        if sent.failing > 0:
            sent.failing -= 1
            return Response(status_code=500)
        return Response(status_code=200)

    return Starlette(routes=[Route("/webhooks/openai", receive, methods=["POST"])])


@given("an in-process emulator whose OpenAI batches take {seconds:g} seconds, sending webhooks to a recording receiver")
def step_in_process(context: Context, seconds: float) -> None:
    clock = VirtualClock()
    emulator = Emulator(clock=clock, processing_seconds=seconds)
    client = emulator.openai_client(api_key=OPENAI_KEY)
    world(context).cleanups.append(client.close)
    sent = context.sent = Sent(clock, emulator, client)
    sent.emulator.openai.webhooks.add(_URL, _SECRET, transport=httpx.ASGITransport(app=_receiver(sent)))


@given("the receiver answers the first {count:d} deliveries with 500")
def step_failing(context: Context, count: int) -> None:
    context.sent.failing = count


@given("the emulator drops its next webhook")
def step_drop(context: Context) -> None:
    context.sent.emulator.openai.webhooks.drop_next()


def _line() -> bytes:
    body = {"model": MODEL, "input": "When is high tide?", "max_output_tokens": 32}
    return json.dumps({"custom_id": "tide", "method": "POST", "url": "/v1/responses", "body": body}).encode()


@when("an OpenAI batch is created through the SDK")
def step_create(context: Context) -> None:
    sent = context.sent

    async def create() -> None:
        file = await sent.client.files.create(file=("in.jsonl", _line()), purpose="batch")
        batch = await sent.client.batches.create(
            input_file_id=file.id, endpoint="/v1/responses", completion_window="24h"
        )
        sent.batch_id, sent.created_at = batch.id, float(batch.created_at)

    context.runner.run(create())


@when("the batch is cancelled through the SDK")
def step_cancel(context: Context) -> None:
    sent = context.sent
    context.runner.run(sent.client.batches.cancel(sent.batch_id))


@when("{seconds:g} seconds pass on the webhook sender's clock")
def step_pass(context: Context, seconds: float) -> None:
    context.runner.run(context.sent.clock.sleep(seconds))


@then("the receiver got {count:d} delivery")
@then("the receiver got {count:d} deliveries")
def step_deliveries(context: Context, count: int) -> None:
    got = context.sent.deliveries
    assert len(got) == count, [(d.at, d.body) for d in got]


def _unwrap(delivery: Delivery, secret: str) -> Any:
    client = openai.OpenAI(api_key=OPENAI_KEY, base_url="http://unused.invalid")
    try:
        return client.webhooks.unwrap(delivery.body, delivery.headers, secret=secret)
    finally:
        client.close()


@then('the delivery is a "{kind}" event for the batch, accepted by the openai SDK\'s unwrap with the secret')
def step_unwrapped(context: Context, kind: str) -> None:
    [delivery] = context.sent.deliveries
    event = _unwrap(delivery, _SECRET)
    assert event.type == kind, event
    assert event.data.id == context.sent.batch_id, event
    assert delivery.headers["webhook-id"], delivery.headers


@then("the delivery came {seconds:g} seconds after the batch was created")
def step_came_at(context: Context, seconds: float) -> None:
    [delivery] = context.sent.deliveries
    assert delivery.at - context.sent.created_at == seconds, delivery.at - context.sent.created_at


@then("the delivery is refused by the openai SDK's unwrap with another secret")
def step_refused(context: Context) -> None:
    [delivery] = context.sent.deliveries
    other = whsec(b"a forger's guess")
    try:
        _unwrap(delivery, other)
    except openai.InvalidWebhookSignatureError:
        return
    raise AssertionError("a delivery signed with the emulator's secret was accepted with another")


@then(
    "the receiver got {count:d} deliveries, of one event id and one webhook-id, {first:g} then {second:g} seconds apart"
)
def step_retried(context: Context, count: int, first: float, second: float) -> None:
    got = context.sent.deliveries
    assert len(got) == count, len(got)
    assert len({json.loads(d.body)["id"] for d in got}) == 1, [d.body for d in got]
    assert len({d.headers["webhook-id"] for d in got}) == 1, [d.headers for d in got]
    assert [b.at - a.at for a, b in itertools.pairwise(got)] == [first, second], [d.at for d in got]
    for delivery in got:
        _unwrap(delivery, _SECRET)  # each try signed


@then("the emulator counts {count:d} webhook sent")
@then("the emulator counts {count:d} webhooks sent")
def step_counted(context: Context, count: int) -> None:
    emulator = context.sent.emulator if hasattr(context, "sent") else _sockets(context).emulator
    assert emulator.openai.webhooks.sent == count, emulator.openai.webhooks.sent


# -- over sockets ------------------------------------------------------------------------------------------------


@dataclass
class Sockets:
    emulator: Emulator
    url: str
    ledger: Path
    receiver: str = ""
    batch: str = ""


def _sockets(context: Context) -> Sockets:
    return context.hook_sockets


@given("the emulator served on a socket, its OpenAI batches taking {seconds:g} seconds")
def step_socket_emulator(context: Context, seconds: float) -> None:
    w = world(context)
    emulator = Emulator(processing_seconds=seconds)
    serving = serve_in_thread(emulator)
    server = serving.__enter__()
    w.cleanups.append(lambda: serving.__exit__(None, None, None))
    set_env(w, "OPENAI_BASE_URL", f"{server.url}/v1")
    set_env(w, "OPENAI_API_KEY", OPENAI_KEY)
    set_env(w, "OPENAI_WEBHOOK_SECRET", _SECRET)
    ledger = Path(os.environ["LOWTIDE_LEDGER"])
    context.hook_sockets = Sockets(emulator, server.url, ledger)


def _settings() -> dict[str, Any]:
    return {
        "name": "tides",
        "provider": "openai",
        "model": MODEL,
        "batch_processing": "batch",
        "batch": {"coalesce_window": 0, "poll_interval": 3600, "webhook_poll_interval": 3600, "watch_interval": 0.05},
    }


@given("`lowtide webhooks` running for an OpenAI actor on this scenario's ledger")
def step_webhooks_command(context: Context) -> None:
    sockets = _sockets(context)
    url = webhooks_command(world(context), sockets.ledger.parent / "webhooks-actor.yaml", _settings())
    sockets.receiver = f"{url}/webhooks/openai"


@given("the emulator told over its admin API to send OpenAI's webhooks to `lowtide webhooks`")
def step_admin(context: Context) -> None:
    sockets = _sockets(context)
    told = {"emulation": "openai", "url": sockets.receiver, "secret": _SECRET}
    answer = httpx.post(f"{sockets.url}/_emulator/webhooks", json=told, timeout=30)
    assert answer.status_code == 200, answer.text
    refused = httpx.post(f"{sockets.url}/_emulator/webhooks", json={**told, "emulation": "anthropic"}, timeout=30)
    assert refused.status_code == 400, refused.text
    assert "sends no webhooks" in refused.text, refused.text


@when('an OpenAI actor whose status checks are an hour apart is asked "{prompt}"')
def step_ask(context: Context, prompt: str) -> None:
    w: World = world(context)
    actor = Actor(_settings(), ledger=str(_sockets(context).ledger))
    w.cleanups.append(actor.aclose)
    # A bound for a broken path, never reached when it works: the poll underneath is an hour away.
    w.value = context.runner.run(asyncio.wait_for(actor.run(prompt, key="high"), 120))


@then("it is answered, having asked the batch's status {count:d} time")
def step_answered(context: Context, count: int) -> None:
    assert world(context).value, world(context).value
    asked = _sockets(context).emulator.calls["openai.batches.retrieve"]
    assert asked == count, f"the batch's status was asked {asked} times"


@then("the ledger holds the webhook for the batch")
def step_ledger_holds(context: Context) -> None:
    actor = Actor(_settings(), ledger=str(_sockets(context).ledger))
    try:
        [batch] = actor.ledger.batches()
        assert batch.provider_batch_id is not None
        assert actor.ledger.webhook_seen("openai", batch.provider_batch_id)
    finally:
        context.runner.run(actor.aclose())


@when("`lowtide emulator --webhook openai={url}` is run without OPENAI_WEBHOOK_SECRET")
def step_cli(context: Context, url: str) -> None:
    w = world(context)
    set_env(w, "OPENAI_WEBHOOK_SECRET", None)
    run_cli(w, f"lowtide emulator --webhook openai={url}", ledger=None)


@then('it exits with {code:d}, saying "{text}"')
def step_exits(context: Context, code: int, text: str) -> None:
    got = world(context).value
    assert got["code"] == code, got
    assert text in got["err"] + got["out"], got
