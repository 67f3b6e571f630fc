"""The `ChatCompletion` object (as `openai.types.chat.ChatCompletion` reads it) built from the emulated model's
answer, and its `ChatCompletionChunk`s in OpenAI's order, from which the SDK's `chat.completions.stream()` helper
rebuilds the non-streamed completion. A chat stream is `data:` lines only, ended by `data: [DONE]`."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from lowtide.emulator.jsonutil import JsonObject
from lowtide.emulator.openai.chat_params import ChatCall
from lowtide.emulator.openai.ids import derived_alnum, derived_hex
from lowtide.emulator.openai.model import Generated
from lowtide.emulator.openai.responses import chunks

__all__ = ["build_completion", "completion_chunks"]

SYSTEM_FINGERPRINT = "fp_lowtide_emulator"


def build_completion(
    call: ChatCall, generated: Generated, *, completion_id: str, created_at: float, service_tier: str = "default"
) -> JsonObject:
    """The finished completion: `n` identical choices (the emulated model is deterministic)."""
    message: JsonObject = {"role": "assistant", "content": generated.text, "refusal": None, "annotations": []}
    if generated.calls:
        message["tool_calls"] = [
            {
                "id": derived_alnum("call_", completion_id, str(index), length=24),
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }
            for index, (name, arguments) in enumerate(generated.calls)
        ]
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(created_at),
        "model": call.request.model,
        "choices": [
            {"index": index, "message": message, "logprobs": None, "finish_reason": generated.finish}
            for index in range(call.choices)
        ],
        "usage": {
            "prompt_tokens": generated.input_tokens,
            "completion_tokens": generated.output_tokens * call.choices,
            "total_tokens": generated.input_tokens + generated.output_tokens * call.choices,
            "prompt_tokens_details": {"cached_tokens": generated.cached_tokens, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        },
        "service_tier": service_tier,
        "system_fingerprint": SYSTEM_FINGERPRINT,
    }


def completion_id(seed: str) -> str:
    return derived_hex("chatcmpl-", seed, length=29)


def completion_chunks(completion: Mapping[str, Any], *, include_usage: bool) -> Iterator[JsonObject]:
    """Per choice: the role, the text in pieces, each tool call (its id and name, then its arguments in pieces),
    and a last chunk with the finish reason; then, when asked for, one chunk with no choices and the usage."""
    head = {key: completion[key] for key in ("id", "created", "model", "service_tier", "system_fingerprint")}
    head["object"] = "chat.completion.chunk"
    tail = {"usage": None} if include_usage else {}

    def chunk(index: int, delta: JsonObject, finish: str | None = None) -> JsonObject:
        choice = {"index": index, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {**head, "choices": [choice], **tail}

    for choice in completion["choices"]:
        index, message = choice["index"], choice["message"]
        text = message["content"]
        yield chunk(index, {"role": "assistant", "content": "" if text is not None else None, "refusal": None})
        for piece in chunks(text or ""):
            yield chunk(index, {"content": piece})
        for position, call in enumerate(message.get("tool_calls") or []):
            opening = {
                "index": position,
                "id": call["id"],
                "type": "function",
                "function": {"name": call["function"]["name"], "arguments": ""},
            }
            yield chunk(index, {"tool_calls": [opening]})
            for piece in chunks(call["function"]["arguments"]):
                yield chunk(index, {"tool_calls": [{"index": position, "function": {"arguments": piece}}]})
        yield chunk(index, {}, choice["finish_reason"])
    if include_usage:
        yield {**head, "choices": [], "usage": completion["usage"]}
