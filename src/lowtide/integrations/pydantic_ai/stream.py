"""pydantic-ai `StreamedResponse`s of `LowtideModel`, so that `run_stream`, `run_stream_events`, `agent.iter` and event
handlers work with it in both modes: `LiveStream` gives a live answer's text and tool-call deltas as `actor.stream`
gives them; `FinishedStream` replays an answer lowtide has finished (a batch's, a durable turn's), each part one event
(its whole text, its whole tool call); both then the usage and finish reason."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

from pydantic_ai.messages import (
    ModelResponse,
    ModelResponsePart,
    ModelResponseStreamEvent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from pydantic_ai.models import StreamedResponse

from lowtide.integrations.pydantic_ai.errors import mapped_errors
from lowtide.streaming import StreamEvent, TextDelta, ThinkingDelta, ToolCallDelta
from lowtide.types import ActorResponse

__all__ = ["FinishedStream", "LiveStream"]


@dataclass
class _Stream(StreamedResponse):
    """What both streams say alike: no provider URL (lowtide's actor is the provider), the time the stream began."""

    _timestamp: datetime = field(default_factory=lambda: datetime.now(UTC), init=False)

    @property
    def provider_url(self) -> str | None:
        return None

    @property
    def timestamp(self) -> datetime:
        return self._timestamp


@dataclass
class FinishedStream(_Stream):
    """The events of `answer`, a response already answered (in a batch, or live): a batch has nothing to stream
    before its answer, and a live answer arrives whole from lowtide's caller (its retries and quota see the whole)."""

    answer: ModelResponse

    def __post_init__(self) -> None:
        self._usage = self.answer.usage
        self.provider_response_id = self.answer.provider_response_id
        self.provider_details = self.answer.provider_details
        self.finish_reason = self.answer.finish_reason

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        for index, part in enumerate(self.answer.parts):
            for event in self._events_of(index, part):
                yield event

    def _events_of(self, index: int, part: ModelResponsePart) -> Iterator[ModelResponseStreamEvent]:
        if isinstance(part, TextPart):
            yield from self._parts_manager.handle_text_delta(vendor_part_id=index, content=part.content)
        elif isinstance(part, ToolCallPart):
            args = cast("str | dict[str, Any] | None", part.args)
            yield self._parts_manager.handle_tool_call_part(
                vendor_part_id=index, tool_name=part.tool_name, args=args, tool_call_id=part.tool_call_id
            )
        elif isinstance(part, ThinkingPart):
            yield from self._parts_manager.handle_thinking_delta(
                vendor_part_id=index,
                content=part.content,
                signature=part.signature,
                provider_name=part.provider_name,
            )

    @property
    def model_name(self) -> str:
        return self.answer.model_name or ""

    @property
    def provider_name(self) -> str | None:
        return self.answer.provider_name


@dataclass
class LiveStream(_Stream):
    """A live answer as `actor.stream` gives it: each text, tool-call or thinking delta one event, as it arrives; the
    finished answer (`finish`: pydantic-ai's `ModelResponse` of it) gives the usage, ids and finish reason at the
    end."""

    events: AsyncIterator[StreamEvent]
    finish: Callable[[ActorResponse[object]], ModelResponse]
    model: str
    system: str

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        with mapped_errors(self.model):
            async for event in self.events:
                if isinstance(event, TextDelta):
                    for text in self._parts_manager.handle_text_delta(
                        vendor_part_id=("text", event.index), content=event.text
                    ):
                        yield text
                elif isinstance(event, ToolCallDelta):
                    call = self._parts_manager.handle_tool_call_delta(
                        vendor_part_id=("tool", event.index),
                        tool_name=event.name,
                        args=event.arguments or None,
                        tool_call_id=event.id,
                    )
                    if call is not None:
                        yield call
                elif isinstance(event, ThinkingDelta):
                    # Signed by this provider, as the finished answer's thinking is (messages.to_model_response).
                    for thought in self._parts_manager.handle_thinking_delta(
                        vendor_part_id=("thinking", event.index),
                        content=event.text or None,
                        signature=event.signature,
                        provider_name=self.system,
                    ):
                        yield thought
                else:
                    answer = self.finish(event)
                    self._usage = answer.usage
                    self.provider_response_id = answer.provider_response_id
                    self.provider_details = answer.provider_details
                    self.finish_reason = answer.finish_reason

    @property
    def model_name(self) -> str:
        return self.model

    @property
    def provider_name(self) -> str | None:
        return self.system
