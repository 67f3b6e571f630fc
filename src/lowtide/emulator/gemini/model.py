"""The emulated Gemini model: a read `GeminiCall` answered by the emulator's deterministic answer generator
(`lowtide.emulator.core.answers`, the one every emulation uses: the same quoting reply, schema instances for JSON
output and function arguments, the same `[[emulator:tool:NAME]]` rule), in Gemini's shape: one candidate, its parts
(text, function calls, thoughts when `includeThoughts`), its finish reason and safety ratings (all negligible, but
for a safety stop; a stream's last chunk carries them), and usage with the
prompt's cached tokens and the thinking's own count (`thoughtsTokenCount`, beside `candidatesTokenCount`).

Markers in the user text ask for what a test cannot otherwise get: `[[emulator:finish:SAFETY]]` (or `RECITATION`,
`OTHER`, `BLOCKLIST`, `PROHIBITED_CONTENT`, `SPII`, `MALFORMED_FUNCTION_CALL`) a candidate stopped for that reason
with no content, `[[emulator:blocked:SAFETY]]` (or `OTHER`, ...) a prompt blocked (`promptFeedback`, no candidate),
and `[[emulator:errored:TYPE]]` the call failed with that error type's status, in Gemini's terms.

Implicit caching: a prompt of 1024 tokens or more leaves its prefixes cached for five minutes; a later prompt of the
same model starting with one reports it as `cachedContentTokenCount`."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterator
from typing import cast

from lowtide.emulator.core.answers import answer
from lowtide.emulator.core.cache import PromptCache
from lowtide.emulator.core.content import last_user_text
from lowtide.emulator.core.errors import ERROR_STATUS
from lowtide.emulator.core.outcomes import find_marker
from lowtide.emulator.core.prompt import Breakpoint
from lowtide.emulator.gemini.errors import status_error
from lowtide.emulator.gemini.request import GeminiCall
from lowtide.emulator.gemini.wire import (
    Candidate,
    FinishReason,
    GenerateContentResponse,
    Part,
    SafetyRating,
    UsageMetadata,
)

__all__ = ["CACHE_MINIMUM", "generate", "input_tokens", "stream_chunks"]

CACHE_MINIMUM = 1024
_CACHE_TTL = 300.0
_FINISH: dict[str, FinishReason] = {
    "end_turn": "STOP",
    "stop_sequence": "STOP",
    "tool_use": "STOP",
    "max_tokens": "MAX_TOKENS",
}
_STOPPED = re.compile(
    r"\[\[emulator:(finish|blocked):(SAFETY|RECITATION|OTHER|BLOCKLIST|PROHIBITED_CONTENT|SPII|LANGUAGE|"
    r"MALFORMED_FUNCTION_CALL)\]\]"
)
_CATEGORIES = (
    "HARM_CATEGORY_HATE_SPEECH",
    "HARM_CATEGORY_DANGEROUS_CONTENT",
    "HARM_CATEGORY_HARASSMENT",
    "HARM_CATEGORY_SEXUALLY_EXPLICIT",
)
_STREAM_PIECE = 48


def input_tokens(call: GeminiCall) -> int:
    """What the prompt counts (as `countTokens` and the usage report it)."""
    chars = call.prefixes[-1][1] if call.prefixes else 0
    return max(1, math.ceil(chars / 4) + call.media_tokens)


def generate(
    call: GeminiCall, response_id: str, *, cache: PromptCache | None = None, now: float = 0.0
) -> GenerateContentResponse:
    """Answer `call`. An `errored` marker fails it with its error type's status; a cache, when given, is read and
    written as Gemini's implicit caching does."""
    marker = find_marker(call.params)
    if marker is not None and marker.kind == "errored":
        raise status_error(
            503 if marker.error_type == "overloaded_error" else ERROR_STATUS[marker.error_type], marker.error_message
        )
    prompt = input_tokens(call)
    cached = _use_cache(call, prompt, cache, now) if cache is not None else 0
    stopped = _STOPPED.search(last_user_text(call.params))
    if stopped is not None and stopped.group(1) == "blocked":
        return {
            "promptFeedback": {"blockReason": stopped.group(2), "safetyRatings": _ratings(blocked=True)},
            "usageMetadata": _usage(prompt, cached, 0, 0),
            "modelVersion": call.model.id,
            "responseId": response_id,
        }
    if stopped is not None:
        reason = cast(FinishReason, stopped.group(2))
        candidate: Candidate = {
            "finishReason": reason,
            "index": 0,
            "safetyRatings": _ratings(blocked=reason == "SAFETY"),
        }
        return {
            "candidates": [candidate],
            "usageMetadata": _usage(prompt, cached, 0, 0),
            "modelVersion": call.model.id,
            "responseId": response_id,
        }
    result = answer(call.params, response_id)
    parts: list[Part] = []
    thoughts = 0
    for block in result.content:
        if block["type"] == "thinking":
            thoughts = max(1, math.ceil(len(str(block["thinking"])) / 4))
            if call.include_thoughts:
                parts.append({"text": str(block["thinking"]), "thought": True})
        elif block["type"] == "tool_use":
            parts.append({"functionCall": {"name": str(block["name"]), "args": dict(block["input"])}})
        else:
            text = str(block["text"])
            if call.json_output and "output_config" not in call.params:
                text = json.dumps(text)
            parts.append({"text": text})
    output = max(0, result.output_tokens - thoughts) if thoughts else result.output_tokens
    if not any("text" in part or "functionCall" in part for part in parts if not part.get("thought")):
        parts.append({"text": ""})
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": parts},
                "finishReason": _FINISH[result.stop_reason],
                "index": 0,
                "safetyRatings": _ratings(blocked=False),
            }
        ],
        "usageMetadata": _usage(prompt, cached, output, thoughts),
        "modelVersion": call.model.id,
        "responseId": response_id,
    }


def stream_chunks(response: GenerateContentResponse) -> Iterator[GenerateContentResponse]:
    """`response` as streamGenerateContent sends it: the text and the thoughts in pieces (a thought's pieces each
    marked `thought`, its signature on the last), each chunk a response of its own with the prompt's usage, the last
    with the finish reason and the whole usage."""
    usage = response["usageMetadata"]
    running: UsageMetadata = {
        "promptTokenCount": usage["promptTokenCount"],
        "totalTokenCount": usage["promptTokenCount"],
        "promptTokensDetails": usage["promptTokensDetails"],
    }
    candidates = response.get("candidates")
    if not candidates or "content" not in candidates[0]:
        yield response
        return
    candidate = candidates[0]
    pieces: list[Part] = []
    for part in candidate["content"]["parts"]:
        text = part.get("text")
        if text is None or len(text) <= _STREAM_PIECE:
            pieces.append(part)
            continue
        split: list[Part] = [
            {"text": text[start : start + _STREAM_PIECE]} for start in range(0, len(text), _STREAM_PIECE)
        ]
        if part.get("thought"):
            for piece in split:
                piece["thought"] = True
            if "thoughtSignature" in part:
                split[-1]["thoughtSignature"] = part["thoughtSignature"]
        pieces.extend(split)
    for number, piece in enumerate(pieces):
        last = number == len(pieces) - 1
        chunk: Candidate = {"content": {"role": "model", "parts": [piece]}, "index": 0}
        if last and "finishReason" in candidate:
            chunk["finishReason"] = candidate["finishReason"]
        if last and "safetyRatings" in candidate:
            chunk["safetyRatings"] = candidate["safetyRatings"]
        yield {
            "candidates": [chunk],
            "usageMetadata": usage if last else running,
            "modelVersion": response["modelVersion"],
            "responseId": response["responseId"],
        }


def _usage(prompt: int, cached: int, output: int, thoughts: int) -> UsageMetadata:
    usage: UsageMetadata = {
        "promptTokenCount": prompt,
        "totalTokenCount": prompt + output + thoughts,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt}],
    }
    if output:
        usage["candidatesTokenCount"] = output
    if cached:
        usage["cachedContentTokenCount"] = cached
        usage["cacheTokensDetails"] = [{"modality": "TEXT", "tokenCount": cached}]
    if thoughts:
        usage["thoughtsTokenCount"] = thoughts
    return usage


def _ratings(*, blocked: bool) -> list[SafetyRating]:
    ratings: list[SafetyRating] = [{"category": category, "probability": "NEGLIGIBLE"} for category in _CATEGORIES]
    if blocked:
        ratings[1] = {"category": _CATEGORIES[1], "probability": "HIGH", "blocked": True}
    return ratings


def _use_cache(call: GeminiCall, prompt: int, cache: PromptCache, now: float) -> int:
    """Implicit caching: every prefix of the prompt at least CACHE_MINIMUM tokens long is a breakpoint."""
    if prompt < CACHE_MINIMUM:
        return 0
    running = f"gemini\x1f{call.model.id}\x1f"
    breakpoints: list[Breakpoint] = []
    for text, chars in call.prefixes:
        tokens = math.ceil(chars / 4)
        if tokens < CACHE_MINIMUM:
            continue
        key = hashlib.sha256((running + text).encode()).hexdigest()
        breakpoints.append(Breakpoint(key=key, tokens=tokens, ttl=_CACHE_TTL))
    return cache.use(breakpoints, now, minimum=CACHE_MINIMUM).read
