"""The `ChatCompletion` object (as `openai.types.chat.ChatCompletion` reads it) built from the emulated model's
answer. Its streamed form is `lowtide.providers.openai.stream_events.completion_chunks`, which `lowtide serve` uses
too."""

from __future__ import annotations

from lowtide.emulator.core.jsonutil import JsonObject
from lowtide.emulator.openai.chat_params import ChatCall
from lowtide.emulator.openai.ids import derived_alnum, derived_hex
from lowtide.emulator.openai.model import Generated

__all__ = ["build_completion", "completion_id", "system_fingerprint"]


def system_fingerprint(model: str) -> str:
    """The backend configuration that answered, as OpenAI shows it (`fp_` and 10 hex digits): one per model."""
    return derived_hex("fp_", model, length=10)


def build_completion(
    call: ChatCall,
    generated: Generated,
    *,
    completion_id: str,
    created_at: float,
    service_tier: str = "default",
    model: str | None = None,
) -> JsonObject:
    """The finished completion: `n` identical choices (the emulated model is deterministic), naming `model` (the
    snapshot that answered; the model asked for unless given)."""
    answered = model if model is not None else call.request.model
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
        "model": answered,
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
        "system_fingerprint": system_fingerprint(answered),
    }


def completion_id(seed: str) -> str:
    return derived_hex("chatcmpl-", seed, length=29)
