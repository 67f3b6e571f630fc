"""Steps for `lowtide serve`'s client keys carrying a team and project: the served actor and the emulator each on a
loopback socket, the official `anthropic` SDK as the clients, the spend read back from the scenario's ledger."""

from __future__ import annotations

import asyncio
import os
from contextlib import ExitStack
from decimal import Decimal
from typing import Any, Protocol

import anthropic
from _support import run_cli, world
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.actor import Actor
from lowtide.http.server import app_in_thread
from lowtide.serve.app import build_app
from lowtide.serve.keys import ClientKey

_MODEL = "claude-haiku-5-5"
_UPSTREAM_ENV = "LOWTIDE_SERVE_TEST_UPSTREAM_KEY"


class Context(StepContext, Protocol):
    emulator_url: str
    serve_stack: ExitStack
    spend_served_url: str
    spend_served: list[Any]
    """Each call's answer, or the error the SDK raised, in order."""
    spend_refusal: str


@given(
    'lowtide serve in {mode:w} mode for an actor of team "{team}", with the client key "{owned}" of team "{key_team}"'
    ' and project "{project}" and the plain client key "{plain}"'
)
def step_serve_owned(
    context: Context, mode: str, team: str, owned: str, key_team: str, project: str, plain: str
) -> None:
    os.environ[_UPSTREAM_ENV] = "sk-upstream-never-shown"
    context.cleanups.append(lambda: os.environ.pop(_UPSTREAM_ENV, None))
    actor = Actor(
        {
            "name": "served",
            "provider": "anthropic",
            "model": _MODEL,
            "max_tokens": 64,
            "batch_processing": "batch",
            "team": team,
            "base_url": context.emulator_url,
            "api_key_env": _UPSTREAM_ENV,
            "batch": {"poll_interval": 0.05, "coalesce_window": 0.05},
        }
    )
    context.cleanups.append(actor.aclose)
    keys: list[str | ClientKey] = [ClientKey(owned, team=key_team, project=project), plain]
    url, _ = context.serve_stack.enter_context(app_in_thread(build_app(actor, client_keys=keys, mode=mode)))
    context.spend_served_url = url
    context.spend_served = []


@when('the SDK sends "{prompt}" to lowtide serve with the client key "{key}"')
def step_send(context: Context, prompt: str, key: str) -> None:
    async def send() -> Any:
        async with anthropic.AsyncAnthropic(base_url=context.spend_served_url, api_key=key, max_retries=0) as client:
            try:
                return await client.messages.create(
                    model=_MODEL, max_tokens=64, messages=[{"role": "user", "content": prompt}]
                )
            except anthropic.APIStatusError as error:
                return error

    context.spend_served.append(asyncio.run(send()))


@then("both served calls are answered")
def step_both(context: Context) -> None:
    assert [type(a).__name__ for a in context.spend_served] == ["Message", "Message"], context.spend_served


@then("the second served call is answered")
def step_second(context: Context) -> None:
    assert type(context.spend_served[1]).__name__ == "Message", context.spend_served


@then('the first served call was refused with status {status:d}, saying "{text}"')
def step_first_refused(context: Context, status: int, text: str) -> None:
    error = context.spend_served[0]
    assert isinstance(error, anthropic.APIStatusError), error
    assert error.status_code == status, (error.status_code, str(error))
    assert text in str(error), str(error)


@then(
    'the ledger\'s spend shows 1 request of team "{team}" and project "{project}", and 1 of team "{other}" and no'
    " project"
)
def step_two_owners(context: Context, team: str, project: str, other: str) -> None:
    lines = world(context).ledger().spending.spend_lines()
    owners = sorted((line.team or "", line.project or "", line.requests) for line in lines)
    assert owners == sorted([(team, project, 1), (other, "", 1)]), lines
    assert all(line.spent_usd > 0 for line in lines), lines


@then('the ledger\'s spend shows 1 request of team "{team}" and no project')
def step_one_owner(context: Context, team: str) -> None:
    lines = world(context).ledger().spending.spend_lines()
    assert [(line.team, line.project, line.requests) for line in lines] == [(team, None, 1)], lines
    assert sum((line.reserved_usd for line in lines), Decimal(0)) == 0, lines


@when('`lowtide serve --client-key-env` is given "{spec}"')
def step_serve_cli(context: Context, spec: str) -> None:
    w = world(context)
    actor_file = w.path("served.yaml")
    actor_file.write_text(f"name: served\nmodel: {_MODEL}\nmax_tokens: 64\n")
    os.environ["LOWTIDE_TEST_KEY"] = "key-from-env"
    context.cleanups.append(lambda: os.environ.pop("LOWTIDE_TEST_KEY", None))
    run_cli(w, f"lowtide serve --actor {actor_file} --client-key-env {spec} --port 0", ledger=None)
    result: dict[str, Any] = w.value
    assert result["code"] == 2, result
    context.spend_refusal = result["out"] + result["err"]


@then('it is refused before serving, saying "{text}"')
def step_cli_refused(context: Context, text: str) -> None:
    assert text in context.spend_refusal, context.spend_refusal
    assert "key-from-env" not in context.spend_refusal, context.spend_refusal
