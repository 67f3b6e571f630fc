"""Steps for features/bedrock_requests.feature: what a Bedrock actor sends to Converse (read from the emulated
account's record of the bodies it received) and how Converse's answers, whole or streamed, are read back."""

from __future__ import annotations

import importlib
import json
from typing import Any

from _support import set_env, world
from boto3.session import Session
from step_context import Context, given, then, when

from lowtide import BatchProcessingMode
from lowtide.emulator.bedrock.emulation import BedrockEmulation
from lowtide.providers import response_of
from lowtide.providers.bedrock.answers import answer_and_json
from lowtide.providers.bedrock.live import BedrockProvider, _streamed

_MISSING = object()
_MODEL = "amazon.nova-micro-v1:0"


def _at(value: Any, dotted: str) -> Any:
    """`value` at the dotted path (list items by their index); `_MISSING` where there is nothing."""
    for part in dotted.split("."):
        if isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            return _MISSING
    return value


def _check(found: Any, table: Any) -> None:
    for row in table:
        actual = _at(found, row["field"])
        expected = json.loads(row["json"])
        if expected is None:
            assert actual is _MISSING or actual is None, f"{row['field']} is {actual!r}, not absent"
        else:
            assert actual == expected, f"{row['field']} is {actual!r}, not {expected!r}"


@then("Converse received these fields:")
def step_converse_received(context: Context) -> None:
    """The last Converse body the account received (a field whose JSON is `null` was not sent)."""
    received = world(context).emu.emulation(BedrockEmulation).conversations
    assert received, "Converse received nothing"
    _check(received[-1], context.table)


@then("the Bedrock answer's thinking is signed")
def step_thinking_signed(context: Context) -> None:
    response = world(context).answer()
    [thinking] = [block for block in response.content if block.type == "thinking"]
    signature = getattr(thinking, "signature", None)
    assert isinstance(signature, str), thinking
    assert len(signature) > 20, thinking


@when("Bedrock's ConverseStream ends after a text block, before its messageStop")
def step_stream_cut(context: Context) -> None:
    events = [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "High tide is at"}}},
        {"contentBlockStop": {"contentBlockIndex": 0}},
    ]

    def converse_stream(**body: object) -> dict[str, object]:
        return {"ResponseMetadata": {"RequestId": "req-1"}, "stream": iter(events)}

    w = world(context)
    w.value = w.attempt(lambda: _streamed(converse_stream, {"modelId": "amazon.nova-micro-v1:0"}))


@when("Bedrock's Converse answers with:")
def step_converse_answers(context: Context) -> None:
    w = world(context)
    body = json.loads(context.text or "{}")
    ids = {"batch_id": None, "custom_id": "c1", "request_id": "r1"}
    held, stored = answer_and_json(body, model="amazon.nova-micro-v1:0", mode=BatchProcessingMode.LIVE, ids=ids)
    response_of(held)  # the answer is one lowtide can hand over: it validates as an ActorResponse
    w.value = stored


@then("the Bedrock answer has these fields:")
def step_bedrock_answer_fields(context: Context) -> None:
    _check(world(context).value, context.table)


# -- the clients: credentials, sessions, endpoints ---------------------------------------------------------------


def _build(w: Any, settings: dict[str, Any], **options: Any) -> Any:
    """The actor's live provider, built (nothing is sent); a `ConfigurationError` kept for the Then steps."""
    from lowtide import ConfigurationError

    w.error = None
    try:
        actor = w.add_actor({"name": "built", "provider": "bedrock", "model": _MODEL, "max_tokens": 64, **settings},
                            **options)  # fmt: skip
        return actor.provider()
    except ConfigurationError as exc:
        w.error = exc
        return None


@given("no AWS credentials are found anywhere")
def step_no_credentials(context: Context) -> None:
    w = world(context)
    for variable in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                     "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                     "AWS_WEB_IDENTITY_TOKEN_FILE"):  # fmt: skip
        set_env(w, variable, None)
    set_env(w, "AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/lowtide-aws-credentials")
    set_env(w, "AWS_CONFIG_FILE", "/nonexistent/lowtide-aws-config")
    set_env(w, "AWS_EC2_METADATA_DISABLED", "true")


@when("a live Bedrock actor is built with a client that is not a boto3 session")
def step_not_a_session(context: Context) -> None:
    _build(world(context), {}, client="not a session")


@given('a Bedrock actor "{name}" given its own boto3 session')
def step_own_session(context: Context, name: str) -> None:
    w = world(context)
    [url] = w.witnessed["server url"]
    w.add_actor(
        {"name": name, "provider": "bedrock", "model": _MODEL, "max_tokens": 64, "base_url": str(url)},
        client=Session(),
    )


@when('a live Bedrock actor is built for "{url}"')
def step_built_for(context: Context, url: str) -> None:
    w = world(context)
    w.value = _build(w, {"base_url": url})
    w.succeeded()


@then('its calls go to "{endpoint}" in the region {region}')
def step_calls_go(context: Context, endpoint: str, region: str) -> None:
    provider = world(context).value
    assert isinstance(provider, BedrockProvider), provider
    runtime: Any = provider._clients.runtime  # boto3's client: its `meta` is not in the typed face lowtide keeps
    assert runtime.meta.endpoint_url == endpoint, runtime.meta.endpoint_url
    assert runtime.meta.region_name == region, runtime.meta.region_name


@then('asking {module} for "{name}" raises an AttributeError naming it')
def step_no_attribute(context: Context, module: str, name: str) -> None:
    imported = importlib.import_module(module)
    message = ""
    try:
        getattr(imported, name)
    except AttributeError as exc:
        message = str(exc)
    assert name in message, f"{module}.{name}: {message or 'found'}"
