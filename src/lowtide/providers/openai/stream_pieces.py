"""OpenAI's live streams read into `Actor.stream`'s pieces: the Responses API's typed events (text, function-call
argument and reasoning-summary deltas, the finished `Response` in the last), and Chat Completions' chunks
(`providers.chat_stream`)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent

from lowtide.errors import APIConnectionError
from lowtide.providers.chat_stream import ChatChunks
from lowtide.streaming import TextDelta, ThinkingDelta, ToolCallDelta

__all__ = ["chat_pieces", "response_pieces"]

Piece = TextDelta | ToolCallDelta | ThinkingDelta


async def response_pieces(events: AsyncIterator[ResponseStreamEvent]) -> AsyncGenerator[Piece | Response, None]:
    """The pieces of a Responses stream as they come, then the finished `Response` (completed, incomplete or
    failed: `to_response` reads which); `APIConnectionError` when the stream ends without one."""
    async for event in events:
        match event.type:
            case "response.output_text.delta":
                yield TextDelta(event.delta, event.output_index)
            case "response.output_item.added" if event.item.type == "function_call":
                yield ToolCallDelta(event.output_index, id=event.item.call_id, name=event.item.name)
            case "response.function_call_arguments.delta":
                yield ToolCallDelta(event.output_index, event.delta)
            case "response.reasoning_summary_part.added" if event.summary_index > 0:
                yield ThinkingDelta("\n\n", event.output_index)  # the answer's thinking joins its parts so
            case "response.reasoning_summary_text.delta":
                yield ThinkingDelta(event.delta, event.output_index)
            case "response.output_item.done" if event.item.type == "reasoning" and event.item.encrypted_content:
                yield ThinkingDelta("", event.output_index, signature=event.item.encrypted_content)
            case "response.completed" | "response.incomplete" | "response.failed":
                yield event.response
                return
            case _:
                pass
    raise APIConnectionError("The Responses stream ended before its response did (no response.completed came).")


async def chat_pieces(
    chunks: AsyncIterator[ChatCompletionChunk],
) -> AsyncGenerator[TextDelta | ToolCallDelta | ChatCompletion, None]:
    """The pieces of a Chat Completions stream as they come, then the `ChatCompletion` they make;
    `APIConnectionError` when the stream ends before a chunk said why the answer finished."""
    joined = ChatChunks()
    async for chunk in chunks:
        for piece in joined.add(chunk.to_dict(mode="json")):
            yield piece
    body: dict[str, Any] | None = joined.body()
    if body is None:
        raise APIConnectionError("The Chat Completions stream ended before its answer did (no finish_reason came).")
    yield ChatCompletion.model_validate(body)
