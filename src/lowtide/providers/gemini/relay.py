"""A live answer relayed as Gemini's `streamGenerateContent` streams it (`alt=sse`): a `GenerateContentResponse`
chunk per piece of text or thought (a part marked `thought`, with its signature when the piece has one) as
`Actor.stream` gives it, then a last chunk with the answer's other parts (function calls, whole, as Gemini sends them;
thoughts not streamed), its finish reason and its usage. Pure."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar, Literal, cast

from lowtide.providers import BlockPiece, MessageOf, RelayStep, ServedCall, StreamFinished

__all__ = ["GenerateContentRelay", "data_event"]


class GenerateContentRelay:
    """One served stream of `streamGenerateContent`."""

    relays_thinking: ClassVar[Literal[True]] = True

    def __init__(self, call: ServedCall, message: MessageOf) -> None:
        self._call = call
        self._message = message
        self._model = str(call.arguments.get("model", ""))
        self._thought = False

    def step(self, step: RelayStep) -> Iterator[bytes]:
        if isinstance(step, BlockPiece):
            if step.block.thinking:
                self._thought = True
                part: dict[str, Any] = {"text": step.text, "thought": True}
                if step.signature:
                    part["thoughtSignature"] = step.signature
                yield data_event(self._chunk([part]))
            elif not step.block.tool:  # a function call comes whole, in the last chunk
                yield data_event(self._chunk([{"text": step.text}]))
        elif isinstance(step, StreamFinished):
            whole = self._message(step.response, self._call)
            candidate = cast("dict[str, Any]", whole["candidates"][0])
            parts = cast("list[dict[str, Any]]", candidate["content"]["parts"])
            # The text (and the thoughts, if any came) went piece by piece; the rest (calls; thoughts that did not
            # stream) goes now. Given whole, everything goes now.
            rest = [part for part in parts if self._rest(part)] if step.streamed else parts
            last = {**candidate, "content": {"role": "model", "parts": rest}}
            yield data_event({**whole, "candidates": [last]})

    def _rest(self, part: dict[str, Any]) -> bool:
        if part.get("thought"):
            return not self._thought
        return "text" not in part

    def _chunk(self, parts: list[dict[str, Any]]) -> dict[str, Any]:
        candidate = {"content": {"role": "model", "parts": parts}, "index": 0}
        return {"candidates": [candidate], "modelVersion": self._model}


def data_event(body: Mapping[str, object]) -> bytes:
    """`body` as one server-sent event of a stream asked with `alt=sse`: a `data:` line, no event name."""
    return f"data: {json.dumps(body, ensure_ascii=False, separators=(',', ':'))}\n\n".encode()
