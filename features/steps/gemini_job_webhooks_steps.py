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
from pathlib import Path
from typing import Any

from _support import set_env, world
from gemini_webhooks_steps import _Gemini, _gemini, _settings
from step_context import Context, given, then, when

from lowtide import Actor, BatchProcessingMode
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


@given("the emulator on a socket, its Gemini jobs taking {seconds:g} seconds, its JWKS in GEMINI_WEBHOOK_JWKS_URL")
def step_jwks_emulator(context: Context, seconds: float) -> None:
    w = world(context)
    emulator = Emulator(processing_seconds=seconds)
    serving = serve_in_thread(emulator)
    server = serving.__enter__()
    w.cleanups.append(lambda: serving.__exit__(None, None, None))
    set_env(w, _KEY_ENV, "gemini-test-key")
    set_env(w, "GEMINI_WEBHOOK_SECRET", None)  # per-job tokens alone: no project endpoint
    set_env(w, "GEMINI_WEBHOOK_JWKS_URL", f"{server.url}/_emulator/jwks/gemini")
    w.witnessed["gemini webhooks"] = [_Gemini(emulator, server.url, Path(os.environ["LOWTIDE_LEDGER"]))]


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


@then("the job was created with `lowtide webhooks` as its own webhook")
def step_job_webhook(context: Context) -> None:
    g = _gemini(context)
    [job] = g.emulator.emulation(GeminiEmulation).batches.oldest_first()
    assert job.webhook_uris == (g.receiver,), job.webhook_uris


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
