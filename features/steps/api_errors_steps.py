"""Steps for API failures: unreachable and slow APIs, and what lowtide's errors keep of the API's answer."""

from __future__ import annotations

import errno
import re
import socket
from typing import Any

import httpx2
from _support import DroppingTransport, RetryAfterDateTransport, unreachable_api, world
from step_context import Context, given, then, when

from lowtide import APIError, BatchRequestErrored, RateLimitError


def _use_transport(context: Context, transport: httpx2.AsyncBaseTransport, **options: Any) -> None:
    w = world(context)
    w.client = w.client_over(transport, **options)


@given("an emulated Anthropic API that takes request bodies of at most {limit:d} bytes")
def step_emulator_small_bodies(context: Context, limit: int) -> None:
    world(context).start_emulator(max_request_bytes=limit)


@given("an Anthropic API whose connections are refused")
def step_api_refuses(context: Context) -> None:
    refused = ConnectionRefusedError(errno.ECONNREFUSED, "Connect call failed")
    _use_transport(context, unreachable_api(httpx2.ConnectError, cause=refused, tried=world(context).tried))


@given("an Anthropic API whose host name does not resolve")
def step_api_unknown_host(context: Context) -> None:
    unknown = socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    _use_transport(context, unreachable_api(httpx2.ConnectError, cause=unknown, tried=world(context).tried))


@given("an Anthropic API whose connections drop mid-call")
def step_api_drops(context: Context) -> None:
    reset = ConnectionResetError(errno.ECONNRESET, "Connection reset by peer")
    _use_transport(context, unreachable_api(httpx2.ReadError, cause=reset, tried=world(context).tried))


@then('"{call}" was tried {times:d} times, {waits} seconds apart on the clock')
def step_tried(context: Context, call: str, times: int, waits: str) -> None:
    w = world(context)
    assert w.tried.count(call) == times, w.tried
    expected = [float(wait) for wait in re.findall(r"[0-9.]+", waits)]
    assert w.clock.sleeps[-len(expected) :] == expected, w.clock.sleeps


@given("an Anthropic API that never answers in time")
def step_api_times_out(context: Context) -> None:
    _use_transport(context, unreachable_api(httpx2.ReadTimeout), timeout=0.5)


@given("the connection will drop on the next status check of a batch")
def step_drop_status_check(context: Context) -> None:
    _use_transport(context, DroppingTransport(world(context).transport()))


@given("the API gives its retry-after as an HTTP date")
def step_retry_after_date(context: Context) -> None:
    _use_transport(context, RetryAfterDateTransport(world(context).transport()))


@when("the actor is asked a prompt of {chars:d} characters")
def step_ask_long(context: Context, chars: int) -> None:
    w = world(context)
    w.response = w.attempt_async(lambda: w.current_actor().run("x" * chars))


@then('the API error says "{message}" with the error type "{error_type}"')
def step_api_error_says(context: Context, message: str, error_type: str) -> None:
    error = world(context).failure()
    assert isinstance(error, APIError), error
    assert (error.message, error.error_type) == (message, error_type), (error.message, error.error_type)
    assert str(error).startswith(message), str(error)


@then("the rate limit error asks to wait {seconds:g} seconds and says it is retryable")
def step_rate_limit(context: Context, seconds: float) -> None:
    error = world(context).failure()
    assert isinstance(error, RateLimitError), error
    assert error.retry_after == seconds, (error.retry_after, error.retryable)
    assert error.retryable, (error.retry_after, error.retryable)


@then("the rate limit error does not say how long to wait")
def step_rate_limit_no_wait(context: Context) -> None:
    error = world(context).failure()
    assert isinstance(error, RateLimitError), error
    assert error.retry_after is None, error.retry_after


@then('the batch request error has the type "{error_type}" and says "{message}"')
def step_batch_request_error(context: Context, error_type: str, message: str) -> None:
    error = world(context).failure()
    assert isinstance(error, BatchRequestErrored), error
    assert error.error_type == error_type, (error.error_type, error.api_message)
    assert message in error.api_message, (error.error_type, error.api_message)


@then("the error has no status code and no request id")
def step_no_status(context: Context) -> None:
    error = world(context).failure()
    assert isinstance(error, APIError), error
    assert error.status_code is None, (error.status_code, error.request_id)
    assert error.request_id is None, (error.status_code, error.request_id)


@when("each of lowtide's error classes is pickled and read back")
def step_pickle_error_classes(context: Context) -> None:
    import pickle

    import lowtide.errors

    kinds = [getattr(lowtide.errors, name) for name in lowtide.errors.__all__]
    world(context).asked["error classes"] = [
        (kind, f"{kind.__module__}.{kind.__qualname__}", pickle.loads(pickle.dumps(kind))) for kind in kinds
    ]


@then('each comes back as itself, named "lowtide.errors.<its name>" as a journal names it')
def step_error_classes_named(context: Context) -> None:
    read: list[tuple[type, str, object]] = world(context).asked["error classes"]
    wrong = [
        (named, back)
        for kind, named, back in read
        if back is not kind or named != f"lowtide.errors.{kind.__qualname__}"
    ]
    assert len(read) >= 30, read
    assert not wrong, wrong
