"""Chat Completions as the OpenAI-compatible APIs speak them (Groq's, and Together's), for any provider that names
itself: a request as the body of `POST /v1/chat/completions` (OpenAI's encoder, `lowtide.providers.openai.requests`,
reused as it is), an answer body as an `ActorResponse` stamped with the provider's name and priced at its own prices,
and a batch output or error line as its request's outcome. Pure: no client, no key.

OpenAI's own answer reader (`lowtide.providers.openai.answers`) names OpenAI and prices at OpenAI's prices, so this
one reads the same JSON for a provider given as a `Dialect`; it also keeps a reasoning model's `reasoning` field
(Groq's `parsed` format, Together's reasoning models) as a thinking block.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from lowtide import (
    ActorResponse,
    BatchProcessingMode,
    BatchRequestErrored,
    ConfigurationError,
    Usage,
)
from lowtide.providers import (
    Answer,
    PriceCache,
    Priced,
    Settled,
    answer_of,
    cost_of,
    first_choice,
    first_image,
    json_count,
    json_object,
    json_objects,
    response_of,
    stop_reason,
    text_alone,
)
from lowtide.providers.openai.codec import errored as openai_errored
from lowtide.providers.openai.codec import file_line_outcome
from lowtide.providers.openai.options import OpenAIOptions
from lowtide.providers.openai.requests import to_chat_body
from lowtide.providers.openai_compatible.dialect import Dialect
from lowtide.types import ActorRequest

__all__ = [
    "CHAT_URL",
    "chat_answer",
    "chat_body",
    "chat_line_outcome",
    "chat_response",
    "chat_usage",
    "encode_request",
    "errored",
    "retryable",
]

CHAT_URL = "/v1/chat/completions"
"""The endpoint a batch input line names, for every OpenAI-compatible batch API."""

_PLAIN_CHAT = OpenAIOptions(endpoint="chat_completions")


def encode_request(request: ActorRequest, dialect: Dialect[BaseModel]) -> dict[str, object]:
    """The Chat Completions body of `request` for `dialect`'s API (the same for a live call and a batch line), with
    `top_k` where it takes it and its own settings (`provider_options.<name>`, those of `body_options`) in it; what
    the API would refuse raises `ConfigurationError` naming the field, before sending."""
    options = dialect.check_parameters(request)
    own = options.model_dump(include=set(dialect.body_options))
    body = chat_body(request, {"top_k": request.top_k, **own} if dialect.takes_top_k else own, dialect)
    if request.model in dialect.text_only_models and (where := first_image(request.messages)) is not None:
        instead = f" (send it to one that does, such as {dialect.vision_example!r})" if dialect.vision_example else ""
        raise ConfigurationError(
            f"{where}: {dialect.owner}'s model {request.model!r} takes text only; it cannot read an image{instead}.",
            field=where,
        )
    return body


def chat_body(request: ActorRequest, options: Mapping[str, object], dialect: Dialect[BaseModel]) -> dict[str, object]:
    """The body of `POST /v1/chat/completions` for `request`, with the provider's own `options` (those given) added;
    an extra parameter naming one of them, or what `dialect`'s API cannot carry, is refused (`ConfigurationError`)."""
    body = to_chat_body(request, _PLAIN_CHAT, limits=dialect.chat_limits)
    for name, value in options.items():
        if value is None:
            continue
        if name in request.extra_params:
            raise ConfigurationError(
                f"extra_params repeats parameter(s) already set: {name}", field=f"extra_params.{name}"
            )
        body[name] = value
    return body


# Answers.

_FINISH = {"stop": "end_turn", "eos": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}
_RETRYABLE_CODES = frozenset({"rate_limit_exceeded", "server_error", "service_unavailable", "timeout"})


def retryable(status: int | None, code: str | None) -> bool:
    """Whether a request refused with HTTP `status` (if any) and error `code` may succeed if sent again."""
    if status is not None and (status in (408, 429) or status >= 500):
        return True
    return code in _RETRYABLE_CODES


def chat_usage(raw: Mapping[str, object]) -> Usage:
    """A Chat Completions `usage` object in lowtide's terms: input without the cached tokens, counted apart."""
    cached = json_count(json_object(raw.get("prompt_tokens_details")).get("cached_tokens"), "cached_tokens")
    return Usage(
        input_tokens=json_count(raw.get("prompt_tokens"), "prompt_tokens") - cached,
        output_tokens=json_count(raw.get("completion_tokens"), "completion_tokens"),
        cache_read_input_tokens=cached,
    )


def chat_answer(
    body: Mapping[str, object],
    *,
    dialect: Dialect[BaseModel],
    mode: BatchProcessingMode,
    ids: Mapping[str, str | None],
) -> tuple[Answer, dict[str, object]]:
    """A Chat Completions body as an answer (a `TextAnswer` when it is text alone), and that answer as the ledger
    stores it; `ids` are the batch id, custom id and request id (the body gives its own id)."""
    content, stop_reason = _content(body)
    model = sys.intern(str(body.get("model", "")))
    raw_usage = json_object(body.get("usage"))
    if dialect.priced_by is not None:
        # Its own prices, which differ by actor under one name: not kept in the cache shared by name.
        usage = chat_usage(raw_usage)
        priced = Priced.of(usage, dialect.priced_by(usage, model, mode) if raw_usage else None)
    else:
        priced = _PRICES.priced(
            raw_usage,
            dialect.name,
            model,
            mode,
            make=lambda: Priced.of(
                chat_usage(raw_usage),
                cost_of(raw_usage, model, mode=mode, provider=dialect.usage) if raw_usage else None,
            ),
        )
    message_id = body.get("id")
    stored: dict[str, object] = {
        "text": "".join(str(block["text"]) for block in content if block["type"] == "text"),
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "model": model,
        "provider": dialect.name,
        "ids": {**ids, "message_id": message_id if isinstance(message_id, str) else None},
        "usage": priced.usage_json,
        "cost": priced.cost_json,
        "mode": mode.value,
    }
    answer = answer_of(stored, text_alone=text_alone(content), usage=priced.usage, cost=priced.cost, mode=mode)
    return answer, stored


_PRICES = PriceCache()
"""Each usage reported priced once (by dialect, model and mode): most answers of a batch report one of a few."""


def chat_response(
    body: Mapping[str, object], *, dialect: Dialect[BaseModel], mode: BatchProcessingMode, ids: Mapping[str, str | None]
) -> ActorResponse[object]:
    """A live answer's body as an `ActorResponse`."""
    answer, _ = chat_answer(body, dialect=dialect, mode=mode, ids=ids)
    return response_of(answer)


def _content(body: Mapping[str, object]) -> tuple[list[dict[str, object]], str | None]:
    choice, message = first_choice(body)
    content: list[dict[str, object]] = []
    reasoning = message.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        content.append({"type": "thinking", "thinking": reasoning, "signature": None})
    text = message.get("content")
    if isinstance(text, str) and text:
        content.append({"type": "text", "text": text, "citations": None})
    for call in json_objects(message.get("tool_calls")):
        function = json_object(call.get("function"))
        parsed = _arguments(function.get("arguments"))
        call_id = call.get("id")
        if call.get("type") == "function" and parsed is not None and isinstance(call_id, str):
            content.append({"type": "tool_use", "id": call_id, "name": str(function.get("name")), "input": parsed})
        else:
            content.append({"type": str(call.get("type")), "data": dict(call)})
    finish = choice.get("finish_reason")
    if finish == "content_filter":
        return content, "refusal"
    return content, stop_reason(finish, _FINISH)


def _arguments(arguments: object) -> dict[str, object] | None:
    try:
        parsed: object = json.loads(arguments) if isinstance(arguments, str) else None
    except json.JSONDecodeError:
        return None
    fields = json_object(parsed)
    return dict(fields) if fields or parsed == {} else None


# Batch lines.


def chat_line_outcome(
    line: Mapping[str, Any],
    *,
    dialect: Dialect[BaseModel],
    batch_id: str,
    request_id: str | None = None,
) -> tuple[Settled, dict[str, Any] | None]:
    """An output or error file line as its request's outcome, and for an answer the response as the ledger stores
    it: succeeded (status 200), errored (the API's status, code and message), expired or canceled."""

    def answered(body: Mapping[str, Any], ids: dict[str, str | None]) -> tuple[Settled, dict[str, Any] | None]:
        return chat_answer(body, dialect=dialect, mode=BatchProcessingMode.BATCH, ids=ids)

    return file_line_outcome(line, batch_id=batch_id, request_id=request_id, answered=answered, errored=errored)


def errored(batch_id: str, custom_id: str, status: int | None, code: str, message: str) -> BatchRequestErrored:
    """A request the batch ran and the API refused: read as OpenAI's are, by this module's `retryable`, its kind from
    the status alone (OpenAI's codes are OpenAI's own)."""
    return openai_errored(batch_id, custom_id, status, code, message, by_type=None, retryable_of=retryable)
