"""Mistral's chat completions as `ActorResponse`s: the JSON body of a live answer (the SDK's model dumped as the API
sent it) or of a batch output line. Pure; usage is priced through genai-prices (provider `mistral`)."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping

from lowtide import BatchProcessingMode, ServerError, Usage
from lowtide.providers import (
    Answer,
    PriceCache,
    Priced,
    answer_of,
    cost_of,
    first_choice,
    json_object,
    json_objects,
    stop_reason,
    text_alone,
)
from lowtide.providers.mistral.options import PROVIDER_NAME
from lowtide.providers.mistral.rules import USAGE, usage_of

__all__ = ["ERROR_FINISH", "answer_and_json", "finish_error"]

_FINISH = {"stop": "end_turn", "length": "max_tokens", "model_length": "max_tokens", "tool_calls": "tool_use"}
"""Mistral's finish reasons in lowtide's words; `error` (the model failed mid-answer) is raised, never an answer."""
ERROR_FINISH = "error"


def finish_error(body: Mapping[str, object], *, request_id: str | None) -> ServerError | None:
    """The error an answer whose finish reason is `error` stands for (Mistral's model failed while answering: a
    server's fault, which may not repeat), else None."""
    choices = json_objects(body.get("choices"))
    if choices and choices[0].get("finish_reason") == ERROR_FINISH:
        return ServerError(
            "Mistral's model failed while answering (finish_reason: error).", request_id=request_id, error_type="error"
        )
    return None


def answer_and_json(
    body: Mapping[str, object], *, mode: BatchProcessingMode, ids: Mapping[str, str | None]
) -> tuple[Answer, dict[str, object]]:
    """A chat completion body as an answer (a `TextAnswer` when it is text alone, else a validated `ActorResponse`),
    and that answer as the ledger stores it. `ids` are the answer's batch id, custom id and request id."""
    content, stop_reason = _content(body)
    model = sys.intern(str(body.get("model", "")))
    raw_usage = json_object(body.get("usage"))
    priced = _PRICES.priced(raw_usage, model, mode, make=lambda: _price(usage_of(raw_usage), model, mode))
    stored: dict[str, object] = {
        "text": "".join(str(block["text"]) for block in content if block["type"] == "text"),
        "content": content,
        "stop_reason": sys.intern(stop_reason) if stop_reason is not None else None,
        "stop_sequence": None,
        "model": model,
        "provider": PROVIDER_NAME,
        "ids": {**ids, "message_id": body.get("id") if isinstance(body.get("id"), str) else None},
        "usage": priced.usage_json,
        "cost": priced.cost_json,
        "mode": mode.value,
    }
    answer = answer_of(stored, text_alone=text_alone(content), usage=priced.usage, cost=priced.cost, mode=mode)
    return answer, stored


def _content(body: Mapping[str, object]) -> tuple[list[dict[str, object]], str | None]:
    choice, message = first_choice(body)
    content: list[dict[str, object]] = []
    text = message.get("content")
    if isinstance(text, str):
        if text:
            content.append({"type": "text", "text": text, "citations": None})
    else:
        content.extend(_chunk(chunk) for chunk in json_objects(text))
    for call in json_objects(message.get("tool_calls")):
        content.append(_tool_use(call))
    finish = choice.get("finish_reason")
    if finish == "stop" and any(block["type"] == "tool_use" for block in content):
        return content, "tool_use"
    return content, stop_reason(finish, _FINISH)


def _chunk(chunk: Mapping[str, object]) -> dict[str, object]:
    """A content chunk: text as text, a reasoning model's thinking (its text chunks) as thinking, any other kept."""
    kind = chunk.get("type")
    if kind == "text":
        return {"type": "text", "text": str(chunk.get("text", "")), "citations": None}
    if kind == "thinking":
        texts = [str(part.get("text", "")) for part in json_objects(chunk.get("thinking"))]
        return {"type": "thinking", "thinking": "".join(texts), "signature": None}
    return {"type": str(kind), "data": {name: value for name, value in chunk.items() if value is not None}}


def _tool_use(call: Mapping[str, object]) -> dict[str, object]:
    """A function call as a tool use, its arguments parsed (Mistral sends them as JSON text or as an object);
    arguments that are not a JSON object (an answer cut short) keep the call whole instead."""
    function = json_object(call.get("function"))
    arguments = function.get("arguments")
    try:
        parsed: object = json.loads(arguments) if isinstance(arguments, str) else arguments
    except json.JSONDecodeError:
        parsed = None
    call_id = call.get("id")
    if not isinstance(parsed, dict) or not isinstance(call_id, str):
        return {"type": "function_call", "data": {name: value for name, value in call.items() if value is not None}}
    return {"type": "tool_use", "id": call_id, "name": str(function.get("name")), "input": parsed}


_PRICES = PriceCache()
"""Each usage reported priced once (by model and mode): most answers of a batch report one of a few."""


def _price(usage: Usage, model: str, mode: BatchProcessingMode) -> Priced:
    return Priced.of(usage, cost_of(usage, model, mode=mode, provider=USAGE) if model else None)
