"""Converse's answers (`output.message`, `stopReason`, `usage`, read as JSON: a live call's response or a batch
record's `modelOutput`) as `ActorResponse`s. Pure; usage priced through genai-prices (`rules.USAGE`).

Blocks: `text` as text, `toolUse` as tool use, `reasoningContent` as thinking (signed by its `signature`), anything
else kept whole (`other`). Stop reasons are lowtide's own words where Converse has them (`end_turn`, `tool_use`,
`max_tokens`, `stop_sequence`); a guardrail's or the content filter's stop (`guardrail_intervened`,
`content_filtered`) is `refusal`, its text kept. Converse's `trace` and `metrics`, when sent, are the answer's
`provider_details`."""

from __future__ import annotations

import sys
from collections.abc import Mapping

from lowtide import BatchProcessingMode, Usage
from lowtide.providers import (
    Answer,
    PriceCache,
    Priced,
    answer_of,
    cost_of,
    json_object,
    json_objects,
    text_alone,
)
from lowtide.providers.bedrock.options import PROVIDER_NAME
from lowtide.providers.bedrock.rules import USAGE, usage_of

__all__ = ["answer_and_json"]

_STOPS = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "guardrail_intervened": "refusal",
    "content_filtered": "refusal",
}


def answer_and_json(
    body: Mapping[str, object], *, model: str, mode: BatchProcessingMode, ids: Mapping[str, str | None]
) -> tuple[Answer, dict[str, object]]:
    """A Converse response as an answer, and that answer as the ledger stores it. `ids` are the answer's batch id,
    custom id and request id (Converse names no message id)."""
    message = json_object(json_object(body.get("output")).get("message"))
    content = _content(message.get("content"))
    stop = str(body.get("stopReason") or "end_turn")
    raw_usage = json_object(body.get("usage"))
    model = sys.intern(model)
    priced = _priced(raw_usage, model, mode)
    stored: dict[str, object] = {
        "text": "".join(str(block["text"]) for block in content if block["type"] == "text"),
        "content": content,
        "stop_reason": sys.intern(_STOPS.get(stop, stop)),
        "stop_sequence": None,
        "model": model,
        "provider": PROVIDER_NAME,
        "ids": {**ids, "message_id": None},
        "usage": priced.usage_json,
        "cost": priced.cost_json,
        "mode": mode.value,
    }
    details: dict[str, object] = {}
    if body.get("trace"):
        details["trace"] = body["trace"]
    if stop not in ("end_turn", "tool_use", "max_tokens", "stop_sequence"):
        details["stop_reason"] = stop  # Converse's own word for a refusal (a guardrail's, the content filter's)
    if details:
        stored["provider_details"] = details
    alone = not details and text_alone(content)
    return answer_of(stored, text_alone=alone, usage=priced.usage, cost=priced.cost, mode=mode), stored


def _content(raw: object) -> list[dict[str, object]]:
    blocks: list[dict[str, object]] = []
    for block in json_objects(raw):
        text = block.get("text")
        if isinstance(text, str):  # most blocks: the others are looked for only when a block is not text
            if text:
                blocks.append({"type": "text", "text": text})
            continue
        use = json_object(block.get("toolUse"))
        reasoning = json_object(json_object(block.get("reasoningContent")).get("reasoningText"))
        if use:
            fields = use
            arguments = fields.get("input")
            blocks.append(
                {
                    "type": "tool_use",
                    "id": str(fields.get("toolUseId") or ""),
                    "name": str(fields.get("name") or ""),
                    "input": arguments if isinstance(arguments, dict) else {},
                }
            )
        elif reasoning:
            blocks.append(
                {
                    "type": "thinking",
                    "thinking": str(reasoning.get("text") or ""),
                    "signature": reasoning.get("signature"),
                }
            )
        else:
            blocks.append({"type": "other", "data": dict(block)})
    return blocks


_PRICES = PriceCache()
"""Each usage reported priced once (by model and mode): most answers of a batch report one of a few."""


def _priced(raw_usage: Mapping[str, object], model: str, mode: BatchProcessingMode) -> Priced:
    found = _PRICES.get(raw_usage, model, mode)
    return found if found is not None else _price_anew(raw_usage, model, mode)


def _price_anew(raw_usage: Mapping[str, object], model: str, mode: BatchProcessingMode) -> Priced:
    """A usage not seen yet, priced and kept (its closure made here, not for every answer)."""
    return _PRICES.priced(raw_usage, model, mode, make=lambda: _price(usage_of(raw_usage), model, mode))


def _price(usage: Usage, model: str, mode: BatchProcessingMode) -> Priced:
    return Priced.of(usage, cost_of(usage, model, mode=mode, provider=USAGE))
