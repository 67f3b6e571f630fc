"""A live answer relayed as OpenAI's APIs stream it, as `Actor.stream` gives its pieces: Chat Completions'
`chat.completion.chunk`s (then `data: [DONE]`) and the Responses API's typed events (ending with
`response.completed`, which carries the whole response). Pure."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar, Literal

from lowtide.http.sse import data_line, encode_event
from lowtide.messages.relay import Block, BlockOpened, BlockPiece, MessageOf, RelayStep, StreamFinished
from lowtide.messages.wire import ServedCall
from lowtide.providers.openai.stream_events import completion_chunks, response_events

__all__ = ["ChatRelay", "ResponsesRelay"]

JSON = dict[str, Any]
_DONE = b"data: [DONE]\n\n"


class ChatRelay:
    """One served Chat Completions stream: the role, each text piece, each tool call (its id and name, then its
    arguments in pieces), a last chunk with the finish reason, the usage when `stream_options.include_usage` asks."""

    def __init__(self, call: ServedCall, message: MessageOf) -> None:
        self._call = call
        self._message = message
        self._usage = call.echo.get("include_usage") is True
        self._head: JSON = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": str(call.arguments.get("model", "")),
            "service_tier": call.echo.get("service_tier", "default"),
            "system_fingerprint": None,
        }
        self._calls: dict[int, int] = {}
        """Each tool block's position among the answer's tool calls (the chunks' `tool_calls[].index`)."""
        self._started = False

    def step(self, step: RelayStep) -> Iterator[bytes]:
        if isinstance(step, StreamFinished) and not step.streamed and not self._started:
            whole = self._message(step.response, self._call)
            yield from map(data_line, completion_chunks(whole, include_usage=self._usage))
            yield _DONE
            return
        if not self._started:
            self._started = True
            yield self._chunk({"role": "assistant", "content": "", "refusal": None})
        if isinstance(step, BlockOpened):
            if step.block.tool:
                position = self._calls[step.block.number] = len(self._calls)
                function = {"name": step.block.name or "", "arguments": ""}
                call_id = step.block.id or f"call_{uuid.uuid4().hex[:24]}"
                opening = {"index": position, "id": call_id, "type": "function", "function": function}
                yield self._chunk({"tool_calls": [opening]})
        elif isinstance(step, BlockPiece):
            yield self._chunk(self._delta(step.block, step.text))
        else:
            whole = self._message(step.response, self._call)
            yield self._chunk({}, whole["choices"][0]["finish_reason"])
            if self._usage:
                yield data_line({**self._head, "choices": [], "usage": whole["usage"]})
            yield _DONE

    def _delta(self, block: Block, text: str) -> JSON:
        if block.tool:
            return {"tool_calls": [{"index": self._calls[block.number], "function": {"arguments": text}}]}
        return {"content": text}

    def _chunk(self, delta: JSON, finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return data_line({**self._head, "choices": [choice], **({"usage": None} if self._usage else {})})


class ResponsesRelay:
    """One served Responses stream: `response.created` and `response.in_progress`, each block as an output item (a
    message's text, a function call's arguments, or thinking as a reasoning item's summary) added, filled and done,
    then `response.completed` (or `response.incomplete`) holding the whole response."""

    relays_thinking: ClassVar[Literal[True]] = True

    def __init__(self, call: ServedCall, message: MessageOf, opening: Mapping[str, Any]) -> None:
        self._call = call
        self._message = message
        self._opening: JSON = {**opening, "id": f"resp_{uuid.uuid4().hex[:24]}", "created_at": int(time.time())}
        """The response as `response.created` shows it: the request's settings, no output yet."""
        self._items: dict[int, str] = {}
        self._streamed: list[JSON] = []
        """The output items streamed whole, in order."""
        self._sequence = 0
        self._started = False

    def step(self, step: RelayStep) -> Iterator[bytes]:
        if isinstance(step, StreamFinished) and not step.streamed and not self._started:
            whole = self._message(step.response, self._call)
            for event in response_events(whole):
                yield encode_event(str(event["type"]), event)
            return
        if not self._started:
            self._started = True
            yield self._event("response.created", response=self._opening)
            yield self._event("response.in_progress", response=self._opening)
        if isinstance(step, BlockOpened):
            if step.closing is not None:
                yield from self._done(step.closing)
            yield from self._added(step.block)
        elif isinstance(step, BlockPiece):
            common = self._common(step.block)
            if step.block.thinking:
                if step.text:  # a signature has no place in a served reasoning item, as in the whole response
                    yield self._event(
                        "response.reasoning_summary_text.delta", **common, summary_index=0, delta=step.text
                    )
            elif step.block.tool:
                yield self._event("response.function_call_arguments.delta", **common, delta=step.text)
            else:
                yield self._event("response.output_text.delta", **common, content_index=0, delta=step.text, logprobs=[])
        else:
            if step.closing is not None:
                yield from self._done(step.closing)
            whole = self._message(step.response, self._call)
            whole = {**whole, "id": self._opening["id"], "output": self._same_ids(whole["output"])}
            final = "response.incomplete" if whole["status"] == "incomplete" else "response.completed"
            yield self._event(final, response=whole)

    def _same_ids(self, output: list[JSON]) -> list[JSON]:
        """The finished response's items under the ids they streamed with (the SDK checks that the completed response
        holds the items it was streamed): a function call by its call id, messages and reasoning items in order."""
        calls = {item["call_id"]: item["id"] for item in self._streamed if item["type"] == "function_call"}
        messages = iter([item["id"] for item in self._streamed if item["type"] == "message"])
        reasoning = iter([item["id"] for item in self._streamed if item["type"] == "reasoning"])
        same: list[JSON] = []
        for item in output:
            if item["type"] == "function_call" and item["call_id"] in calls:
                item = {**item, "id": calls[item["call_id"]]}
            elif item["type"] == "message":
                item = {**item, "id": next(messages, item["id"])}
            elif item["type"] == "reasoning":
                item = {**item, "id": next(reasoning, item["id"])}
            same.append(item)
        return same

    def _event(self, kind: str, **fields: Any) -> bytes:
        self._sequence += 1
        return encode_event(kind, {"type": kind, "sequence_number": self._sequence - 1, **fields})

    def _common(self, block: Block) -> JSON:
        return {"item_id": self._items[block.number], "output_index": block.number}

    def _item(self, block: Block, status: str) -> JSON:
        item_id = self._items[block.number]
        if block.thinking:
            summary = [_summary_part(block.text)] if status == "completed" else []
            return {"id": item_id, "type": "reasoning", "summary": summary}
        if block.tool:
            call_id = block.id or item_id
            return {
                "id": item_id,
                "type": "function_call",
                "status": status,
                "call_id": call_id,
                "name": block.name or "",
                "arguments": block.text if status == "completed" else "",
            }
        content = [_text_part(block.text)] if status == "completed" else []
        return {"id": item_id, "type": "message", "status": status, "role": "assistant", "content": content}

    def _added(self, block: Block) -> Iterator[bytes]:
        prefix = "rs" if block.thinking else "fc" if block.tool else "msg"
        self._items[block.number] = f"{prefix}_{uuid.uuid4().hex[:24]}"
        item = self._item(block, "in_progress")
        yield self._event("response.output_item.added", output_index=block.number, item=item)
        if block.thinking:
            part = _summary_part("")
            yield self._event(
                "response.reasoning_summary_part.added", **self._common(block), summary_index=0, part=part
            )
        elif not block.tool:
            part = _text_part("")
            yield self._event("response.content_part.added", **self._common(block), content_index=0, part=part)

    def _done(self, block: Block) -> Iterator[bytes]:
        common = self._common(block)
        if block.thinking:
            yield self._event("response.reasoning_summary_text.done", **common, summary_index=0, text=block.text)
            part = _summary_part(block.text)
            yield self._event("response.reasoning_summary_part.done", **common, summary_index=0, part=part)
        elif block.tool:
            name = block.name or ""
            yield self._event("response.function_call_arguments.done", **common, arguments=block.text, name=name)
        else:
            yield self._event("response.output_text.done", **common, content_index=0, text=block.text, logprobs=[])
            part = _text_part(block.text)
            yield self._event("response.content_part.done", **common, content_index=0, part=part)
        item = self._item(block, "completed")
        self._streamed.append(item)
        yield self._event("response.output_item.done", output_index=block.number, item=item)


def _summary_part(text: str) -> JSON:
    return {"type": "summary_text", "text": text}


def _text_part(text: str) -> JSON:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
