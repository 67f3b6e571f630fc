"""The `Response` object of the Responses API (as `openai.types.responses.Response` reads it) built from the emulated
model's answer. Its streamed form is `lowtide.providers.openai.stream_events.response_events`, which `lowtide serve`
uses too."""

from __future__ import annotations

from lowtide.emulator.core.jsonutil import JsonObject
from lowtide.emulator.openai.ids import derived_alnum, derived_hex
from lowtide.emulator.openai.model import Generated
from lowtide.emulator.openai.responses_params import ResponsesCall

__all__ = ["build_response"]


def build_response(
    call: ResponsesCall,
    generated: Generated,
    *,
    response_id: str,
    created_at: float,
    service_tier: str = "default",
    model: str | None = None,
) -> JsonObject:
    """The finished `Response`: the reasoning's summary when one was asked for, a message with the text and/or one
    function call per call the model made, naming `model` (the snapshot that answered; the model asked for unless
    given)."""
    incomplete = generated.finish == "length"
    status = "incomplete" if incomplete else "completed"
    output: list[JsonObject] = []
    if generated.reasoning is not None:
        summary: JsonObject = {"type": "summary_text", "text": generated.reasoning}
        output.append({"id": derived_hex("rs_", response_id, "reasoning"), "type": "reasoning", "summary": [summary]})
    if generated.text is not None:
        part: JsonObject = {"type": "output_text", "text": generated.text, "annotations": [], "logprobs": []}
        output.append(
            {
                "id": derived_hex("msg_", response_id, "message"),
                "type": "message",
                "status": status,
                "role": "assistant",
                "content": [part],
            }
        )
    for index, (name, arguments) in enumerate(generated.calls):
        output.append(
            {
                "id": derived_hex("fc_", response_id, str(index)),
                "type": "function_call",
                "status": "completed",
                "call_id": derived_alnum("call_", response_id, str(index), length=24),
                "name": name,
                "arguments": arguments,
            }
        )
    return {
        "id": response_id,
        "object": "response",
        "created_at": int(created_at),
        "status": status,
        "completed_at": int(created_at),
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        **call.echo,
        **({"model": model} if model is not None else {}),
        "max_tool_calls": None,
        "output": output,
        "safety_identifier": None,
        "service_tier": service_tier,
        "top_logprobs": 0,
        "usage": {
            "input_tokens": generated.input_tokens,
            "input_tokens_details": {"cached_tokens": generated.cached_tokens, "cache_write_tokens": 0},
            "output_tokens": generated.output_tokens,
            "output_tokens_details": {"reasoning_tokens": generated.reasoning_tokens},
            "total_tokens": generated.input_tokens + generated.output_tokens,
        },
    }
