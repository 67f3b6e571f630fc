"""Steps for OpenAI's batch webhooks received (features/webhooks_in.feature): the receiver's app in process (the
signature headers and body are the point, not the socket), a caller's actor and the receiver's own actor (a host that
only collects) on one ledger, the emulator's OpenAI API on a virtual clock, events signed as OpenAI signs them."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import logging
import os
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx
from _openai_provider_support import MODEL, OPENAI_KEY
from _support import remember_env, world
from starlette.applications import Starlette
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import Actor
from lowtide.core.clock import VirtualClock
from lowtide.emulator import Emulator
from lowtide.errors import BatchTimeoutError
from lowtide.ledger.store import BatchRecord
from lowtide.webhooks.receiver import webhook_route

_SECRET = b"the harbour master's signing secret"
_OTHER_SECRET = b"a forger's guess"
_PROCESSING = 60.0
_SLOW_POLL = 3600.0


@dataclass
class Hooks:
    """The scenario's webhook world."""

    clock: VirtualClock
    emulator: Emulator
    caller: Actor
    receiver: httpx.AsyncClient
    log: list[logging.LogRecord]
    call: asyncio.Future[Any] | None = None
    answered_at: float | None = None
    batch: BatchRecord | None = None
    responses: list[httpx.Response] = field(default_factory=list[httpx.Response])
    sent: list[tuple[bytes, dict[str, str]]] = field(default_factory=list[tuple[bytes, dict[str, str]]])
    receiving_actor: Actor | None = None


class Context(StepContext, Protocol):
    hooks: Hooks
    hooks_settings: dict[str, Any]


def _signed(event: dict[str, Any], msg_id: str, *, secret: bytes = _SECRET, at: float | None = None,
            pad: int = 0) -> tuple[bytes, dict[str, str]]:  # fmt: skip
    """`event` as OpenAI delivers it: the Standard Webhooks headers, signed over `id.timestamp.body` (HMAC-SHA256)."""
    if pad:
        event = {**event, "padding": "x" * pad}
    body = json.dumps(event).encode()
    stamp = str(int(time.time() if at is None else at))
    mac = hmac.new(secret, f"{msg_id}.{stamp}.".encode() + body, hashlib.sha256).digest()
    headers = {
        "webhook-id": msg_id,
        "webhook-timestamp": stamp,
        "webhook-signature": f"v1,{base64.b64encode(mac).decode()}",
        "content-type": "application/json",
    }
    return body, headers


def _event(kind: str, event_id: str, batch_id: str) -> dict[str, Any]:
    return {"id": event_id, "object": "event", "created_at": int(time.time()), "type": kind, "data": {"id": batch_id}}


def _actor(context: Context, clock: VirtualClock, emulator: Emulator, **batch: Any) -> Actor:
    w = world(context)
    client = emulator.openai_client(api_key=OPENAI_KEY)
    w.cleanups.append(client.close)
    settings = {
        "name": "tides",
        "provider": "openai",
        "model": MODEL,
        "batch_processing": "batch",
        "batch": {"coalesce_window": 0, "poll_interval": _SLOW_POLL, "webhook_poll_interval": _SLOW_POLL, **batch},
    }
    actor = Actor(settings, client=client, clock=clock, ledger=os.environ["LOWTIDE_LEDGER"])
    w.cleanups.append(actor.aclose)
    return actor


@given("an emulated OpenAI API on a virtual clock whose batches take {seconds:g} seconds")
def step_emulator(context: Context, seconds: float) -> None:
    # Time stands still while a PostgreSQL ledger answers (`wait_for_io`): only the waits of the scenario move it.
    clock = VirtualClock(wait_for_io=True)
    context.hooks_settings = {"clock": clock, "emulator": Emulator(clock=clock, processing_seconds=seconds)}


@given("the OpenAI webhook secret is set")
def step_secret(context: Context) -> None:
    remember_env(context, "OPENAI_WEBHOOK_SECRET")
    os.environ["OPENAI_WEBHOOK_SECRET"] = "whsec_" + base64.b64encode(_SECRET).decode()


@given('an OpenAI actor "tides" waiting on webhooks, its status checked every 3600 seconds')
def step_caller(context: Context) -> None:
    made = context.hooks_settings
    made["caller"] = _actor(context, made["clock"], made["emulator"])


@given("the actor's webhook receiver")
def step_receiver(context: Context) -> None:
    made = context.hooks_settings
    receiving = _actor(context, made["clock"], made["emulator"])  # the receiving host's own actor, on the same ledger
    app = Starlette(routes=[webhook_route(receiving)])
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://receiver.invalid")
    world(context).cleanups.append(client.aclose)
    log = world(context).keep_log("lowtide.webhooks", logging.INFO)
    context.hooks = Hooks(made["clock"], made["emulator"], made["caller"], client, log, receiving_actor=receiving)


async def _until_polling(h: Hooks) -> BatchRecord:
    """Wait (on the virtual clock) until the caller's poller sleeps its slow interval, then for the batch to end."""
    while _SLOW_POLL not in h.clock.sleeps:
        await h.clock.sleep(1)
        if h.call is not None and h.call.done():
            h.call.result()  # (its error, if it failed)
    # Read on the loop, not in a thread: the virtual clock takes a wait on a thread for idleness, and on PostgreSQL
    # (a round trip, not SQLite's microseconds) it moved on to the poller's slow look meanwhile.
    batches = h.caller.ledger.batches()
    assert len(batches) == 1, batches
    assert batches[0].submitted_at is not None
    await h.clock.sleep(batches[0].submitted_at + _PROCESSING - h.clock.now())
    return batches[0]


@given('a caller asked "{prompt}" and went away after {seconds:g} seconds, leaving its batch running')
def step_went_away(context: Context, prompt: str, seconds: float) -> None:
    h = context.hooks
    leaving = _actor(context, h.clock, h.emulator, max_wait=seconds, on_timeout="leave")

    async def ask() -> None:
        try:
            await leaving.run(prompt, key="high")
        except BatchTimeoutError:
            pass
        else:
            raise AssertionError("the batch was answered before its caller went away")
        await leaving.aclose()  # its process ends: nobody polls the batch now

    context.runner.run(ask())
    batches = h.caller.ledger.batches()
    assert len(batches) == 1, batches
    h.batch = batches[0]
    assert h.batch.state.outstanding, h.batch


@when('OpenAI sends a signed "{kind}" event "{event_id}" for the batch {early:g} seconds before it ends')
def step_send_early(context: Context, kind: str, event_id: str, early: float) -> None:
    h = context.hooks
    assert h.batch is not None
    assert h.batch.submitted_at is not None
    context.runner.run(h.clock.sleep(h.batch.submitted_at + _PROCESSING - early - h.clock.now()))
    _post(context, *_signed(_event(kind, event_id, _batch_id(context)), f"wh_{event_id}"))


@then("the receiver collected the batch {seconds:g} seconds after it ended, having asked its status {count:d} times")
def step_collected_by_receiver(context: Context, seconds: float, count: int) -> None:
    h = context.hooks
    batch = h.batch
    assert batch is not None
    assert batch.submitted_at is not None

    async def collected() -> BatchRecord:
        # Watched in real time, never by sleeping on the virtual clock: the SDK reads the platform in a thread on a
        # client's first request, which the clock takes for idleness, and a sleeper of the scenario's own would move
        # time on meanwhile. Only the receiver's own waits move it, so its looks come exactly when it means them to.
        for _ in range(6000):  # a minute: the receiver's last look is 8.5 minutes of virtual time, gone in a moment
            now = h.caller.ledger.batch(batch.id)
            assert now is not None
            if not now.state.outstanding:
                return now
            await asyncio.sleep(0.01)
        raise AssertionError(f"the batch was not collected: {h.caller.ledger.batch(batch.id)}")

    done = context.runner.run(collected())
    assert done.collected_at is not None, done
    late = done.collected_at - (batch.submitted_at + _PROCESSING)
    assert abs(late - seconds) < 1e-6, f"collected {late:g} s after the batch ended, not {seconds:g}"
    step_status_checks(context, count)


@then('the caller, asked "{prompt}" again, is answered from the ledger without a new batch')
def step_answered_from_ledger(context: Context, prompt: str) -> None:
    h = context.hooks
    created, asked = h.emulator.openai.created_batches, h.emulator.calls["openai.batches.retrieve"]
    answer = context.runner.run(h.caller.run(prompt, key="high"))
    assert answer, answer
    assert h.emulator.openai.created_batches == created, "a new batch was made"
    assert h.emulator.calls["openai.batches.retrieve"] == asked, "the API was asked again"


@when('the actor is asked "{prompt}" and the batch ends')
def step_ask(context: Context, prompt: str) -> None:
    h = context.hooks

    async def ask() -> None:
        async def run() -> Any:
            answer = await h.caller.run(prompt, key="high")
            h.answered_at = h.clock.now()
            return answer

        h.call = asyncio.ensure_future(run())
        h.batch = await _until_polling(h)

    context.runner.run(ask())


def _post(context: Context, body: bytes, headers: dict[str, str]) -> None:
    h = context.hooks
    h.sent.append((body, headers))
    h.responses.append(context.runner.run(h.receiver.post("/webhooks/openai", content=body, headers=headers)))


def _batch_id(context: Context) -> str:
    batch = context.hooks.batch
    assert batch is not None
    assert batch.provider_batch_id is not None
    return batch.provider_batch_id


@when('OpenAI sends a signed "{kind}" event "{event_id}" for the batch')
def step_send(context: Context, kind: str, event_id: str) -> None:
    _post(context, *_signed(_event(kind, event_id, _batch_id(context)), f"wh_{event_id}"))


@when('OpenAI sends a signed "{kind}" event "{event_id}" for the batch "{batch_id}"')
def step_send_other(context: Context, kind: str, event_id: str, batch_id: str) -> None:
    _post(context, *_signed(_event(kind, event_id, batch_id), f"wh_{event_id}"))


@when('{who} sends a "{kind}" event "{event_id}" for the batch {how}')
def step_send_wrong(context: Context, who: str, kind: str, event_id: str, how: str) -> None:
    event = _event(kind, event_id, _batch_id(context))
    msg = f"wh_{event_id}"
    if how == "unsigned":
        body, headers = _signed(event, msg)
        del headers["webhook-signature"]
    elif how == "signed with another secret":
        body, headers = _signed(event, msg, secret=_OTHER_SECRET)
    elif how == "signed 10 minutes ago":
        body, headers = _signed(event, msg, at=time.time() - 600)
    elif how == "signed 10 minutes ahead":
        body, headers = _signed(event, msg, at=time.time() + 600)
    elif how == "padded past 64 KiB":
        body, headers = _signed(event, msg, pad=70_000)
    else:
        raise AssertionError(f"no such delivery: {how}")
    _post(context, body, headers)


@when('OpenAI sends the event "{event_id}" again, signed a second later')
def step_send_again(context: Context, event_id: str) -> None:
    event = json.loads(context.hooks.sent[-1][0])
    assert event["id"] == event_id
    _post(context, *_signed(event, f"wh_{event_id}", at=time.time() + 1))


@when('the same delivery of "{event_id}" is sent again')
def step_replay(context: Context, event_id: str) -> None:
    first = next(sent for sent in context.hooks.sent if json.loads(sent[0])["id"] == event_id)
    _post(context, *first)


@then('the webhook was answered {status:d} "{reason}"')
def step_answered(context: Context, status: int, reason: str) -> None:
    response = context.hooks.responses[-1]
    assert response.status_code == status, (response.status_code, response.text)
    assert reason in response.text, response.text


@then("the refusal was logged without the body")
def step_logged(context: Context) -> None:
    refused = [r.getMessage() for r in context.hooks.log if r.levelno >= logging.WARNING]
    assert refused, "nothing was logged"
    assert "Refused a webhook" in refused[-1], refused
    body = context.hooks.sent[-1][0].decode()
    assert all(part not in line for line in refused for part in ("batch.completed", _batch_id(context), body[:40]))


@then("the call was answered {seconds:g} seconds after its batch was created")
def step_answered_at(context: Context, seconds: float) -> None:
    h = context.hooks
    assert h.call is not None
    assert h.batch is not None
    assert h.batch.submitted_at is not None
    context.runner.run(asyncio.wait_for(asyncio.shield(h.call), 60))
    assert h.answered_at is not None
    waited = h.answered_at - h.batch.submitted_at
    assert abs(waited - seconds) < 1.0, f"answered {waited:g} s after the batch was created, not {seconds:g}"


@then("the API was asked the batch's status {count:d} time")
def step_status_checks(context: Context, count: int) -> None:
    asked = context.hooks.emulator.calls["openai.batches.retrieve"]
    assert asked == count, f"the batch's status was asked {asked} times"


def _events(context: Context) -> list[tuple[Any, ...]]:
    ledger = context.hooks.caller.ledger
    # Read as any reader would: the table's rows through the store's own face is what a viewer has; here, the role.
    batch = context.hooks.batch
    assert batch is not None
    assert batch.provider_batch_id is not None
    return [("seen",)] if ledger.webhook_seen("openai", batch.provider_batch_id) else []


@then('the ledger recorded the event "{event_id}" once, for the batch')
def step_recorded(context: Context, event_id: str) -> None:
    assert _events(context), "no webhook recorded for the batch"
    again = _signed(_event("batch.completed", event_id, _batch_id(context)), f"wh_{event_id}", at=time.time() + 2)
    _post(context, *again)  # a later delivery of the same event: known, so recorded once
    assert "again" in context.hooks.responses[-1].text, context.hooks.responses[-1].text


@then("the ledger recorded no webhook event")
def step_none_recorded(context: Context) -> None:
    assert not _events(context), "a webhook was recorded"
