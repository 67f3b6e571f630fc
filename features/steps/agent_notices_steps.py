"""Steps for agent_notices.feature: the example agent started with `notify`, its notices recorded by a receiver on a
loopback socket (served from a thread), each checked with the openai SDK's Standard Webhooks verification."""

from __future__ import annotations

import json
import threading
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from _support import set_env, world
from _webhook_support import Delivery, verified, whsec
from agents_steps import _examples, _log, _resume
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from step_context import Context, given, then, when

from lowtide.errors import ConfigurationError
from lowtide.http.server import app_in_thread

_SECRET = whsec(b"the fleet office's notice secret")


@dataclass
class _Receiver:
    url: str = ""
    refusing: int = 0
    sent: list[Delivery] = field(default_factory=list[Delivery])
    taken: list[Delivery] = field(default_factory=list[Delivery])
    lock: threading.Lock = field(default_factory=threading.Lock)


def _receiver(context: Context) -> _Receiver:
    [found] = world(context).witnessed["agent notices"]
    assert isinstance(found, _Receiver)
    return found


@given("the user's agent notice receiver on a loopback socket, its secret in LOWTIDE_NOTIFY_SECRET")
def step_receiver(context: Context) -> None:
    w = world(context)
    told = _Receiver()

    async def receive(request: Request) -> Response:
        delivery = Delivery(0.0, await request.body(), dict(request.headers))
        with told.lock:
            told.sent.append(delivery)
            if told.refusing > 0:
                told.refusing -= 1
                return Response(status_code=503)
            told.taken.append(delivery)
        return Response(status_code=204)

    serving: AbstractContextManager[tuple[str, int]] = app_in_thread(
        Starlette(routes=[Route("/agents", receive, methods=["POST"])])
    )
    url, _ = serving.__enter__()
    w.cleanups.append(lambda: serving.__exit__(None, None, None))
    told.url = f"{url}/agents"
    w.witnessed["agent notices"] = [told]
    set_env(w, "LOWTIDE_NOTIFY_SECRET", _SECRET)


@given("the agent notice receiver refuses its first notice with 503")
def step_refusing(context: Context) -> None:
    _receiver(context).refusing = 1


@given("LOWTIDE_NOTIFY_SECRET is not set for the agent notices")
def step_no_secret(context: Context) -> None:
    set_env(world(context), "LOWTIDE_NOTIFY_SECRET", None)


@when('the agent "{name}" is started as the run "{run_id}", notifying the receiver')
def step_start(context: Context, name: str, run_id: str) -> None:
    w = world(context)
    found = getattr(_examples(), name)
    before, found.clock = found.clock, w.clock
    w.cleanups.append(lambda: setattr(found, "clock", before))
    w.error = None
    notify = {"url": _receiver(context).url}
    try:
        w.value = w.run(found.start("flaky test", str(_log(w)), run_id=run_id, ledger=w.ledger(), notify=notify))
    except ConfigurationError as exc:
        w.error = exc


@when("{seconds:d} seconds pass and the agent runs are resumed once")
def step_seconds_pass(context: Context, seconds: int) -> None:
    w = world(context)
    w.clock.advance(seconds)
    _resume(w)


@when('the run "{run_id}" is stopped')
def step_stop(context: Context, run_id: str) -> None:
    from lowtide.agents.fleet import stop_run

    w = world(context)
    [client] = w.witnessed["agent client"]
    w.run(stop_run(w.ledger(), run_id, clock=w.clock, client=client))


def _events(deliveries: list[Delivery]) -> list[dict[str, Any]]:
    return [verified(delivery, _SECRET) for delivery in deliveries]


@then('the receiver took "{kinds}" for the run "{run_id}", each verified, each under its own webhook-id')
def step_took(context: Context, kinds: str, run_id: str) -> None:
    taken = _receiver(context).taken
    events = _events(taken)
    assert [event["type"] for event in events] == [kind.strip() for kind in kinds.split(",")], events
    assert all(event["data"]["run_id"] == run_id for event in events), events
    assert all(event["data"]["agent"] == "lowtide_agent_examples:triage" for event in events), events
    assert all(event["data"]["state"] == event["type"].removeprefix("agent.") for event in events), events
    ids = [delivery.headers["webhook-id"] for delivery in taken]
    assert len(set(ids)) == len(ids), ids


@then("no agent notice holds the run's arguments or its result")
def step_nothing_given(context: Context) -> None:
    w = world(context)
    run = w.ledger().agent_journal.agent_run("n-1")
    assert run is not None
    assert run.result is not None
    result = json.loads(run.result)
    for delivery in _receiver(context).sent:
        text = delivery.body.decode()
        for kept in ("flaky test", str(_log(w)), str(result)[:40]):
            assert kept not in text, f"{kept!r} is in a notice: {text}"


@then('the receiver was sent the run "{run_id}"\'s first notice, "{kind}", twice under one webhook-id, and took it the'
      " second time")  # fmt: skip
def step_sent_twice(context: Context, run_id: str, kind: str) -> None:
    told = _receiver(context)
    ids = [delivery.headers["webhook-id"] for delivery in told.sent]
    assert ids[0] == ids[1] == told.taken[0].headers["webhook-id"], ids
    assert ids.count(ids[0]) == 2, ids
    first = verified(told.taken[0], _SECRET)
    assert (first["type"], first["data"]["run_id"]) == (kind, run_id), first


@then('the start failed naming "{text}"')
def step_start_failed(context: Context, text: str) -> None:
    error = world(context).error
    assert error is not None, "the start did not fail"
    assert text in str(error), str(error)


@then('the ledger holds no run "{run_id}"')
def step_no_run(context: Context, run_id: str) -> None:
    assert world(context).ledger().agent_journal.agent_run(run_id) is None
