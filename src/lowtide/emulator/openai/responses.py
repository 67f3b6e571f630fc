"""The `Response` object of the Responses API (as `openai.types.responses.Response` reads it) built from the emulated
model's answer, and its server-sent events in OpenAI's order, from which the SDK's `responses.stream()` helper
rebuilds exactly the non-streamed object. A Responses stream ends with `response.completed` (or
`response.incomplete`), with no `[DONE]` line."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from lowtide.emulator.jsonutil import JsonObject
from lowtide.emulator.openai.ids import derived_alnum, derived_hex
from lowtide.emulator.openai.model import Generated
from lowtide.emulator.openai.responses_params import ResponsesCall

__all__ = ["build_response", "chunks", "response_events"]

_CHUNK = 24


def build_response(
    call: ResponsesCall, generated: Generated, *, response_id: str, created_at: float, service_tier: str = "default"
) -> JsonObject:
    """The finished `Response`: a message with the text and/or one function call per call the model made."""
    incomplete = generated.finish == "length"
    status = "incomplete" if incomplete else "completed"
    output: list[JsonObject] = []
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
        "background": False,
        "completed_at": int(created_at),
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        **call.echo,
        "max_tool_calls": None,
        "output": output,
        "previous_response_id": None,
        "safety_identifier": None,
        "service_tier": service_tier,
        "top_logprobs": 0,
        "usage": {
            "input_tokens": generated.input_tokens,
            "input_tokens_details": {"cached_tokens": generated.cached_tokens, "cache_write_tokens": 0},
            "output_tokens": generated.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": generated.input_tokens + generated.output_tokens,
        },
    }


def chunks(text: str) -> Iterator[str]:
    for start in range(0, len(text), _CHUNK):
        yield text[start : start + _CHUNK]


def response_events(response: Mapping[str, Any]) -> Iterator[JsonObject]:
    """The stream's events (each with its `type` and `sequence_number`), in OpenAI's order: `response.created`,
    `response.in_progress`, each output item added, filled and done, then `response.completed`."""
    sequence = 0

    def event(kind: str, **fields: Any) -> JsonObject:
        nonlocal sequence
        sequence += 1
        return {"type": kind, "sequence_number": sequence - 1, **fields}

    opening: JsonObject = {**response, "status": "in_progress", "output": [], "usage": None, "completed_at": None}
    opening["incomplete_details"] = None
    yield event("response.created", response=opening)
    yield event("response.in_progress", response=opening)
    for index, item in enumerate(response["output"]):
        common = {"item_id": item["id"], "output_index": index}
        if item["type"] == "message":
            yield event(
                "response.output_item.added", output_index=index, item={**item, "status": "in_progress", "content": []}
            )
            part = item["content"][0]
            empty = {**part, "text": ""}
            yield event("response.content_part.added", **common, content_index=0, part=empty)
            for piece in chunks(part["text"]):
                yield event("response.output_text.delta", **common, content_index=0, delta=piece, logprobs=[])
            yield event("response.output_text.done", **common, content_index=0, text=part["text"], logprobs=[])
            yield event("response.content_part.done", **common, content_index=0, part=part)
        else:
            opened = {**item, "status": "in_progress", "arguments": ""}
            yield event("response.output_item.added", output_index=index, item=opened)
            for piece in chunks(item["arguments"]):
                yield event("response.function_call_arguments.delta", **common, delta=piece)
            yield event(
                "response.function_call_arguments.done", **common, arguments=item["arguments"], name=item["name"]
            )
        yield event("response.output_item.done", output_index=index, item=item)
    final = "response.incomplete" if response["status"] == "incomplete" else "response.completed"
    yield event(final, response=dict(response))
