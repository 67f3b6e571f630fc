"""A streamed Gemini answer (`streamGenerateContent`: chunks, each a `GenerateContentResponse` read as the API's
JSON) as the one body `generateContent` would have sent. Pure.

The candidate's parts are joined in order, a text part running on into the one before it when both are text of
the same kind (thought or answer), a thought signature kept on the part it came with; the finish reason, finish
message, safety ratings, usage, model version and response id are the last chunk's that gave them (Gemini sends
the whole usage with the last); citation sources are gathered from every chunk; the prompt's feedback is the first.
A stream that ended before any chunk gave a finish reason (and whose prompt was not blocked) is unfinished: the
caller's to refuse (`finished`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from lowtide.providers import json_object, json_objects
from lowtide.providers.gemini.requests import SYNTHETIC_CALL_ID
from lowtide.streaming import TextDelta, ThinkingDelta, ToolCallDelta

__all__ = ["StreamPieces", "finished", "merged"]

_LAST = ("modelVersion", "responseId", "usageMetadata")
_CANDIDATE_LAST = ("finishReason", "finishMessage", "safetyRatings")


def merged(chunks: Iterable[Mapping[str, object]]) -> dict[str, object]:
    """The chunks of one streamed answer as one body."""
    body: dict[str, object] = {}
    candidate: dict[str, object] = {}
    parts: list[dict[str, object]] = []
    sources: list[Mapping[str, object]] = []
    for chunk in chunks:
        body.update((key, chunk[key]) for key in _LAST if chunk.get(key) is not None)
        if "promptFeedback" in chunk and "promptFeedback" not in body:
            body["promptFeedback"] = chunk["promptFeedback"]
        for given in json_objects(chunk.get("candidates"))[:1]:
            candidate.update((key, given[key]) for key in _CANDIDATE_LAST if given.get(key) is not None)
            sources += json_objects(json_object(given.get("citationMetadata")).get("citationSources"))
            for part in json_objects(json_object(given.get("content")).get("parts")):
                _join(parts, part)
    if candidate or parts:
        candidate["content"] = {"role": "model", "parts": parts}
        if sources:
            candidate["citationMetadata"] = {"citationSources": sources}
        body["candidates"] = [candidate]
    return body


def _join(parts: list[dict[str, object]], part: Mapping[str, object]) -> None:
    text = part.get("text")
    last = parts[-1] if parts else None
    if (
        isinstance(text, str)
        and last is not None
        and isinstance(last.get("text"), str)
        and (last.get("thought") is True) == (part.get("thought") is True)
        and "thoughtSignature" not in last
    ):
        last["text"] = str(last["text"]) + text
        if "thoughtSignature" in part:
            last["thoughtSignature"] = part["thoughtSignature"]
        return
    parts.append(dict(part))


def finished(body: Mapping[str, object]) -> bool:
    """Whether a merged stream holds a whole answer: a finish reason came, or the prompt was blocked."""
    if json_object(body.get("promptFeedback")).get("blockReason") is not None:
        return True
    return any(candidate.get("finishReason") is not None for candidate in json_objects(body.get("candidates")))


class StreamPieces:
    """`Actor.stream`'s pieces of one streamed answer, chunk by chunk: the answer's text, its thoughts (parts marked
    `thought`, sent when the request asks `includeThoughts`, with their signatures) and each function call whole
    (Gemini sends a call in one part), indexed by the part they make in the merged answer, so that a call without an
    id gets the one the answer will give it."""

    def __init__(self) -> None:
        self._parts: list[dict[str, object]] = []

    def add(self, chunk: Mapping[str, object]) -> list[TextDelta | ToolCallDelta | ThinkingDelta]:
        pieces: list[TextDelta | ToolCallDelta | ThinkingDelta] = []
        for given in json_objects(chunk.get("candidates"))[:1]:
            for part in json_objects(json_object(given.get("content")).get("parts")):
                _join(self._parts, part)
                index = len(self._parts) - 1
                text, call = part.get("text"), json_object(part.get("functionCall"))
                if part.get("thought") is True:
                    signature = part.get("thoughtSignature")
                    signature = signature if isinstance(signature, str) and signature else None
                    if (isinstance(text, str) and text) or signature:
                        pieces.append(ThinkingDelta(text if isinstance(text, str) else "", index, signature))
                elif isinstance(text, str) and text:
                    pieces.append(TextDelta(text, index))
                elif call:
                    name, call_id = str(call.get("name") or ""), call.get("id")
                    call_id = call_id if isinstance(call_id, str) and call_id else f"{SYNTHETIC_CALL_ID}{index}-{name}"
                    arguments = json.dumps(json_object(call.get("args")), ensure_ascii=False, separators=(",", ":"))
                    pieces.append(ToolCallDelta(index, arguments, id=call_id, name=name))
        return pieces
