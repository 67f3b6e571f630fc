"""ConverseStream read: its events gathered into Converse's answer (`StreamAnswer`), with the text and tool-call
pieces each gives, and boto3's blocking event stream handed to the event loop from a worker thread (`events`)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from typing import cast

from lowtide import APIConnectionError
from lowtide.providers import json_count, json_object
from lowtide.providers.bedrock.client import Json
from lowtide.streaming import TextDelta, ToolCallDelta

__all__ = ["StreamAnswer", "events"]

Event = Mapping[str, object]
Piece = TextDelta | ToolCallDelta


class StreamAnswer:
    """ConverseStream's events, one at a time, made into the answer Converse would have given."""

    def __init__(self, metadata: object) -> None:
        self._blocks: dict[int, dict[str, object]] = {}
        self._texts: dict[int, list[str]] = {}
        self._inputs: dict[int, list[str]] = {}
        self._result: dict[str, object] = {"ResponseMetadata": metadata}
        self._stopped = False

    def add(self, event: Event) -> list[Piece]:
        """Takes one event; the pieces of text and tool call it carries, for a reader who wants them as they come."""
        start = json_object(event.get("contentBlockStart"))
        delta = json_object(event.get("contentBlockDelta"))
        if start:
            use = json_object(json_object(start.get("start")).get("toolUse"))
            if use:
                index = json_count(start.get("contentBlockIndex"))
                self._blocks[index] = {"toolUse": {**use, "input": {}}}
                return [ToolCallDelta(index, "", str(use.get("toolUseId") or ""), str(use.get("name") or ""))]
        elif delta:
            return self._delta(json_count(delta.get("contentBlockIndex")), json_object(delta.get("delta")))
        elif "messageStop" in event:
            self._result["stopReason"] = json_object(event["messageStop"]).get("stopReason")
            self._stopped = True
        elif "metadata" in event:
            self._result["usage"] = json_object(event["metadata"]).get("usage")
            self._result["metrics"] = json_object(event["metadata"]).get("metrics")
        return []

    def _delta(self, index: int, piece: Mapping[str, object]) -> list[Piece]:
        if isinstance(text := piece.get("text"), str):
            self._blocks.setdefault(index, {"text": ""})
            self._texts.setdefault(index, []).append(text)
            return [TextDelta(text, index)] if text else []
        if "toolUse" in piece:
            arguments = str(json_object(piece["toolUse"]).get("input") or "")
            self._inputs.setdefault(index, []).append(arguments)
            return [ToolCallDelta(index, arguments)] if arguments else []
        if "reasoningContent" in piece:
            reasoning = json_object(piece["reasoningContent"])
            self._blocks.setdefault(index, {"reasoningContent": {"reasoningText": {"text": ""}}})
            self._texts.setdefault(index, []).append(str(reasoning.get("text") or ""))
            if "signature" in reasoning:
                self._blocks[index] = {"reasoningContent": {"reasoningText": {"signature": reasoning["signature"]}}}
        return []

    def finished(self) -> dict[str, object]:
        """The answer; `APIConnectionError` when the stream ended before its messageStop (cut short, cleanly)."""
        blocks = self._blocks
        if not self._stopped:
            raise APIConnectionError(
                f"Bedrock's stream ended after {len(blocks)} block(s), before its answer was finished."
            )
        for index, pieces in self._texts.items():
            block = blocks[index]
            if "text" in block:
                block["text"] = "".join(pieces)
            else:
                reasoning = json_object(json_object(block["reasoningContent"]).get("reasoningText"))
                block["reasoningContent"] = {"reasoningText": {**reasoning, "text": "".join(pieces)}}
        for index, pieces in self._inputs.items():
            raw = "".join(pieces)
            use = json_object(blocks[index]["toolUse"])
            blocks[index]["toolUse"] = {**use, "input": json.loads(raw) if raw else {}}
        content = [blocks[index] for index in sorted(blocks)]
        return {**self._result, "output": {"message": {"role": "assistant", "content": content}}}


_END = object()
"""The worker's last item: the stream ended (its error, if any, came before as an item of its own)."""


async def events(converse_stream: Callable[..., Json], body: Mapping[str, object]) -> AsyncIterator[Event]:
    """ConverseStream's events as the worker thread reads them, the first item its `ResponseMetadata` (as
    `{"ResponseMetadata": ...}`). When the reader stops early the worker stops too: the event stream is closed (its
    socket with it), so the thread is never left reading an answer no one wants."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[object] = asyncio.Queue()
    stop = threading.Event()
    opened: list[Json] = []

    def give(item: object) -> None:
        if not stop.is_set():
            loop.call_soon_threadsafe(queue.put_nowait, item)

    def read() -> None:
        try:
            answer = converse_stream(**body)
            opened.append(answer)
            give({"ResponseMetadata": answer.get("ResponseMetadata")})
            for event in cast("Iterable[Event]", answer["stream"]):
                if stop.is_set():
                    break
                give(event)
        except BaseException as exc:  # handed to the reader, who raises it (translated) in the loop
            give(exc)
        finally:
            _close(opened)
            give(_END)

    worker = asyncio.ensure_future(asyncio.to_thread(read))
    try:
        while (item := await queue.get()) is not _END:
            if isinstance(item, BaseException):
                raise item
            yield cast("Event", item)
    finally:
        stop.set()
        _close(opened)
        await asyncio.wait({worker})


def _close(opened: list[Json]) -> None:
    """Closes the event stream, if it was opened (twice is harmless: botocore's `close` closes its raw response)."""
    for answer in opened:
        close = getattr(answer.get("stream"), "close", None)
        if callable(close):
            close()
