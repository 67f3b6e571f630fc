"""Steps for the OpenAI codec (features/openai_codec.feature): requests encoded, answers and batch lines read, SDK
errors translated. Live answers and errors come through the real SDK client over an httpx MockTransport, so every
SDK object and exception is the one the SDK itself builds."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Protocol

import httpx2
import openai
import yaml
from _openai_provider_support import MODEL, OPENAI_KEY, RESPONSE_MODELS
from _support import check_error, dig, shown, world
from pydantic import BaseModel
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import ActorRequest, ActorResponse, BatchProcessingMode, StructuredOutputError, ToolUseContent
from lowtide.batching.records import error_from_json, error_to_json, response_from_json
from lowtide.cost.pricing import cost_of
from lowtide.errors import ActorError, APIError, BatchRequestError, RateLimitError
from lowtide.messages.answers import response_of
from lowtide.provider import ProviderOptions
from lowtide.providers.openai.codec import (
    Encoded,
    answer_and_json,
    batch_line,
    encode_request,
    line_outcome,
    to_outcome,
)
from lowtide.providers.openai.errors import translate_errors
from lowtide.providers.openai.live import OpenAIProvider


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    openai_codec: CodecState
    openai_loaded: str


BASE_URL = "https://api.openai.test/v1"


@dataclass
class CodecState:
    """What one codec scenario built, read and got back."""

    request: ActorRequest | None = None
    encoded: Encoded | None = None
    line_json: dict[str, Any] | None = None
    answer: dict[str, Any] = field(default_factory=dict[str, Any])
    line: dict[str, Any] = field(default_factory=dict[str, Any])
    outcome: Any = None
    stored: dict[str, Any] | None = None
    handler: Callable[[httpx2.Request], httpx2.Response] | None = None
    priced: tuple[dict[str, Any], str, str, Any] | None = None
    log: list[logging.LogRecord] = field(default_factory=list[logging.LogRecord])


def state(context: Context) -> CodecState:
    if not hasattr(context, "openai_codec"):
        context.openai_codec = CodecState()
    return context.openai_codec


def make_request(fields: Mapping[str, Any]) -> ActorRequest:
    return ActorRequest.model_validate({"model": MODEL, "max_tokens": 1024, **fields})


def mock_client(context: Context, handler: Callable[[httpx2.Request], httpx2.Response]) -> openai.AsyncOpenAI:
    """The real SDK client, with its retries off, over a transport that answers with `handler`."""
    client = openai.AsyncOpenAI(
        api_key=OPENAI_KEY,
        base_url=BASE_URL,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)),
        max_retries=0,
    )
    context.cleanups.append(client.close)
    return client


def json_path(value: Any, path: str) -> Any:
    """`value` at a dotted path whose parts may end in `[index]`."""
    for part in path.split("."):
        name, *indexes = re.split(r"\[(\d+)\]", part)
        if name:
            value = value[name]
        for index in (item for item in indexes if item):
            value = value[int(index)]
    return value


# -- requests --------------------------------------------------------------------------------------------------------


@given("an OpenAI request with:")
def step_request(context: Context) -> None:
    state(context).request = make_request(yaml.safe_load(context.text))


@given('an OpenAI request saying "{prompt}" with {settings}')
def step_request_with(context: Context, prompt: str, settings: str) -> None:
    fields = {"messages": [{"role": "user", "content": prompt}], **yaml.safe_load(settings)}
    state(context).request = make_request(fields)


@given("an OpenAI request whose last message is a {role:w} message with the block {block}, sent to {endpoint:w}")
def step_request_block(context: Context, role: str, block: str, endpoint: str) -> None:
    state(context).request = make_request(
        {
            "messages": [{"role": role, "content": [json.loads(block)]}],
            "provider_options": {"openai": {"endpoint": endpoint}},
        }
    )


@given("the request asks for a {model:w}")
def step_request_model(context: Context, model: str) -> None:
    s = state(context)
    assert s.request is not None
    s.request = s.request.model_copy(update={"response_model": RESPONSE_MODELS[model]})


@when("the request is encoded for OpenAI")
def step_encode(context: Context) -> None:
    s = state(context)
    request = s.request
    assert request is not None
    s.encoded = world(context).attempt(lambda: encode_request(request))


@when('the request is encoded for OpenAI as the batch input line "{custom_id}"')
def step_encode_line(context: Context, custom_id: str) -> None:
    s = state(context)
    assert s.request is not None
    s.line_json = batch_line(custom_id, encode_request(s.request))


def _body(context: Context) -> dict[str, Any]:
    world(context).succeeded()
    encoded = state(context).encoded
    assert encoded is not None
    # Through JSON, as the body travels: what is compared is what is sent.
    return json.loads(json.dumps(encoded.body))


@then('the request goes to "{url}"')
def step_url(context: Context, url: str) -> None:
    world(context).succeeded()
    encoded = state(context).encoded
    assert encoded is not None
    assert encoded.url == url, encoded


@then("the OpenAI body is:")
def step_body_is(context: Context) -> None:
    body = _body(context)
    expected = json.loads(context.text)
    assert body == expected, json.dumps(body, indent=1)


@then("the OpenAI body holds:")
def step_body_holds(context: Context) -> None:
    body = _body(context)
    for row in context.table:
        actual = json_path(body, row["path"])
        assert actual == json.loads(row["value"]), f"{row['path']} is {json.dumps(actual)}"


@then("the batch input line is:")
def step_line_is(context: Context) -> None:
    line = state(context).line_json
    assert line == json.loads(context.text), line


# -- answers ---------------------------------------------------------------------------------------------------------


def responses_body(
    output: list[Any],
    *,
    status: str = "completed",
    reason: str | None = None,
    model: str = MODEL,
    usage: dict[str, Any] | None = None,
    tier: str = "default",
) -> dict[str, Any]:
    return {
        "id": "resp_test",
        "object": "response",
        "created_at": 1_800_000_000,
        "status": status,
        "incomplete_details": {"reason": reason} if reason else None,
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "service_tier": tier,
        "usage": usage
        or {
            "input_tokens": 20,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 25,
        },
    }


def message_item(text: str) -> dict[str, Any]:
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


@given("the OpenAI answer:")
def step_answer(context: Context) -> None:
    state(context).answer = json.loads(context.text)


@given('a Responses answer with status "{status}", incomplete reason "{reason:Q}" and the output {output}')
def step_responses_answer(context: Context, status: str, reason: str, output: str) -> None:
    state(context).answer = responses_body(json.loads(output), status=status, reason=reason or None)


@given('a Chat Completions answer that finished with "{finish}", saying {content} and refusing {refusal}')
def step_chat_answer(context: Context, finish: str, content: str, refusal: str) -> None:
    state(context).answer = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_800_000_000,
        "model": "gpt-4o-mini",
        "choices": [
            {
                "index": 0,
                "finish_reason": finish,
                "message": {"role": "assistant", "content": json.loads(content), "refusal": json.loads(refusal)},
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
    }


@given(
    'a Responses answer from the "{tier}" tier for {total:d} input tokens, {cached:d} of them cached, '
    "and {out:d} output tokens"
)
def step_tier_answer(context: Context, tier: str, total: int, cached: int, out: int) -> None:
    usage = {
        "input_tokens": total,
        "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": 0},
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": total + out,
    }
    state(context).answer = responses_body([message_item("Calm.")], model="gpt-4.1-mini", usage=usage, tier=tier)


@given("a Responses answer whose text is {text}")
def step_text_answer(context: Context, text: str) -> None:
    state(context).answer = responses_body([message_item(text)])


@given('a Responses answer that failed with the code "{code}" and the message "{message}"')
def step_failed_answer(context: Context, code: str, message: str) -> None:
    body = responses_body([], status="failed")
    body["error"] = {"code": code, "message": message}
    state(context).answer = body


@when("the OpenAI answer is read from a batch output line")
def step_read_batch(context: Context) -> None:
    w = world(context)
    w.error = None
    answer, _ = answer_and_json(state(context).answer, mode=BatchProcessingMode.BATCH, ids={})
    w.response = response_of(answer)


def _ask_live(context: Context, request_id: str, response_model: type[BaseModel] | None) -> None:
    """The answer through the live provider: the SDK reads the body from the wire, the provider maps what it built."""
    answer = state(context).answer
    endpoint = "chat_completions" if answer.get("object") == "chat.completion" else "responses"

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, json=answer, headers={"x-request-id": request_id})

    provider = OpenAIProvider(ProviderOptions(client=mock_client(context, handler)))
    request = make_request(
        {
            "messages": [{"role": "user", "content": "Hello"}],
            "provider_options": {"openai": {"endpoint": endpoint}},
            "response_model": response_model,
        }
    )
    w = world(context)
    w.response = w.attempt_async(lambda: provider.complete(request))


@when('the OpenAI answer is read as the live SDK\'s {kind:w}, with the request id "{request_id}"')
def step_read_live(context: Context, kind: str, request_id: str) -> None:
    _ask_live(context, request_id, None)


@when("the OpenAI answer is read as the live SDK's Response for a {model:w}")
def step_read_live_model(context: Context, model: str) -> None:
    _ask_live(context, "req_parse", RESPONSE_MODELS[model])


@then('the first text block cites "{url}"')
def step_cites(context: Context, url: str) -> None:
    texts = [block for block in world(context).answer().content if block.type == "text"]
    citations = getattr(texts[0], "citations", None) or []
    assert [citation.get("url") for citation in citations] == [url], citations


@then('the response\'s tool calls are "{calls}"')
def step_tool_calls(context: Context, calls: str) -> None:
    made = world(context).answer().tool_calls
    assert all(isinstance(call, ToolUseContent) for call in made)
    shown_calls = "; ".join(f"{call.id} {call.name} {call.input}" for call in made)
    assert shown_calls == calls, shown_calls


@then('the parsed answer is a {model:w} for "{port}"')
def step_parsed(context: Context, model: str, port: str) -> None:
    parsed = world(context).answer().parsed
    assert isinstance(parsed, RESPONSE_MODELS[model]), parsed
    assert getattr(parsed, "port", None) == port, parsed


# -- batch lines -----------------------------------------------------------------------------------------------------


@given("the OpenAI batch line:")
def step_line(context: Context) -> None:
    state(context).line = json.loads(context.text)


@given('the OpenAI batch line answering "{custom_id}" with the text {text}')
def step_line_text(context: Context, custom_id: str, text: str) -> None:
    body = responses_body([message_item(text)])
    state(context).line = {
        "id": f"batch_req_{custom_id}",
        "custom_id": custom_id,
        "response": {"status_code": 200, "request_id": f"req_{custom_id}", "body": body},
        "error": None,
    }


@when('the line is read as an outcome of the batch "{batch_id}"')
def step_read_line(context: Context, batch_id: str) -> None:
    s = state(context)
    outcome, s.stored = line_outcome(s.line, batch_id=batch_id, request_id="req_create")
    s.outcome = outcome if isinstance(outcome, ActorError) else response_of(outcome)  # a TextAnswer built


@when('the line is read as an outcome of the batch "{batch_id}" for a {model:w}')
def step_read_line_model(context: Context, batch_id: str, model: str) -> None:
    s = state(context)
    s.outcome = to_outcome(s.line, batch_id=batch_id, response_model=RESPONSE_MODELS[model])


@then("the outcome has these fields:")
def step_outcome_fields(context: Context) -> None:
    outcome = state(context).outcome
    assert isinstance(outcome, ActorResponse), outcome
    for row in context.table:
        actual = shown(dig(outcome, row["field"]))
        assert actual == row["value"], f"{row['field']} is {actual!r}, not {row['value']!r}"


@then("the outcome's stored form reads back as the same response")
def step_outcome_stored(context: Context) -> None:
    s = state(context)
    assert isinstance(s.outcome, ActorResponse)
    assert s.stored is not None
    assert response_from_json(json.loads(json.dumps(s.stored))) == s.outcome


@then('the outcome is a {name:w} of the type "{error_type:Q}", {retryable}')
def step_outcome_error(context: Context, name: str, error_type: str, retryable: str) -> None:
    s = state(context)
    check_error(s.outcome, name)
    assert s.stored is None
    assert isinstance(s.outcome, BatchRequestError)
    assert getattr(s.outcome, "error_type", "") == error_type, s.outcome
    assert s.outcome.retryable is (retryable == "retryable"), s.outcome
    assert s.outcome.custom_id == s.line.get("custom_id") or s.line.get("custom_id") is None, s.outcome


@then('the outcome stored as the ledger stores errors comes back retryable, with the type "{error_type}"')
def step_outcome_round_trip(context: Context, error_type: str) -> None:
    outcome = state(context).outcome
    assert isinstance(outcome, BatchRequestError)
    again = error_from_json(json.loads(json.dumps(error_to_json(outcome))))
    assert type(again) is type(outcome), again
    assert again.retryable is True, again
    assert getattr(again, "error_type", None) == error_type, again


@then('the parsed outcome is a {model:w} for "{port}"')
def step_outcome_parsed(context: Context, model: str, port: str) -> None:
    outcome = state(context).outcome
    assert isinstance(outcome, ActorResponse), outcome
    assert isinstance(outcome.parsed, RESPONSE_MODELS[model])
    assert getattr(outcome.parsed, "port", None) == port


@then('the outcome is a StructuredOutputError keeping the text "{text}"')
def step_outcome_unparsed(context: Context, text: str) -> None:
    outcome = state(context).outcome
    assert isinstance(outcome, StructuredOutputError), outcome
    assert outcome.text == text, outcome
    assert isinstance(outcome.response, ActorResponse), outcome


# -- errors ----------------------------------------------------------------------------------------------------------


@given("the OpenAI API answers every call with status {status:d}, the headers {headers} and the body {body}")
def step_api_answers(context: Context, status: int, headers: str, body: str) -> None:
    sent = {"x-request-id": "req_err", **json.loads(headers)}
    content = json.loads(body)

    def handler(request: httpx2.Request) -> httpx2.Response:
        if isinstance(content, str):
            return httpx2.Response(status, text=content, headers=sent)
        return httpx2.Response(status, json=content, headers=sent)

    state(context).handler = handler


@given("the OpenAI API cannot be reached: {failure:w}")
def step_api_unreachable(context: Context, failure: str) -> None:
    error = getattr(httpx2, failure)

    def handler(request: httpx2.Request) -> httpx2.Response:
        raise error("no route to the API", request=request)

    state(context).handler = handler


@when('the OpenAI provider is asked "{prompt}"')
def step_provider_asked(context: Context, prompt: str) -> None:
    handler = state(context).handler
    assert handler is not None
    provider = OpenAIProvider(ProviderOptions(client=mock_client(context, handler)))
    request = make_request({"messages": [{"role": "user", "content": prompt}]})
    w = world(context)
    w.response = w.attempt_async(lambda: provider.complete(request))


@then('the API error has status {status:d}, request id "{request_id}", error type "{error_type:Q}" and says "{says}"')
def step_api_error(context: Context, status: int, request_id: str, error_type: str, says: str) -> None:
    error = world(context).failure()
    assert isinstance(error, APIError), error
    assert (error.status_code, error.request_id) == (status, request_id), error
    assert (error.error_type or "") == error_type, error.error_type
    assert says in error.message, error.message


@then("the rate limit error asks for a wait of {wait}")
def step_retry_after(context: Context, wait: str) -> None:
    error = world(context).failure()
    assert isinstance(error, RateLimitError), error
    expected = None if wait == "no time" else float(wait.removesuffix(" seconds"))
    assert error.retry_after == expected, error.retry_after


@then("the error message does not contain the OpenAI key")
def step_no_key(context: Context) -> None:
    error = world(context).failure()
    for text in (str(error), repr(error), *(str(arg) for arg in error.args)):
        assert OPENAI_KEY not in text, f"the API key leaked into:\n{text}"


_FAILURES: dict[str, Callable[[], BaseException]] = {
    "a results line cut short": lambda: json.JSONDecodeError("Unterminated string", '{"custom_id": "a', 15),
    "a connection broken mid-body": lambda: httpx2.ReadError("peer closed the connection"),
    "an answer the SDK could not validate": lambda: openai.APIResponseValidationError(
        httpx2.Response(200, request=httpx2.Request("POST", f"{BASE_URL}/responses")), body=None
    ),
}


@when("the OpenAI error translation meets {failure}")
def step_translate(context: Context, failure: str) -> None:
    def fail() -> None:
        with translate_errors():
            raise _FAILURES[failure]()

    world(context).attempt(fail)


# -- prices ----------------------------------------------------------------------------------------------------------


@when('the OpenAI usage {usage} of "{model}" is priced in {mode:w} mode')
def step_price(context: Context, usage: str, model: str, mode: str) -> None:
    raw = json.loads(usage)
    cost = cost_of(raw, model, mode=BatchProcessingMode(mode), provider="openai")
    state(context).priced = (raw, model, mode, cost)


@then("the price equals genai-prices' own calculation for that OpenAI usage, model and mode")
def step_price_matches(context: Context) -> None:
    from genai_prices import calc_price, extract_usage

    priced = state(context).priced
    assert priced is not None
    raw, model, mode, cost = priced
    flavor = "chat" if "prompt_tokens" in raw else "responses"
    extracted = extract_usage({"model": model, "usage": raw}, provider_id="openai", api_flavor=flavor)
    price_context = {"processing": "batch"} if mode == "batch" else None
    expected = calc_price(extracted.usage, model, provider_id="openai", price_context=price_context)
    assert cost is not None
    assert (cost.input_usd, cost.output_usd) == (expected.input_price, expected.output_price), (cost, expected)
    assert cost.total_usd > Decimal(0)


@when('a usage {usage} of "{model}" reported by the provider "{provider}" is priced in live mode')
def step_price_other(context: Context, usage: str, model: str, provider: str) -> None:
    s = state(context)
    s.log = world(context).keep_log("lowtide.pricing", logging.WARNING)
    s.priced = ({}, model, "live", cost_of(json.loads(usage), model, mode=BatchProcessingMode.LIVE, provider=provider))


@then('there is no cost, and the log says "{says}"')
def step_no_cost(context: Context, says: str) -> None:
    s = state(context)
    assert s.priced is not None
    assert s.priced[3] is None, s.priced
    assert any(says in record.getMessage() for record in s.log), [record.getMessage() for record in s.log]


@then("lowtide's OpenAI reasoning efforts and service tiers are the installed SDK's, value for value")
def step_options_are_the_sdks(context: Context) -> None:
    from openai.types.responses import ServiceTier as SdkServiceTier
    from openai.types.shared import ReasoningEffort as SdkReasoningEffort

    from lowtide.providers.openai.options import ReasoningEffort, ServiceTier

    def values(alias: object) -> set[object]:
        found: set[object] = set()
        for arg in typing.get_args(alias):
            found |= values(arg) if typing.get_args(arg) else {arg}
        return found

    for ours, sdks in ((ReasoningEffort, SdkReasoningEffort), (ServiceTier, SdkServiceTier)):
        assert values(ours) == values(sdks), f"lowtide takes {values(ours)}, the SDK {values(sdks)}"


@when("a fresh Python imports the groq and together SDKs and lowtide's Groq and Together batch providers")
def step_fresh_import(context: Context) -> None:
    code = (
        "import sys, groq, together\n"
        "import lowtide.providers.groq.batch, lowtide.providers.together.batch\n"
        "print(sorted(name for name in sys.modules if name == 'openai' or name.startswith('openai.')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    context.openai_loaded = done.stdout.strip()


@then("it has not imported the openai SDK")
def step_no_openai(context: Context) -> None:
    assert context.openai_loaded == "[]", f"openai modules loaded: {context.openai_loaded[:300]}"
