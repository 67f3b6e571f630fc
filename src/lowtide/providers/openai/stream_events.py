"""The streamed forms of OpenAI's answers, derived from the finished answer so that the SDK's helpers rebuild
exactly the non-streamed object: a `ChatCompletion`'s `ChatCompletionChunk`s (`chat.completions.stream()`), and a
`Response`'s server-sent events (`responses.stream()`). Pure: `lowtide serve`'s OpenAI wires replay an answer with
them, and the emulator streams its own answers with them. A chat stream is `data:` lines ended by `data: [DONE]`; a
Responses stream ends with `response.completed` (or `response.incomplete`), with no `[DONE]` line."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = ["chunks", "completion_chunks", "response_events"]

_CHUNK = 24

JSON = dict[str, Any]


def chunks(text: str) -> Iterator[str]:
    """`text` in the pieces a stream sends it in."""
    for start in range(0, len(text), _CHUNK):
        yield text[start : start + _CHUNK]


def completion_chunks(completion: Mapping[str, Any], *, include_usage: bool) -> Iterator[JSON]:
    """Per choice: the role, the text in pieces, each tool call (its id and name, then its arguments in pieces),
    and a last chunk with the finish reason; then, when asked for, one chunk with no choices and the usage."""
    head = {key: completion[key] for key in ("id", "created", "model", "service_tier", "system_fingerprint")}
    head["object"] = "chat.completion.chunk"
    tail = {"usage": None} if include_usage else {}

    def chunk(index: int, delta: JSON, finish: str | None = None) -> JSON:
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


def _summary_events(event: Callable[..., JSON], common: JSON, summary: list[JSON]) -> Iterator[JSON]:
    """A reasoning item's summary parts, each added, its text in deltas, then done."""
    for number, part in enumerate(summary):
        at = {**common, "summary_index": number}
        yield event("response.reasoning_summary_part.added", **at, part={**part, "text": ""})
        for piece in chunks(part["text"]):
            yield event("response.reasoning_summary_text.delta", **at, delta=piece)
        yield event("response.reasoning_summary_text.done", **at, text=part["text"])
        yield event("response.reasoning_summary_part.done", **at, part=part)


def response_events(response: Mapping[str, Any]) -> Iterator[JSON]:
    """The stream's events (each with its `type` and `sequence_number`), in OpenAI's order: `response.created`,
    `response.in_progress`, each output item added, filled and done, then `response.completed`."""
    sequence = 0

    def event(kind: str, **fields: Any) -> JSON:
        nonlocal sequence
        sequence += 1
        return {"type": kind, "sequence_number": sequence - 1, **fields}

    opening: JSON = {**response, "status": "in_progress", "output": [], "usage": None, "completed_at": None}
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
        elif item["type"] == "reasoning":
            yield event("response.output_item.added", output_index=index, item={**item, "summary": []})
            yield from _summary_events(event, common, item["summary"])
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
