"""Steps for a Gemini webhook receiver's verifier (`providers.gemini.webhooks.GeminiWebhooks`): made from the
environment as `lowtide webhooks` makes it, and sent deliveries signed as the Gemini API signs them."""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from typing import Protocol

from _support import set_env, world
from _webhook_support import whsec
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.errors import ConfigurationError
from lowtide.providers.gemini.webhooks import WEBHOOK_SECRET_ENV, GeminiWebhooks
from lowtide.webhooks.events import BatchEvent, WebhookRefused

_WORDS = b"the project's signing secret, for refusals"


class Context(StepContext, Protocol):
    gemini_verifier: GeminiWebhooks
    gemini_made: GeminiWebhooks | ConfigurationError
    gemini_answer: BatchEvent | WebhookRefused | None


@given("the Gemini webhook secret in the environment is {secret}")
def step_secret_env(context: Context, secret: str) -> None:
    set_env(world(context), WEBHOOK_SECRET_ENV, None if secret == "unset" else secret.strip('"'))


@when("a Gemini webhook receiver is made from the environment")
def step_made(context: Context) -> None:
    try:
        context.gemini_made = GeminiWebhooks()
    except ConfigurationError as refused:
        context.gemini_made = refused


@then('the Gemini receiver is refused with a ConfigurationError naming the field "{field}" and saying "{words}"')
def step_refused(context: Context, field: str, words: str) -> None:
    made = context.gemini_made
    assert isinstance(made, ConfigurationError), made
    assert made.field == field, made.field
    assert words in str(made), str(made)


@given("a Gemini webhook receiver with the project's secret")
def step_receiver(context: Context) -> None:
    context.gemini_verifier = GeminiWebhooks(whsec(_WORDS))


def _verify(context: Context, body: bytes, headers: dict[str, str]) -> None:
    try:
        context.gemini_answer = context.gemini_verifier.verify(body, headers, tolerance=300)
    except WebhookRefused as refused:
        context.gemini_answer = refused


@when("the Gemini receiver is sent, signed with that secret, the body {body}")
def step_sent(context: Context, body: str) -> None:
    raw, stamp, msg = body.encode(), str(int(time.time())), "evt_refusals_1"
    mac = hmac.new(_WORDS, f"{msg}.{stamp}.".encode() + raw, hashlib.sha256).digest()
    headers = {
        "webhook-id": msg,
        "webhook-timestamp": stamp,
        "webhook-signature": f"v1,{base64.b64encode(mac).decode()}",
    }
    _verify(context, raw, headers)


@when("the Gemini receiver is sent a per-job token for the body {body}")
def step_token(context: Context, body: str) -> None:
    token = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJqb2IifQ.c2lnbmF0dXJl"  # a JWT's shape: three base64url parts
    headers = {"webhook-id": "evt_token_1", "webhook-timestamp": str(int(time.time())), "webhook-signature": token}
    _verify(context, body.encode(), headers)


@then("the Gemini receiver answered {answer}")
def step_answered(context: Context, answer: str) -> None:
    got = context.gemini_answer
    if answer == "nothing: not a batch's end":
        assert got is None, got
    elif answer.startswith("the "):
        kind, job = answer.removeprefix("the ").split(" of the job ")
        assert isinstance(got, BatchEvent), got
        assert (got.kind, got.provider_batch_id) == (kind, job.strip('"')), got
    else:
        status, reason = answer.split(": ", 1)
        assert isinstance(got, WebhookRefused), got
        assert (got.status, got.reason) == (int(status), reason), (got.status, got.reason)


@then('the receiver names what it verifies with as "{names}"')
def step_names(context: Context, names: str) -> None:
    assert context.gemini_verifier.names == names, context.gemini_verifier.names
