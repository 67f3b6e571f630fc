"""Steps for the Groq and Together batch codecs (features/compat_codecs.feature): pure, no emulator, no client."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any, Protocol

from _support import yaml_doc
from genai_prices import Usage as PricedUsage
from genai_prices import calc_price
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import ActorError, ActorRequest, ActorResponse, BatchRequestErrored
from lowtide.batching.backend import BatchCodec
from lowtide.messages.answers import TextAnswer, response_of
from lowtide.providers.groq.dialect import GROQ
from lowtide.providers.openai_compatible.batch import ChatBatchCodec
from lowtide.providers.together.dialect import TOGETHER

_DIALECTS = {"Groq": GROQ, "Together": TOGETHER}


class Context(StepContext, Protocol):
    codec: BatchCodec
    stored: dict[str, Any]
    outcome: Any


def _dig(value: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


@given("the {provider:w} batch codec")
def step_codec(context: Context, provider: str) -> None:
    context.codec = ChatBatchCodec(_DIALECTS[provider])


@when('it encodes a request for "{model}" with the system prompt "{system}" and the settings:')
def step_encode(context: Context, model: str, system: str) -> None:
    settings = yaml_doc(context.text)
    request = ActorRequest.model_validate(
        {
            "model": model,
            "max_tokens": 256,
            "system": system,
            "messages": [{"role": "user", "content": "When is high tide?"}],
            **settings,
        }
    )
    context.stored = context.codec.encode_request(request)


@then('the stored request posts to "{url}" with these body fields:')
def step_stored(context: Context, url: str) -> None:
    stored = context.stored
    assert (stored["method"], stored["url"]) == ("POST", url), stored
    for row in context.table:
        found = _dig(stored["body"], row["field"])
        assert str(found) == row["value"], (row["field"], found)


@then("its input line starts with the custom id, then the stored request")
def step_line(context: Context) -> None:
    stored_json = json.dumps(context.stored, sort_keys=True, separators=(",", ":"))
    line = context.codec.encode([("tide-1_abc", stored_json)]).decode()
    assert line.endswith("\n"), line
    assert json.loads(line) == {"custom_id": "tide-1_abc", **context.stored}, line


@then('the key "{key}" in the ledger "{ledger}" has the custom id "{custom_id}"')
def step_custom_id(context: Context, key: str, ledger: str, custom_id: str) -> None:
    assert context.codec.custom_id_for(key, ledger) == custom_id


@then('the key "{key}" in the ledger "{ledger}" has a custom id starting "{prefix}"')
def step_custom_id_digest(context: Context, key: str, ledger: str, prefix: str) -> None:
    made = context.codec.custom_id_for(key, ledger)
    assert made.startswith(prefix), made
    assert made == context.codec.custom_id_for(key, ledger), "not stable"


def _outcome(codec: BatchCodec, line: dict[str, Any]) -> Any:
    settled, _ = codec.line_outcome(line, batch_id="batch_1", request_id=None)
    return response_of(settled) if isinstance(settled, TextAnswer) else settled


@then("these result lines come out so:")
def step_lines(context: Context) -> None:
    for row in context.table:
        outcome = _outcome(context.codec, json.loads(row["line"]))
        expected = row["outcome"]
        if expected.startswith("answer "):
            text, stop, provider = (part.strip() for part in expected.removeprefix("answer ").split(","))
            assert isinstance(outcome, ActorResponse), outcome
            assert (f'"{outcome.text}"', outcome.stop_reason, outcome.provider) == (text, stop, provider), outcome
        elif expected == "thinking then max_tokens":
            assert isinstance(outcome, ActorResponse), outcome
            assert [block.type for block in outcome.content] == ["thinking"], outcome.content
            assert outcome.stop_reason == "max_tokens", outcome.stop_reason
        elif expected.startswith("BatchRequestErrored"):
            _, how, kind = expected.split()
            assert isinstance(outcome, BatchRequestErrored), outcome
            assert outcome.retryable is (how == "retryable"), outcome
            assert outcome.kind is not None and outcome.kind.__name__ == kind, outcome.kind  # noqa: PT018
        else:
            assert isinstance(outcome, ActorError), outcome
            assert type(outcome).__name__ == expected, outcome


@when('a result line answers "{model}" with {prompt:d} prompt tokens and {completion:d} completion tokens')
def step_priced_line(context: Context, model: str, prompt: int, completion: int) -> None:
    body = {
        "object": "chat.completion",
        "id": "c1",
        "model": model,
        "choices": [{"message": {"content": "High at 6"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion},
    }
    line = {"custom_id": "a", "response": {"status_code": 200, "body": body}}
    context.outcome = _outcome(context.codec, line)


@then('its cost is genai-prices\' "{genai}" price for "{model}", halved, with the live equivalent beside it')
def step_priced(context: Context, genai: str, model: str) -> None:
    response = context.outcome
    assert isinstance(response, ActorResponse), response
    cost = response.cost
    assert cost is not None, response
    live = calc_price(PricedUsage(input_tokens=1000, output_tokens=500), model, provider_id=genai).total_price
    assert cost.live_equivalent_usd == live, (cost, live)
    assert cost.total_usd == live * Decimal("0.5"), (cost, live)
    assert cost.pricing == "batch", cost


@then("these answer bodies come out as these content blocks and stop reasons:")
def step_bodies(context: Context) -> None:
    for row in context.table:
        body = {"object": "chat.completion", "id": "c1", "model": "m", **json.loads(row["body"])}
        line = {"custom_id": "a", "response": {"status_code": 200, "body": body}}
        outcome = _outcome(context.codec, line)
        assert isinstance(outcome, ActorResponse), (row["body"], outcome)
        blocks = " ".join(block.type for block in outcome.content)
        assert (blocks, outcome.stop_reason or "") == (row["blocks"], row["stop_reason"]), (row["body"], outcome)
