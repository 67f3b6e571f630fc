"""OpenAI's answers as `ActorResponse`s: a Responses `Response` or a `ChatCompletion`, as the SDK object of a live call
or as the JSON body a batch output line holds. Pure; usage is priced through genai-prices."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from pydantic import BaseModel

from lowtide.core.json_types import json_count, json_object, json_objects
from lowtide.core.modes import MODE_TEXT, BatchProcessingMode
from lowtide.cost.priced import PriceCache, Priced
from lowtide.cost.pricing import UsageShape, cost_of
from lowtide.errors import APIError, InvalidRequestError, PermissionDeniedError, RateLimitError, ServerError
from lowtide.messages.answers import Answer, answer_of, response_of, text_alone
from lowtide.messages.structured import parse_response
from lowtide.providers.chat_choices import first_choice, stop_reason
from lowtide.providers.openai.options import PROVIDER_NAME
from lowtide.providers.openai.rules import USAGE
from lowtide.types import ActorResponse, ProviderIds, Usage

if TYPE_CHECKING:  # the SDK's types are read, never built, here: a batch's lines need no SDK import
    from openai.types.chat import ChatCompletion
    from openai.types.responses import Response

__all__ = [
    "ERROR_CLASSES",
    "Failure",
    "answer_and_json",
    "failed_response_error",
    "failure_of",
    "retryable",
    "to_response",
    "usage_of",
]


@dataclass(frozen=True)
class Failure:
    """A Responses answer whose status is `failed`: the API's error code and message."""

    code: str
    message: str


def failure_of(body: Mapping[str, object]) -> Failure | None:
    """The failure a Responses body reports (status `failed`), if it reports one."""
    if body.get("object") != "response" or body.get("status") != "failed":
        return None
    error = json_object(body.get("error"))
    return Failure(str(error.get("code") or "server_error"), str(error.get("message") or "The response failed."))


_NOT_RETRYABLE = frozenset({"insufficient_quota"})
"""429s that say the account, not the moment, is the problem: sending again cannot help."""
ERROR_CLASSES: Mapping[str, type[APIError]] = {"insufficient_quota": PermissionDeniedError}
"""OpenAI's error codes whose class is not their status's: a 429 for `insufficient_quota` is the account's standing,
not a rate: a `PermissionDeniedError`, which is not retried."""
_RETRYABLE = frozenset({"rate_limit_exceeded", "server_error", "server_is_overloaded", "slow_down", "timeout"})


def retryable(status: int | None, code: str | None) -> bool:
    """Whether a request OpenAI refused with HTTP `status` (if any) and error `code` may succeed if sent again."""
    if code in _NOT_RETRYABLE:
        return False
    if status is not None and (status in (408, 429) or status >= 500):
        return True
    return code in _RETRYABLE


def failed_response_error(failure: Failure, *, request_id: str | None) -> APIError:
    """The error a live answer whose status is `failed` stands for, by its code."""
    if failure.code == "rate_limit_exceeded":
        return RateLimitError(failure.message, request_id=request_id, error_type=failure.code)
    if retryable(None, failure.code):
        return ServerError(failure.message, request_id=request_id, error_type=failure.code)
    return InvalidRequestError(failure.message, request_id=request_id, error_type=failure.code)


def to_response(
    answer: Response | ChatCompletion,
    *,
    mode: BatchProcessingMode,
    ids: ProviderIds,
    response_model: type[BaseModel] | None = None,
    provider: str = PROVIDER_NAME,
    usage_shape: UsageShape = USAGE,
) -> ActorResponse[object]:
    """A live call's SDK object as an `ActorResponse`, priced at `mode`'s rates (and the tier that answered), and
    parsed into `response_model` (`StructuredOutputError`, carrying the response, when it does not fit). `provider`
    and `usage_shape` are those of the API that answered (another API of OpenAI's shapes, Azure's say, names its own).

    An answer whose status is `failed` raises the `APIError` its code stands for.
    """
    # The body as the API sent it (its own key names, nothing the SDK filled in), read as a batch line's is.
    body = answer.to_dict(mode="json", warnings=False)
    failure = failure_of(body)
    if failure is not None:
        raise failed_response_error(failure, request_id=ids.request_id)
    held, _ = answer_and_json(
        body, mode=mode, ids=ids.model_dump(exclude={"message_id"}), provider=provider, usage_shape=usage_shape
    )
    response = response_of(held)
    return response if response_model is None else parse_response(response, response_model)


def answer_and_json(
    body: Mapping[str, object],
    *,
    mode: BatchProcessingMode,
    ids: Mapping[str, str | None],
    provider: str = PROVIDER_NAME,
    usage_shape: UsageShape = USAGE,
) -> tuple[Answer, dict[str, object]]:
    """A Responses or Chat Completions body as an answer (a `TextAnswer` when it is text alone, else a validated
    `ActorResponse`), and that answer as the ledger stores it. `ids` are the answer's batch id, custom id and
    request id; the body gives its own id. `provider` names the answer's provider, priced by `usage_shape`.

    Batch output arrives by the thousand, so this reads the JSON as received rather than SDK models.
    """
    alone = False
    if body.get("object") == "chat.completion":
        content, stop_reason = _chat_content(body)
    elif (plain := _plain_message(body)) is not None:
        content, stop_reason, alone = plain, "end_turn", True
    else:
        content, stop_reason = _responses_content(body)
    model = sys.intern(str(body.get("model", "")))
    tier = body.get("service_tier")
    message_id = body.get("id")
    priced = _priced(model, mode, tier if isinstance(tier, str) else None, json_object(body.get("usage")), usage_shape)
    stored: dict[str, object] = {
        "text": str(content[0]["text"])  # (one block of text: the plain answer's)
        if alone and len(content) == 1
        else "".join(str(block["text"]) for block in content if block["type"] == "text"),
        "content": content,
        "stop_reason": sys.intern(stop_reason) if stop_reason is not None else None,
        "stop_sequence": None,
        "model": model,
        "provider": provider,
        "ids": {**ids, "message_id": message_id},
        "usage": priced.usage_json,
        "cost": priced.cost_json,
        "mode": MODE_TEXT[mode],
    }
    alone = alone or text_alone(content)
    answer = answer_of(stored, text_alone=alone, usage=priced.usage, cost=priced.cost, mode=mode)
    return answer, stored


# The Responses API.


def _plain_message(body: Mapping[str, object]) -> list[dict[str, object]] | None:
    """The text blocks of what nearly every batch line holds, a completed Responses body whose output is one message
    of text parts without annotations, read without the general walk (`_responses_content` gives the same blocks and
    `end_turn` for it); None for anything else."""
    output = body.get("output")
    if body.get("status") != "completed" or not isinstance(output, list):
        return None
    items = cast("list[object]", output)
    if len(items) != 1 or not isinstance(items[0], dict):
        return None
    message = cast("dict[str, object]", items[0])
    parts = message.get("content") if message.get("type") == "message" else None
    if not isinstance(parts, list) or not parts:
        return None
    content: list[dict[str, object]] = []
    for part in cast("list[object]", parts):
        if not isinstance(part, dict):
            return None
        fields = cast("dict[str, object]", part)
        text = fields.get("text")
        if fields.get("type") != "output_text" or fields.get("annotations") or not isinstance(text, str):
            return None
        content.append({"type": "text", "text": text, "citations": None})
    return content


_INCOMPLETE = {"max_output_tokens": "max_tokens", "content_filter": "refusal"}


def _responses_content(body: Mapping[str, object]) -> tuple[list[dict[str, object]], str | None]:
    content: list[dict[str, object]] = []
    refused = False
    for item in json_objects(body.get("output")):
        kind = item.get("type")
        if kind == "message":
            for part in json_objects(item.get("content")):
                refused = refused or part.get("type") == "refusal"
                content.append(_text_block(part) if part.get("type") == "output_text" else _other(part))
        elif kind == "function_call":
            content.append(_tool_use(item, call_id=item.get("call_id"), arguments=item.get("arguments")))
        elif kind == "reasoning":
            content.append(_thinking(item))
        else:
            content.append(_other(item))
    return content, _responses_stop(body, content, refused=refused)


def _responses_stop(body: Mapping[str, object], content: list[dict[str, object]], *, refused: bool) -> str | None:
    status = body.get("status")
    if status == "incomplete":
        details = json_object(body.get("incomplete_details"))
        reason = str(details.get("reason") or "incomplete")
        return _INCOMPLETE.get(reason, reason)
    if status != "completed":
        return str(status) if status is not None else None
    if any(block["type"] == "tool_use" for block in content):
        return "tool_use"
    return "refusal" if refused else "end_turn"


def _thinking(item: Mapping[str, object]) -> dict[str, object]:
    """A reasoning item with text (its reasoning, else its summary) as thinking, signed by its encrypted content;
    one without text is kept whole."""
    texts = [str(part.get("text", "")) for part in json_objects(item.get("content"))]
    texts = texts or [str(part.get("text", "")) for part in json_objects(item.get("summary"))]
    if not any(texts):
        return _other(item)
    return {"type": "thinking", "thinking": "\n\n".join(texts), "signature": item.get("encrypted_content")}


# Chat Completions.

_FINISH = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "function_call": "tool_use"}


def _chat_content(body: Mapping[str, object]) -> tuple[list[dict[str, object]], str | None]:
    choice, message = first_choice(body)
    content: list[dict[str, object]] = []
    text = message.get("content")
    if isinstance(text, str) and text:
        content.append(_text_block({"text": text, "annotations": message.get("annotations")}))
    refusal = message.get("refusal")
    if isinstance(refusal, str) and refusal:
        content.append({"type": "refusal", "data": {"type": "refusal", "refusal": refusal}})
    for call in json_objects(message.get("tool_calls")):
        if call.get("type") == "function":
            function = json_object(call.get("function"))
            content.append(
                _tool_use(
                    {"type": "function_call", **function}, call_id=call.get("id"), arguments=function.get("arguments")
                )
            )
        else:
            content.append(_other(call))
    finish = choice.get("finish_reason")
    if finish == "content_filter" or (finish == "stop" and isinstance(refusal, str) and refusal):
        return content, "refusal"
    return content, stop_reason(finish, _FINISH)


# Blocks.


def _text_block(part: Mapping[str, object]) -> dict[str, object]:
    annotations = json_objects(part.get("annotations"))
    return {"type": "text", "text": str(part.get("text", "")), "citations": annotations or None}


def _tool_use(item: Mapping[str, object], *, call_id: object, arguments: object) -> dict[str, object]:
    """A function call as a tool use, its arguments parsed; arguments that are not a JSON object (an answer cut
    short) keep the call whole instead."""
    try:
        parsed: object = json.loads(arguments) if isinstance(arguments, str) else None
    except json.JSONDecodeError:
        parsed = None
    if not isinstance(parsed, dict) or not isinstance(call_id, str):
        return _other(item)
    return {"type": "tool_use", "id": call_id, "name": str(item.get("name")), "input": parsed}


def _other(item: Mapping[str, object]) -> dict[str, object]:
    """A block lowtide does not model, kept whole."""
    return {"type": str(item.get("type")), "data": {name: value for name, value in item.items() if value is not None}}


# Usage and cost.


def usage_of(raw: Mapping[str, object]) -> Usage:
    """OpenAI's usage (Responses or Chat Completions) in lowtide's terms: `input_tokens` without the cached tokens
    and those written to the cache, which are counted apart."""
    chat = "prompt_tokens" in raw
    details = json_object(raw.get("prompt_tokens_details" if chat else "input_tokens_details"))
    cached = json_count(details.get("cached_tokens"), "cached_tokens")
    written = json_count(details.get("cache_write_tokens"), "cache_write_tokens")
    return Usage(
        input_tokens=json_count(raw.get("prompt_tokens" if chat else "input_tokens"), "input tokens")
        - cached
        - written,
        output_tokens=json_count(raw.get("completion_tokens" if chat else "output_tokens"), "output tokens"),
        cache_read_input_tokens=cached,
        cache_creation_input_tokens=written,
    )


_PRICES = PriceCache()


def _priced(
    model: str, mode: BatchProcessingMode, tier: str | None, usage: Mapping[str, object], shape: UsageShape
) -> Priced:
    found = _PRICES.get(usage, shape.genai_provider, model, mode, tier)
    return found if found is not None else _price_anew(model, mode, tier, usage, shape)


def _price_anew(
    model: str, mode: BatchProcessingMode, tier: str | None, usage: Mapping[str, object], shape: UsageShape
) -> Priced:
    """A usage not seen yet, priced and kept (its closure made here, not for every answer)."""
    return _PRICES.priced(
        usage,
        shape.genai_provider,
        model,
        mode,
        tier,
        make=lambda: Priced.of(usage_of(usage), cost_of(usage, model, mode=mode, provider=shape, service_tier=tier)),
    )
