"""Gemini's answers (`GenerateContentResponse`, read as the JSON the API sent) as `ActorResponse`s. Pure; usage is
priced through genai-prices.

One candidate is asked for and read: its text parts as text blocks, its thought parts as thinking (signed by their
`thoughtSignature`), its function calls as tool uses (named by Gemini's call id, or one lowtide makes when Gemini
gives none), anything else kept whole. Finish reasons in lowtide's words: `STOP` is `end_turn` (`tool_use` with a
call), `MAX_TOKENS` is `max_tokens`. A prompt Gemini blocked, and an answer it stopped for safety, recitation or
another policy, is no answer: an `InvalidRequestError` (not retried) whose `error_type` is Gemini's reason and whose
message names the safety ratings that were high.

What an answer says that has no neutral form is its `provider_details`, in the API's JSON: the candidate's
`safety_ratings` and `citation_metadata`, and the body's `prompt_feedback` (each only when Gemini sent it).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any, cast

from lowtide import BatchProcessingMode, InvalidRequestError
from lowtide.providers import Answer, answer_of, cost_of, text_alone
from lowtide.providers.gemini.options import PROVIDER_NAME
from lowtide.providers.gemini.requests import SYNTHETIC_CALL_ID
from lowtide.providers.gemini.rules import USAGE, usage_of

__all__ = ["answer_and_json", "blocked_error", "provider_details"]

_FINISH = {"STOP": "end_turn", "MAX_TOKENS": "max_tokens"}
_ANSWERED = frozenset({"STOP", "MAX_TOKENS", "FINISH_REASON_UNSPECIFIED"})
"""Finish reasons of an answer; every other (SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII,
MALFORMED_FUNCTION_CALL, OTHER, ...) is a stop with no usable answer."""


def blocked_error(body: Mapping[str, Any], *, request_id: str | None) -> InvalidRequestError | None:
    """The error a Gemini body stands for when it holds no answer: its prompt blocked (`promptFeedback`), or its
    candidate stopped for a reason that is not an answer's; None for an answer."""
    feedback: Mapping[str, Any] = body.get("promptFeedback") or {}
    candidates = _objects(body.get("candidates"))
    reason = feedback.get("blockReason")
    if reason is not None or not candidates:
        why = str(reason or "no candidate")
        return InvalidRequestError(
            f"Gemini blocked the prompt ({why}){_ratings(feedback)}; it was not answered.",
            request_id=request_id,
            error_type=f"prompt_blocked:{why}",
        )
    candidate = candidates[0]
    finish = candidate.get("finishReason")
    if finish is None or finish in _ANSWERED:
        return None
    message = candidate.get("finishMessage")
    said = f": {message}" if isinstance(message, str) and message else ""
    return InvalidRequestError(
        f"Gemini stopped the answer for {finish}{_ratings(candidate)}{said}; it is not an answer.",
        request_id=request_id,
        error_type=str(finish),
    )


def _ratings(holder: Mapping[str, Any]) -> str:
    """The safety ratings that blocked or were rated above negligible, as ` (HARM_CATEGORY_X: HIGH, blocked)`."""
    shown: list[str] = []
    for rating in _objects(holder.get("safetyRatings")):
        probability = str(rating.get("probability") or "")
        blocked = rating.get("blocked") is True
        if blocked or probability not in ("", "NEGLIGIBLE", "HARM_PROBABILITY_UNSPECIFIED"):
            shown.append(f"{rating.get('category')}: {probability or 'unrated'}{', blocked' if blocked else ''}")
    return f"; safety ratings {', '.join(shown)}" if shown else ""


def answer_and_json(
    body: Mapping[str, Any],
    *,
    mode: BatchProcessingMode,
    ids: Mapping[str, str | None],
    provider: str = PROVIDER_NAME,
) -> tuple[Answer, dict[str, Any]]:
    """A Gemini body holding an answer (`blocked_error` said None) as an answer, and that answer as the ledger stores
    it. `ids` are the answer's batch id, custom id and request id; the body gives its own `responseId`. `provider`:
    the provider that answered (Gemini on another door, Vertex AI, names itself)."""
    candidate = _objects(body.get("candidates"))[0]
    content = _content(candidate)
    finish = str(candidate.get("finishReason") or "STOP")
    stop = "tool_use" if any(block["type"] == "tool_use" for block in content) else _FINISH.get(finish, finish)
    details = provider_details(body, candidate)
    model = sys.intern(str(body.get("modelVersion") or ""))
    usage = usage_of(body.get("usageMetadata") or {})
    cost = cost_of(usage, model, mode=mode, provider=USAGE)
    stored: dict[str, Any] = {
        "text": "".join(str(block["text"]) for block in content if block["type"] == "text"),
        "content": content,
        "stop_reason": sys.intern(stop),
        "stop_sequence": None,
        "model": model,
        "provider": provider,
        "ids": {**ids, "message_id": body.get("responseId")},
        "usage": usage.model_dump(mode="json"),
        "cost": cost.model_dump(mode="json") if cost is not None else None,
        "mode": mode.value,
    }
    if details is not None:
        stored["provider_details"] = details
    # An answer held as its fields (`TextAnswer`) has no details: one with them is built whole.
    alone = details is None and text_alone(content)
    answer = answer_of(stored, text_alone=alone, usage=usage, cost=cost, mode=mode)
    return answer, stored


_DETAILS = (("safety_ratings", "safetyRatings"), ("citation_metadata", "citationMetadata"))


def provider_details(body: Mapping[str, object], candidate: Mapping[str, object]) -> dict[str, object] | None:
    """What Gemini said of an answer that lowtide has no neutral field for: its candidate's safety ratings and
    citation metadata, and the prompt's feedback, as the API's JSON; None when it said none of them."""
    details: dict[str, object] = {name: candidate[key] for name, key in _DETAILS if candidate.get(key)}
    feedback = body.get("promptFeedback")
    if feedback:
        details["prompt_feedback"] = feedback
    return details or None


def _content(candidate: Mapping[str, Any]) -> list[dict[str, Any]]:
    container: Mapping[str, Any] = candidate.get("content") or {}
    blocks: list[dict[str, Any]] = []
    for number, part in enumerate(_objects(container.get("parts"))):
        text = part.get("text")
        call: Mapping[str, Any] | None = part.get("functionCall")
        if isinstance(text, str) and part.get("thought") is True:
            blocks.append({"type": "thinking", "thinking": text, "signature": part.get("thoughtSignature")})
        elif isinstance(text, str):
            if text:
                blocks.append({"type": "text", "text": text})
        elif isinstance(call, dict):
            blocks.append(_tool_use(call, number))
        elif set(part) - {"thoughtSignature"}:
            blocks.append({"type": "other", "data": dict(part)})
    return blocks


def _tool_use(call: Mapping[str, Any], number: int) -> dict[str, Any]:
    name = str(call.get("name") or "")
    given = call.get("id")
    arguments: object = call.get("args")
    call_id = given if isinstance(given, str) and given else f"{SYNTHETIC_CALL_ID}{number}-{name}"
    # Gemini's arguments are a JSON object (`Struct`); none given is an empty one.
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments if isinstance(arguments, dict) else {}}


def _objects(value: object) -> list[Mapping[str, Any]]:
    items = cast("list[object]", value) if isinstance(value, list) else []
    return [cast("Mapping[str, Any]", item) for item in items if isinstance(item, dict)]
