"""Steps for Gemini's per-job webhooks (features/gemini_job_webhooks.feature): `lowtide webhooks` on a port chosen
first, so that the actor's jobs can name its URL (`batch_webhook_url`), and the receiver's actor the same URL as its
tokens' audience; the emulator's JWKS given in GEMINI_WEBHOOK_JWKS_URL. The rest is gemini_webhooks_steps'."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from _support import set_env, world
from gemini_webhooks_steps import _Gemini, _gemini, _settings
from step_context import Context, given, then, when

from lowtide import Actor, BatchProcessingMode, BatchTimeoutError
from lowtide.emulator import Emulator
from lowtide.emulator.gemini.emulation import GeminiEmulation
from lowtide.emulator.server import serve_in_thread

_KEY_ENV = "LOWTIDE_TEST_GEMINI_KEY"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _job_settings(g: _Gemini, **batch: Any) -> dict[str, Any]:
    return {**_settings(g.url, **batch), "provider_options": {"gemini": {"batch_webhook_url": g.receiver}}}


def _serve(context: Context, emulator: Emulator, port: int = 0) -> str:
    """The emulator's URL, served from a thread until the scenario ends or `_stop`."""
    w = world(context)
    serving = serve_in_thread(emulator, port=port)
    server = serving.__enter__()
    stops = w.witnessed.setdefault("gemini emulator stops", [])
    stops.append(lambda: serving.__exit__(None, None, None))
    w.cleanups.append(lambda: _stop(context))
    return server.url


def _stop(context: Context) -> None:
    stops = world(context).witnessed.get("gemini emulator stops", [])
    while stops:
        stops.pop()()


class _HourLater:
    """The wall clock an hour on: an emulator started again on it finds its jobs of an hour ended."""

    def now(self) -> float:
        return time.time() + 3600.0

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


@given("the emulator on a socket, its Gemini jobs taking {seconds:g} seconds, its JWKS in GEMINI_WEBHOOK_JWKS_URL")
def step_jwks_emulator(context: Context, seconds: float) -> None:
    w = world(context)
    state = Path(os.environ["LOWTIDE_LEDGER"]).parent / "gemini-emulator-state.json"
    state.unlink(missing_ok=True)
    emulator = Emulator(processing_seconds=seconds, state_file=state)
    url = _serve(context, emulator)
    set_env(w, _KEY_ENV, "gemini-test-key")
    set_env(w, "GEMINI_WEBHOOK_SECRET", None)  # per-job tokens alone: no project endpoint
    set_env(w, "GEMINI_WEBHOOK_JWKS_URL", f"{url}/_emulator/jwks/gemini")
    w.witnessed["gemini webhooks"] = [_Gemini(emulator, url, Path(os.environ["LOWTIDE_LEDGER"]))]
    w.witnessed["gemini emulator state"] = [state]


@given("a Gemini job of the actor calling `lowtide webhooks` when it ends, left running with nobody waiting on it")
def step_job_left_running(context: Context) -> None:
    w = world(context)
    g = _gemini(context)
    g.emulator.processing_seconds = 3600.0  # it ends well after the scenario, unless the emulator's clock moves on
    settings = _job_settings(g, max_wait=0.2, on_timeout="leave")
    leaving = Actor(settings, ledger=str(g.ledger))
    w.cleanups.append(leaving.aclose)

    async def ask() -> None:
        try:
            await leaving.run("When is high tide?", key="high")
        except BatchTimeoutError:
            return
        raise AssertionError("the job was answered before its caller went away")

    context.runner.run(ask())
    [job] = g.emulator.emulation(GeminiEmulation).batches.oldest_first()
    assert job.webhook_uris == (g.receiver,), job.webhook_uris


@when("the emulator stops, and is started again from its state file on its port an hour later")
def step_restart_later(context: Context) -> None:
    w = world(context)
    g = _gemini(context)
    _stop(context)
    [state] = w.witnessed["gemini emulator state"]
    g.emulator = Emulator(clock=_HourLater(), state_file=state)
    _serve(context, g.emulator, port=int(g.url.rsplit(":", 1)[1]))


@then("within a minute the emulator has sent the job's end, answered by `lowtide webhooks`")
def step_sent_soon(context: Context) -> None:
    # The emulator counts a delivery once its 2xx has come back, and the receiver answers only once the webhook is in
    # the ledger: waiting on the count, then reading the ledger, is in the order things happen. (Waiting on the ledger
    # and then reading the count raced the answer still on its way back: failed once at a load of 18.)
    sender = _gemini(context).emulator.emulation(GeminiEmulation).webhooks
    give_up = time.monotonic() + 60  # a bound for a broken path: the restarted emulator sends the job's end at once
    while sender.sent == 0:
        assert time.monotonic() < give_up, "the job's end not sent a minute after the emulator started again"
        time.sleep(0.1)
    assert sender.sent == 1, sender.sent


def _start(context: Context, settings: dict[str, Any], port: int) -> subprocess.Popen[str]:
    g = _gemini(context)
    actor_file = g.ledger.parent / "gemini-job-webhooks-actor.yaml"
    actor_file.write_text(json.dumps(settings))  # JSON is YAML
    command = [sys.executable, "-m", "lowtide", "webhooks", "--actor", str(actor_file), "--port", str(port), "--json"]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ})


@given("`lowtide webhooks` running for a Gemini actor whose jobs call it when they end")
def step_job_receiver(context: Context) -> None:
    w = world(context)
    g = _gemini(context)
    port = _free_port()
    g.receiver = f"http://127.0.0.1:{port}/webhooks/gemini"
    process = _start(context, _job_settings(g), port)
    w.cleanups.append(lambda: (process.terminate(), process.wait(30)))
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line, process.stderr.read() if process.stderr else "no output"
    assert json.loads(line)["url"].endswith(f":{port}"), line


@when('a Gemini actor whose jobs call `lowtide webhooks`, its status checks an hour apart, is asked "{prompt}"')
def step_ask_job(context: Context, prompt: str) -> None:
    w = world(context)
    g = _gemini(context)
    actor = Actor(_job_settings(g), ledger=str(g.ledger))
    w.cleanups.append(actor.aclose)
    # A bound for a broken path, never reached when it works: the poll underneath is an hour away.
    w.value = context.runner.run(asyncio.wait_for(actor.run(prompt, key="high"), 120))


@then("the job was created with `lowtide webhooks` as its own webhook, the ledger's identity in its metadata")
def step_job_webhook(context: Context) -> None:
    g = _gemini(context)
    [job] = g.emulator.emulation(GeminiEmulation).batches.oldest_first()
    assert job.webhook_uris == (g.receiver,), job.webhook_uris
    actor = Actor(_job_settings(g), ledger=str(g.ledger))
    world(context).cleanups.append(actor.aclose)
    identity = actor.ledger.identity()
    assert job.user_metadata == {"lowtide_ledger": identity}, (job.user_metadata, identity)


@given("a Gemini job of another ledger's actor calling the same `lowtide webhooks`, left running")
def step_other_ledgers_job(context: Context) -> None:
    w = world(context)
    g = _gemini(context)
    g.emulator.processing_seconds = 3600.0
    other = Actor(_job_settings(g, max_wait=0.2, on_timeout="leave"), ledger=str(g.ledger.parent / "other.sqlite3"))
    w.cleanups.append(other.aclose)

    async def ask() -> None:
        try:
            await other.run("When is high tide?", key="high")
        except BatchTimeoutError:
            return
        raise AssertionError("the job was answered before its caller went away")

    context.runner.run(ask())
    [batch] = other.ledger.batches()
    assert batch.provider_batch_id is not None
    g.job = batch.provider_batch_id


@then("this ledger holds no Gemini webhook for the other ledger's job")
def step_other_job_unrecorded(context: Context) -> None:
    g = _gemini(context)
    actor = Actor(_job_settings(g), ledger=str(g.ledger))
    world(context).cleanups.append(actor.aclose)
    assert not actor.ledger.webhook_seen("gemini", g.job), "the other ledger's job's webhook was recorded here"


@when("Gemini posts the end of a job this ledger has not recorded yet, with this ledger's identity echoed")
def step_post_unrecorded(context: Context) -> None:
    g = _gemini(context)
    actor = Actor(_job_settings(g), ledger=str(g.ledger))
    world(context).cleanups.append(actor.aclose)
    g.job = "batches/created-not-yet-recorded"
    event = {"type": "batch.succeeded", "version": "v1", "timestamp": "2026-11-29T00:00:00Z",
             "data": {"id": g.job, "user_metadata": {"lowtide_ledger": actor.ledger.identity()}}}  # fmt: skip
    tokens = g.emulator.emulation(GeminiEmulation).webhooks.tokens
    headers = tokens.headers(msg_id="wh_created_not_yet_recorded", at=time.time(), audience=g.receiver)
    g.answers.append(httpx.post(g.receiver, content=json.dumps(event).encode(), headers=headers, timeout=30))


@then("this ledger holds the Gemini webhook for that job, for its poller")
def step_unrecorded_kept(context: Context) -> None:
    g = _gemini(context)
    actor = Actor(_job_settings(g), ledger=str(g.ledger))
    world(context).cleanups.append(actor.aclose)
    assert actor.ledger.webhook_seen("gemini", g.job), "the webhook of this ledger's job was not kept"


@when("Gemini posts the job's end to `lowtide webhooks` as the job's own webhook, its metadata echoed")
def step_post_echoed(context: Context) -> None:
    g = _gemini(context)
    emulation = g.emulator.emulation(GeminiEmulation)
    job = emulation.batches.find(g.job.removeprefix("batches/"))
    event = {"type": "batch.succeeded", "version": "v1", "timestamp": "2026-11-29T00:00:00Z",
             "data": {"id": job.name, "user_metadata": job.user_metadata}}  # fmt: skip
    headers = emulation.webhooks.tokens.headers(msg_id=f"wh_{job.id}", at=time.time(), audience=g.receiver)
    g.answers.append(httpx.post(g.receiver, content=json.dumps(event).encode(), headers=headers, timeout=30))


@when("`lowtide webhooks` is started for such an actor without GEMINI_WEBHOOK_JWKS_URL")
def step_no_jwks(context: Context) -> None:
    w = world(context)
    g = _gemini(context)
    set_env(w, "GEMINI_WEBHOOK_JWKS_URL", None)
    process = _start(context, _job_settings(g), _free_port())
    w.cleanups.append(lambda: (process.terminate(), process.wait(30)))
    assert process.stdout is not None
    line = process.stdout.readline()
    w.value = {"line": line, "err": "" if line else process.stderr.read() if process.stderr else ""}


@then('it listens, verifying the jobs\' tokens against "{jwks}"')
def step_listens_with(context: Context, jwks: str) -> None:
    w = world(context)
    value = w.value
    assert value["line"], value
    assert json.loads(value["line"])["url"], value
    # The same actor's verifier, as the process built it: Google's JWKS, read only when a token comes (no network here).
    actor = Actor(_job_settings(_gemini(context)))
    w.cleanups.append(actor.aclose)
    verifier = actor.provider(BatchProcessingMode.BATCH).webhook_verifier()
    assert verifier is not None
    assert f"JWKS {jwks}" in verifier.names, verifier.names
