"""Steps for `lowtide serve`: the server and a socket emulator each on a loopback port in a background thread, and the
official `anthropic` SDK (and plain HTTP) as its clients."""

from __future__ import annotations

import asyncio
import os
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any, Protocol

import anthropic
import httpx
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.actor import Actor
from lowtide.emulator.emulator import Emulator
from lowtide.emulator.server import serve_in_thread
from lowtide.http.server import app_in_thread
from lowtide.serve.app import build_app


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    emulator_url: str
    serve_stack: ExitStack
    served: Served


_MODEL = "claude-haiku-5-5"
_UPSTREAM_ENV = "LOWTIDE_SERVE_TEST_UPSTREAM_KEY"


@dataclass
class Served:
    emulator: Emulator
    url: str = ""
    answers: list[Any] = field(default_factory=list[Any])
    events: list[str] = field(default_factory=list[str])
    error: BaseException | None = None
    http: httpx.Response | None = None


def _served(context: Context) -> Served:
    return context.served


def _client(context: Context, key: str = "local-secret", **options: Any) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(base_url=_served(context).url, api_key=key, max_retries=0, **options)


async def _ask(context: Context, prompt: str, **options: Any) -> Any:
    async with _client(context) as client:
        return await client.messages.create(
            model=_MODEL, max_tokens=64, messages=[{"role": "user", "content": prompt}], **options
        )


@given("an emulator behind lowtide serve, on a socket")
def emulator_on_socket(context: Context) -> None:
    stack = ExitStack()
    context.cleanups.append(stack.close)
    running = stack.enter_context(serve_in_thread(Emulator(processing_seconds=0)))
    context.served = Served(emulator=running.emulator)
    context.serve_stack = stack
    context.emulator_url = running.url


@given('lowtide serve runs in a background thread with client key "{key}"')
def serve_in_background(context: Context, key: str) -> None:
    os.environ[_UPSTREAM_ENV] = "sk-upstream-never-shown"
    context.cleanups.append(lambda: os.environ.pop(_UPSTREAM_ENV, None))
    actor = Actor(
        {
            "name": "served",
            "provider": "anthropic",
            "model": _MODEL,
            "max_tokens": 64,
            "batch_processing": "batch",
            "base_url": context.emulator_url,
            "api_key_env": _UPSTREAM_ENV,
            "batch": {"poll_interval": 0.05, "coalesce_window": 0.2},
        }
    )
    app = build_app(actor, client_keys=[key])
    url, _ = context.serve_stack.enter_context(app_in_thread(app))
    _served(context).url = url


@when("{count:d} different requests are sent at once to lowtide serve")
def concurrent_requests(context: Context, count: int) -> None:
    async def all_at_once() -> list[Any]:
        return await asyncio.gather(*(_ask(context, f"Question number {n}") for n in range(count)))

    _served(context).answers = context.runner.run(all_at_once())


@when('the request "{prompt}" is sent to lowtide serve')
def one_request(context: Context, prompt: str) -> None:
    _served(context).answers.append(context.runner.run(_ask(context, prompt)))


@when('the request "{prompt}" is sent to lowtide serve with Idempotency-Key "{key}"')
def keyed_request(context: Context, prompt: str, key: str) -> None:
    try:
        answer = context.runner.run(_ask(context, prompt, extra_headers={"Idempotency-Key": key}))
    except anthropic.APIStatusError as error:
        _served(context).error = error
    else:
        _served(context).answers.append(answer)


@when('a request is sent to lowtide serve with the client key "{key}"')
def wrong_key(context: Context, key: str) -> None:
    async def attempt() -> None:
        async with _client(context, key) as client:
            await client.messages.create(model=_MODEL, max_tokens=64, messages=[{"role": "user", "content": "Hi"}])

    try:
        context.runner.run(attempt())
    except anthropic.APIStatusError as error:
        _served(context).error = error


@when('a request is sent to lowtide serve with the header "Authorization: Bearer {key}"')
def bearer_request(context: Context, key: str) -> None:
    body = {"model": _MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}]}
    headers = {"Authorization": f"Bearer {key}", "anthropic-version": "2023-06-01"}
    _served(context).http = httpx.post(f"{_served(context).url}/v1/messages", json=body, headers=headers, timeout=30)


@when("a request without max_tokens is sent to lowtide serve over HTTP")
def bad_request(context: Context) -> None:
    body = {"model": _MODEL, "messages": [{"role": "user", "content": "Hi"}]}
    headers = {"x-api-key": "local-secret", "anthropic-version": "2023-06-01"}
    _served(context).http = httpx.post(f"{_served(context).url}/v1/messages", json=body, headers=headers, timeout=30)


@when('the request "{prompt}" is streamed from lowtide serve with the SDK\'s messages.stream')
def streamed_request(context: Context, prompt: str) -> None:
    async def stream() -> tuple[list[str], Any]:
        async with (
            _client(context) as client,
            client.messages.stream(
                model=_MODEL, max_tokens=64, messages=[{"role": "user", "content": prompt}]
            ) as events,
        ):
            seen = [event.type async for event in events]
            return seen, await events.get_final_message()

    seen, final = context.runner.run(stream())
    _served(context).events = seen
    _served(context).answers.append(final)


@then("all {count:d} served requests are answered with a message")
def all_answered(context: Context, count: int) -> None:
    answers = _served(context).answers
    assert len(answers) == count, answers
    assert all(answer.type == "message" and answer.content[0].text for answer in answers), answers
    assert len({answer.id for answer in answers}) == count


@then("behind lowtide serve the emulator created {batches:d} batch(es) holding {requests:d} request(s)")
def created(context: Context, batches: int, requests: int) -> None:
    emulator = _served(context).emulator
    assert emulator.created_batches == batches, emulator.created_batches
    assert sum(emulator.created_custom_ids.values()) == requests, emulator.created_custom_ids
    assert emulator.calls["messages.create"] == 0, emulator.calls


@then("both served answers are the same message")
def same_message(context: Context) -> None:
    first, second = _served(context).answers
    assert first.model_dump() == second.model_dump(), (first, second)


@then('the SDK raises the authentication error of lowtide serve with status {status:d} and type "{kind}"')
def refused(context: Context, status: int, kind: str) -> None:
    error = _served(context).error
    assert isinstance(error, anthropic.AuthenticationError), error
    assert error.status_code == status
    assert error.body == {"type": "error", "error": {"type": kind, "message": "invalid x-api-key"}}, error.body


@then('the SDK raises a bad request error from lowtide serve saying "{words}"')
def bad_request_error(context: Context, words: str) -> None:
    error = _served(context).error
    assert isinstance(error, anthropic.BadRequestError), error
    assert error.type == "invalid_request_error", error
    assert words in error.message, error


@then("lowtide serve answers status {status:d} with a message")
def http_message(context: Context, status: int) -> None:
    response = _served(context).http
    assert response is not None
    assert response.status_code == status, response.text
    assert response.json()["type"] == "message"


@then('lowtide serve answers status {status:d} with error type "{kind}"')
def http_error(context: Context, status: int, kind: str) -> None:
    response = _served(context).http
    assert response is not None
    assert response.status_code == status, response.text
    body = response.json()
    assert body["type"] == "error", body
    assert body["error"]["type"] == kind, body
    assert "max_tokens" in body["error"]["message"], body


@then("the served stream's events are {names}")
def stream_events(context: Context, names: str) -> None:
    seen = [name for name in _served(context).events if name != "text"]  # the SDK's own event beside each delta
    distinct = [name for index, name in enumerate(seen) if index == 0 or name != seen[index - 1]]
    assert distinct == [name.strip() for name in names.split(",")], seen


@then("the served stream's final message has the text of the batch answer")
def streamed_text(context: Context) -> None:
    final = _served(context).answers[-1]
    assert final.stop_reason == "end_turn", final
    assert final.content, final
    assert final.content[0].text, final
    assert final.usage.output_tokens > 0, final
