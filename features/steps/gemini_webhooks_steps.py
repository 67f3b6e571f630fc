"""Steps for the Gemini API's batch webhooks (features/gemini_webhooks.feature): the emulator served from a thread on a
socket, `lowtide webhooks` in a process of its own for a Gemini actor, and the actor of this process that waits on
its job, all on the scenario's ledger; deliveries forged by hand are signed as Standard Webhooks sign them."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from _gemini_tokens import job_delivery
from _support import World, set_env, world
from _webhook_support import webhooks_command, whsec
from step_context import Context, given, then, when

from lowtide import Actor
from lowtide.emulator import Emulator
from lowtide.emulator.gemini.emulation import GeminiEmulation
from lowtide.emulator.server import serve_in_thread
from lowtide.errors import BatchTimeoutError

_KEY_ENV = "LOWTIDE_TEST_GEMINI_KEY"
_WORDS = b"the project's webhook signing secret"
_SECRET = whsec(_WORDS)


@dataclass
class _Gemini:
    emulator: Emulator
    url: str
    ledger: Path
    receiver: str = ""
    job: str = ""
    """The job's name, as the ledger and the API hold it (`batches/...`)."""
    answers: list[httpx.Response] = field(default_factory=list[httpx.Response])
    posted: list[tuple[bytes, dict[str, str]]] = field(default_factory=list[tuple[bytes, dict[str, str]]])


def _gemini(context: Context) -> _Gemini:
    [found] = world(context).witnessed["gemini webhooks"]
    assert isinstance(found, _Gemini)
    return found


def _settings(url: str, **batch: Any) -> dict[str, Any]:
    return {
        "name": "tides",
        "provider": "gemini",
        "model": "gemini-2.5-flash",
        "max_tokens": 64,
        "batch_processing": "batch",
        "base_url": url,
        "api_key_env": _KEY_ENV,
        "batch": {"coalesce_window": 0, "poll_interval": 3600, "webhook_poll_interval": 3600, "watch_interval": 0.05,
                  **batch},
    }  # fmt: skip


@given("the emulator served on a socket, its Gemini jobs taking {seconds:g} seconds, GEMINI_WEBHOOK_SECRET set")
def step_socket_emulator(context: Context, seconds: float) -> None:
    w = world(context)
    emulator = Emulator(processing_seconds=seconds)
    serving = serve_in_thread(emulator)
    server = serving.__enter__()
    w.cleanups.append(lambda: serving.__exit__(None, None, None))
    set_env(w, _KEY_ENV, "gemini-test-key")
    set_env(w, "GEMINI_WEBHOOK_SECRET", _SECRET)
    w.witnessed["gemini webhooks"] = [_Gemini(emulator, server.url, Path(os.environ["LOWTIDE_LEDGER"]))]


@given("`lowtide webhooks` running for a Gemini actor on this scenario's ledger")
def step_webhooks_command(context: Context) -> None:
    g = _gemini(context)
    url = webhooks_command(world(context), g.ledger.parent / "gemini-webhooks-actor.yaml", _settings(g.url))
    g.receiver = f"{url}/webhooks/gemini"


@given("the emulator told over its admin API to send Gemini's webhooks to `lowtide webhooks`")
def step_admin(context: Context) -> None:
    g = _gemini(context)
    told = {"emulation": "gemini", "url": g.receiver, "secret": _SECRET}
    answer = httpx.post(f"{g.url}/_emulator/webhooks", json=told, timeout=30)
    assert answer.status_code == 200, answer.text


def _actor(context: Context, **batch: Any) -> Actor:
    w: World = world(context)
    g = _gemini(context)
    actor = Actor(_settings(g.url, **batch), ledger=str(g.ledger))
    w.cleanups.append(actor.aclose)
    return actor


@when('a Gemini actor whose status checks are an hour apart is asked "{prompt}"')
def step_ask(context: Context, prompt: str) -> None:
    actor = _actor(context)
    # A bound for a broken path, never reached when it works: the poll underneath is an hour away.
    world(context).value = context.runner.run(asyncio.wait_for(actor.run(prompt, key="high"), 120))


@then("it is answered, having asked the job's status {count:d} time")
def step_answered(context: Context, count: int) -> None:
    assert world(context).value, world(context).value
    asked = _gemini(context).emulator.calls["gemini.batches.get"]
    assert asked == count, f"the job's status was asked {asked} times"


@then("the emulator counts {count:d} Gemini webhook sent")
def step_counted(context: Context, count: int) -> None:
    # A delivery is counted once its 2xx is back in the emulator's thread, which may come after the receiver's ledger
    # write woke the caller (and after the caller's answer): the count is waited for, up to a bound for a broken path.
    sender = _gemini(context).emulator.emulation(GeminiEmulation).webhooks
    give_up = time.monotonic() + 60
    while sender.sent < count and time.monotonic() < give_up:
        time.sleep(0.05)
    assert sender.sent == count, sender.sent


def _seen(context: Context) -> bool:
    g = _gemini(context)
    actor = _actor(context)
    [batch] = actor.ledger.batches()
    assert batch.provider_batch_id is not None
    g.job = batch.provider_batch_id
    return actor.ledger.webhook_seen("gemini", batch.provider_batch_id)


@then("the ledger holds the Gemini webhook for the job")
def step_ledger_holds(context: Context) -> None:
    assert _seen(context), "no webhook recorded for the job"


@then("the ledger holds no Gemini webhook for the job")
def step_ledger_holds_none(context: Context) -> None:
    assert not _seen(context), "a webhook was recorded for the job"


@given("a Gemini job of the actor, left running with nobody waiting on it")
def step_left_running(context: Context) -> None:
    g = _gemini(context)
    g.emulator.processing_seconds = 3600.0  # it ends well after the scenario
    leaving = _actor(context, max_wait=0.2, on_timeout="leave")

    async def ask() -> None:
        try:
            await leaving.run("When is high tide?", key="high")
        except BatchTimeoutError:
            return
        raise AssertionError("the job was answered before its caller went away")

    context.runner.run(ask())
    [batch] = leaving.ledger.batches()
    assert batch.provider_batch_id is not None
    g.job = batch.provider_batch_id


def _signed(
    context: Context, *, secret: bytes = _WORDS, at: float | None = None, msg: str = ""
) -> tuple[bytes, dict[str, str]]:
    """A `batch.succeeded` event for the job, as the Gemini API delivers one to a project's endpoint."""
    g = _gemini(context)
    stamp = str(int(time.time() if at is None else at))
    event = {"type": "batch.succeeded", "version": "v1", "timestamp": stamp, "data": {"id": g.job}}
    body = json.dumps(event).encode()
    msg = msg or f"evt_{hashlib.sha256(body).hexdigest()[:16]}"
    mac = hmac.new(secret, f"{msg}.{stamp}.".encode() + body, hashlib.sha256).digest()
    signature = f"v1,{base64.b64encode(mac).decode()}"
    headers = {"webhook-id": msg, "webhook-timestamp": stamp, "webhook-signature": signature}
    headers["content-type"] = "application/json"
    return body, headers


def _post(context: Context, body: bytes, headers: dict[str, str]) -> None:
    g = _gemini(context)
    g.posted.append((body, headers))
    g.answers.append(httpx.post(g.receiver, content=body, headers=headers, timeout=30))


@when('{who} posts a "batch.succeeded" event for the job to `lowtide webhooks` {how}')
def step_post(context: Context, who: str, how: str) -> None:
    if how == "unsigned":
        body, headers = _signed(context)
        del headers["webhook-signature"]
    elif how == "signed with another secret":
        body, headers = _signed(context, secret=b"a forger's guess")
    elif how == "signed 10 minutes ago":
        body, headers = _signed(context, at=time.time() - 600)
    elif how == "signed now":
        body, headers = _signed(context, msg="evt_gemini_1")
    elif how.startswith("with "):  # a per-job delivery (gemini_job_webhooks.feature)
        g = _gemini(context)
        tokens = g.emulator.emulation(GeminiEmulation).webhooks.tokens
        body, headers = job_delivery(tokens, g.job, g.receiver, how.removeprefix("with "))
    else:
        raise AssertionError(f"no such delivery: {how}")
    _post(context, body, headers)


@when("the same delivery is posted again")
def step_replay(context: Context) -> None:
    _post(context, *_gemini(context).posted[-1])


@when("Gemini posts the event again, signed a second later")
def step_again(context: Context) -> None:
    _post(context, *_signed(context, at=time.time() + 1, msg="evt_gemini_1"))


@then('`lowtide webhooks` answered {status:d} "{reason}"')
def step_answer(context: Context, status: int, reason: str) -> None:
    answer = _gemini(context).answers[-1]
    assert answer.status_code == status, (answer.status_code, answer.text)
    assert reason in answer.text, answer.text
