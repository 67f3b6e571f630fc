"""Steps for webhooks out (features/webhooks_out.feature): an OpenAI actor over the emulator in process, on a virtual
clock that stands still while a socket is waited on, notifying a recording receiver served on a loopback socket from
a thread; each notice checked with the openai SDK's Standard Webhooks verification."""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import logging
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from _openai_provider_support import MODEL, OPENAI_KEY
from _support import run_cli, set_env, world
from _webhook_support import Delivery as Notice
from _webhook_support import verified, whsec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import Actor
from lowtide.core.clock import VirtualClock
from lowtide.emulator import Emulator
from lowtide.http.server import app_in_thread

_SECRET = whsec(b"the harbour office's notice secret")


@dataclass
class Told:
    """The scenario's receiver: what it was sent and how many it still refuses."""

    clock: VirtualClock
    url: str = ""
    refusing: int = 0
    status: int = 500
    notices: list[Notice] = field(default_factory=list[Notice])
    lock: threading.Lock = field(default_factory=threading.Lock)
    emulator: Emulator | None = None
    actor: Actor | None = None
    answer: Any = None
    failure: BaseException | None = None
    prompts: list[str] = field(default_factory=list[str])
    log: list[logging.LogRecord] = field(default_factory=list[logging.LogRecord])
    taken: list[str] = field(default_factory=list[str])
    """The webhook-ids of the notices answered 2xx, in order."""
    settings: dict[str, Any] = field(default_factory=dict[str, Any])
    ledger: str = ""
    holding: bool = False
    """Whether the next notice is held open, never answered (`arrived` set once it is)."""
    arrived: threading.Event = field(default_factory=threading.Event)


class Context(StepContext, Protocol):
    told: Told


def _app(told: Told) -> Starlette:
    async def receive(request: Request) -> Response:
        body = await request.body()
        with told.lock:
            told.notices.append(Notice(told.clock.now(), body, dict(request.headers)))
            hold, told.holding = told.holding, False
        if hold:  # until its sender is killed and the scenario ends
            told.arrived.set()
            await asyncio.Event().wait()
        with told.lock:
            if told.refusing > 0:
                told.refusing -= 1
                return Response(status_code=told.status)
            told.taken.append(request.headers["webhook-id"])
        return Response(status_code=204)

    return Starlette(routes=[Route("/lowtide", receive, methods=["POST"])])


@given("the user's notice receiver on a loopback socket")
def step_receiver(context: Context) -> None:
    w = world(context)
    # Time stands still while the loop waits on the receiver's socket: each try takes no virtual time.
    told = context.told = Told(VirtualClock(wait_for_io=True))
    serving: AbstractContextManager[tuple[str, int]] = app_in_thread(_app(told))
    url, _ = serving.__enter__()
    w.cleanups.append(lambda: serving.__exit__(None, None, None))
    told.url = f"{url}/lowtide"
    told.log = w.keep_log("lowtide.webhooks.notify", logging.INFO)


@given("an OpenAI actor over the emulator notifying the receiver, its secret in LOWTIDE_NOTIFY_SECRET")
def step_actor(context: Context) -> None:
    w = world(context)
    told = context.told
    set_env(w, "LOWTIDE_NOTIFY_SECRET", _SECRET)
    told.emulator = Emulator(clock=told.clock, processing_seconds=60)
    client = told.emulator.openai_client(api_key=OPENAI_KEY)
    w.cleanups.append(client.close)
    settings = {
        "name": "berths",
        "provider": "openai",
        "model": MODEL,
        "batch_processing": "batch",
        "batch": {"coalesce_window": 0, "poll_interval": 30, "notify": {"url": told.url}},
    }
    # A ledger of the scenario's own: what a notice leaves in its outbox is this scenario's alone.
    told.settings, told.ledger = settings, str(w.path("ledger.sqlite3"))
    told.actor = Actor(settings, client=client, clock=told.clock, ledger=told.ledger)
    w.cleanups.append(told.actor.aclose)


def _renotify(context: Context, **notify: Any) -> None:
    """The actor made again with `notify`'s settings changed, as a user would edit the actor's file."""
    w = world(context)
    told = context.told
    assert told.emulator is not None
    batch = told.settings["batch"]
    told.settings = {**told.settings, "batch": {**batch, "notify": {**batch["notify"], **notify}}}
    client = told.emulator.openai_client(api_key=OPENAI_KEY)
    w.cleanups.append(client.close)
    told.actor = Actor(told.settings, client=client, clock=told.clock, ledger=told.ledger)
    w.cleanups.append(told.actor.aclose)


@given('the actor\'s notices are "{events}"')
def step_events(context: Context, events: str) -> None:
    _renotify(context, events=[event.strip() for event in events.split(",")])


@given('the actor\'s notices are "{events}", with their keys')
def step_events_with_keys(context: Context, events: str) -> None:
    _renotify(context, events=[event.strip() for event in events.split(",")], include_keys=True)


@then('the receiver got a "{kind}" notice for the key "{key}", "{state}", from the ledger\'s batch')
def step_key_notice(context: Context, kind: str, key: str, state: str) -> None:
    told = context.told
    assert told.actor is not None
    [batch] = told.actor.ledger.batches()
    data = [_verified(n)["data"] for n in told.notices if _verified(n)["type"] == kind]
    assert len(data) == 1, [n.body for n in told.notices]
    assert data[0]["key_sha256"] == hashlib.sha256(key.encode()).hexdigest(), data
    assert data[0]["state"] == state, data
    assert data[0]["batch_id"] == batch.id, data


@then('no notice holds the key "{key}"')
def step_no_key(context: Context, key: str) -> None:
    for notice in context.told.notices:
        assert f'"{key}"' not in notice.body.decode(), notice.body


@then('the notice names the key "{key}"')
def step_names_key(context: Context, key: str) -> None:
    data = _verified(context.told.notices[-1])["data"]
    assert data["key"] == key, data
    assert data["key_sha256"] == hashlib.sha256(key.encode()).hexdigest(), data


@given("the receiver holds the next notice open, never answering it")
def step_holding(context: Context) -> None:
    context.told.holding = True


_SENDER = Path(__file__).parent.parent / "support" / "notice_sender.py"
_HELD = 60.0
"""Seconds a notice's one try may take in the killed process: its hold on the notice outlasts the kill."""


@when('a process of its own asks the actor "{prompt}", and is killed (SIGKILL) while its notice is being delivered')
def step_killed_sender(context: Context, prompt: str) -> None:
    w = world(context)
    told = context.told
    told.prompts.append(prompt)
    batch = told.settings["batch"]
    notify = {**batch["notify"], "retries": 0, "backoff": 0.5, "timeout": _HELD}
    settings = {**told.settings, "batch": {**batch, "poll_interval": 0.05, "notify": notify}}
    argv = [sys.executable, str(_SENDER), json.dumps(settings), told.ledger, prompt, f"berth-{len(told.prompts)}",
            OPENAI_KEY]  # fmt: skip
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env={**os.environ})
    w.cleanups.append(lambda: process.poll() is None and (process.kill(), process.wait(30)))
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "answered", "the call was not answered"
    # A bound for a broken path: the notice comes within milliseconds of the answer.
    assert told.arrived.wait(120), "the notice never reached the receiver"
    os.kill(process.pid, signal.SIGKILL)
    assert process.wait(30) == -signal.SIGKILL


@when('a new process on the same ledger, once the killed one\'s hold has lapsed, asks "{prompt}" and closes')
def step_next_process(context: Context, prompt: str) -> None:
    """As a process started later would: its own clock (past the killed one's hold on the notice), emulator and actor,
    whose engine sweeps the outbox as it starts."""
    w = world(context)
    told = context.told
    # The killed process's hold on the notice lapses `_HELD` seconds (and its backoff) after it made it.
    told.clock = VirtualClock(time.time() + _HELD + 10, wait_for_io=True)
    told.emulator = Emulator(clock=told.clock, processing_seconds=60)
    client = told.emulator.openai_client(api_key=OPENAI_KEY)
    w.cleanups.append(client.close)
    told.actor = Actor(told.settings, client=client, clock=told.clock, ledger=told.ledger)
    w.cleanups.append(told.actor.aclose)
    step_ask(context, prompt)


@given("the receiver answers the first {count:d} notices with {status:d}")
def step_refusing(context: Context, count: int, status: int) -> None:
    context.told.refusing, context.told.status = count, status


@given("LOWTIDE_NOTIFY_SECRET is not set")
def step_no_secret(context: Context) -> None:
    set_env(world(context), "LOWTIDE_NOTIFY_SECRET", None)


@when('the actor is asked "{prompt}" and closed')
def step_ask(context: Context, prompt: str) -> None:
    told = context.told
    actor = told.actor
    assert actor is not None
    told.prompts.append(prompt)

    async def ask() -> None:
        try:
            told.answer = await actor.run(prompt, key=f"berth-{len(told.prompts)}")
        except Exception as error:
            told.failure = error
        await actor.aclose()  # waits for the notices it is still trying

    context.runner.run(ask())


@when("{minutes:d} minutes pass")
def step_minutes_pass(context: Context, minutes: int) -> None:
    context.told.clock.advance(minutes * 60)


@when("a day passes")
def step_day_passes(context: Context) -> None:
    context.told.clock.advance(24 * 3600 + 1)


@when('a new actor on the same ledger is asked "{prompt}" and closed')
def step_new_actor(context: Context, prompt: str) -> None:
    """As a process started later on the same ledger would: an actor of its own, whose engine sweeps the outbox."""
    w = world(context)
    told = context.told
    assert told.emulator is not None
    client = told.emulator.openai_client(api_key=OPENAI_KEY)
    w.cleanups.append(client.close)
    told.actor = Actor(told.settings, client=client, clock=told.clock, ledger=told.ledger)
    w.cleanups.append(told.actor.aclose)
    step_ask(context, prompt)


@when("`{command}` copies the ledger, and the actors use the copy from now on")
def step_copy(context: Context, command: str) -> None:
    """As an operator moving the ledger between two processes: the next actor opens the copy, not the ledger."""
    w = world(context)
    source = Path(context.told.ledger)
    run_cli(w, command, ledger=None, cwd=source.parent)
    context.told.ledger = str(source.parent / shlex.split(command)[-1])


@when("a bulk run of {count:d} prompts runs through the actor")
def step_bulk(context: Context, count: int) -> None:
    told = context.told
    actor = told.actor
    assert actor is not None
    told.prompts = [f"Which berth for vessel {n}?" for n in range(count)]
    run = actor.bulk(run_id="berths-of-the-day", progress="none")
    run.add_jobs(list(told.prompts))
    told.answer = context.runner.run(run.run())
    context.runner.run(actor.aclose())


def _verified(notice: Notice) -> dict[str, Any]:
    return verified(notice, _SECRET)


@then('the receiver got {count:d} notice, "{kind}", verified with the secret')
def step_one_notice(context: Context, count: int, kind: str) -> None:
    notices = context.told.notices
    assert len(notices) == count, [n.body for n in notices]
    assert all(_verified(notice)["type"] == kind for notice in notices), [n.body for n in notices]


@then("the notice names the ledger's batch, its provider and {count:d} request succeeded")
def step_names_batch(context: Context, count: int) -> None:
    told = context.told
    assert told.actor is not None
    [batch] = told.actor.ledger.batches()
    data = _verified(told.notices[-1])["data"]
    assert data["batch_id"] == batch.id, data
    assert data["provider_batch_id"] == batch.provider_batch_id, data
    assert data["provider"] == "openai", data
    assert data["counts"]["succeeded"] == count, data


@then("no notice holds the API key, the prompt or the answer")
def step_nothing_secret(context: Context) -> None:
    told = context.told
    assert told.notices, "no notice was sent"
    answers = [str(told.answer)] if not isinstance(told.answer, list) else []
    for notice in told.notices:
        text = notice.body.decode() + json.dumps(notice.headers)
        for secret in (OPENAI_KEY, _SECRET, *told.prompts, *answers):
            assert secret not in text, f"{secret[:20]}... is in a notice"


@then('the receiver got {count:d} notices, "{kind}", of one webhook-id, {first:g} then {second:g} seconds apart')
def step_retried(context: Context, count: int, kind: str, first: float, second: float) -> None:
    notices = context.told.notices
    assert len(notices) == count, [(n.at, n.body) for n in notices]
    assert len({n.headers["webhook-id"] for n in notices}) == 1, [n.headers for n in notices]
    assert all(_verified(notice)["type"] == kind for notice in notices)
    gaps = [b.at - a.at for a, b in itertools.pairwise(notices)]
    assert gaps[:2] == [first, second], gaps


@then("the actor's answer came")
def step_answer_came(context: Context) -> None:
    assert context.told.failure is None, context.told.failure
    assert context.told.answer, context.told.answer


@then('"{text}" was logged')
def step_logged(context: Context, text: str) -> None:
    lines = [record.getMessage() for record in context.told.log]
    assert any(text in line for line in lines), lines


@then('a "{kind}" notice names the run with {count:d} items succeeded, verified with the secret')
def step_run_notice(context: Context, kind: str, count: int) -> None:
    runs = [event for event in map(_verified, context.told.notices) if event["type"] == kind]
    assert len(runs) == 1, [n.body for n in context.told.notices]
    data = runs[0]["data"]
    assert data["run_id"] == "berths-of-the-day", data
    assert data["items"] == count, data
    assert data["counts"]["succeeded"] == count, data


@then('the call failed naming "{text}"')
def step_failed(context: Context, text: str) -> None:
    failure = context.told.failure
    assert failure is not None, "the call did not fail"
    assert text in str(failure), str(failure)
    assert not context.told.notices, "a notice was sent"


def _ids(notices: list[Notice]) -> list[str]:
    return [notice.headers["webhook-id"] for notice in notices]


@then("the receiver took {count:d} notices, each once, the first after {refused:d} refusals under one webhook-id")
def step_taken_once(context: Context, count: int, refused: int) -> None:
    told = context.told
    ids = _ids(told.notices)
    assert len(told.taken) == count == len(set(told.taken)), (told.taken, ids)
    first = told.taken[0]
    assert ids.count(first) == refused + 1, ids
    assert ids[: refused + 1] == [first] * (refused + 1), ids
    assert all(_verified(notice)["type"] == "batch.ended" for notice in told.notices)


@then("the receiver got {count:d} notices of the first batch's webhook-id and took none")
def step_none_taken(context: Context, count: int) -> None:
    told = context.told
    ids = _ids(told.notices)
    assert ids.count(ids[0]) == count, ids
    assert ids[0] not in told.taken, (ids, told.taken)
