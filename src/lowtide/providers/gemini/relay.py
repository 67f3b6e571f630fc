"""A live answer relayed as Gemini's `streamGenerateContent` streams it (`alt=sse`): a `GenerateContentResponse`
chunk per piece of text as `Actor.stream` gives it, then a last chunk with the answer's other parts (function calls
and thoughts, whole, as Gemini sends them), its finish reason and its usage. Pure."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, cast

from lowtide.providers import BlockPiece, MessageOf, RelayStep, ServedCall, StreamFinished

__all__ = ["GenerateContentRelay", "data_event"]


class GenerateContentRelay:
    """One served stream of `streamGenerateContent`."""

    def __init__(self, call: ServedCall, message: MessageOf) -> None:
        self._call = call
        self._message = message
        self._model = str(call.arguments.get("model", ""))

    def step(self, step: RelayStep) -> Iterator[bytes]:
        if isinstance(step, BlockPiece):
            if not step.block.tool:  # a function call comes whole, in the last chunk
                yield data_event(self._chunk([{"text": step.text}]))
        elif isinstance(step, StreamFinished):
            whole = self._message(step.response, self._call)
            candidate = cast("dict[str, Any]", whole["candidates"][0])
            parts = cast("list[dict[str, Any]]", candidate["content"]["parts"])
            # The text went piece by piece; the rest (calls, thoughts) goes now. Given whole, everything goes now.
            rest = [part for part in parts if "text" not in part or part.get("thought")] if step.streamed else parts
            last = {**candidate, "content": {"role": "model", "parts": rest}}
            yield data_event({**whole, "candidates": [last]})

    def _chunk(self, parts: list[dict[str, Any]]) -> dict[str, Any]:
        candidate = {"content": {"role": "model", "parts": parts}, "index": 0}
        return {"candidates": [candidate], "modelVersion": self._model}


def data_event(body: Mapping[str, object]) -> bytes:
    """`body` as one server-sent event of a stream asked with `alt=sse`: a `data:` line, no event name."""
    return f"data: {json.dumps(body, ensure_ascii=False, separators=(',', ':'))}\n\n".encode()
