"""`BedrockProvider`: one call, one answer, through bedrock-runtime's Converse with boto3: in one response
(`converse`) when `max_tokens` is small, streamed (`converse_stream`) when it may be long, so that a long generation
never idles out; the streamed events make the same answer. `stream` gives ConverseStream's pieces as they come.
boto3 runs in a worker thread, never on the event loop."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from typing import ClassVar, cast

from lowtide import ActorRequest, ActorResponse, BatchProcessingMode, Provider, ProviderOptions
from lowtide.providers import json_object, parse_response, response_of
from lowtide.providers.bedrock.answers import answer_and_json
from lowtide.providers.bedrock.client import Json, build_clients, call
from lowtide.providers.bedrock.errors import translate_errors
from lowtide.providers.bedrock.models import check_images, check_model
from lowtide.providers.bedrock.options import GEN_AI_PROVIDER_NAME, options_of
from lowtide.providers.bedrock.requests import converse_body, sdk_body
from lowtide.providers.bedrock.stream import StreamAnswer, events
from lowtide.streaming import StreamEvent

__all__ = ["WHOLE_ANSWER_MAX_TOKENS", "BedrockProvider"]

WHOLE_ANSWER_MAX_TOKENS = 4096
"""The largest `max_tokens` answered in one response; above it the answer is streamed."""


class BedrockProvider(Provider):
    """bedrock-runtime's Converse (and ConverseStream) through boto3."""

    name: ClassVar[str] = "bedrock"
    gen_ai_provider_name: ClassVar[str | None] = GEN_AI_PROVIDER_NAME
    mode: ClassVar[BatchProcessingMode] = BatchProcessingMode.LIVE

    def __init__(self, options: ProviderOptions) -> None:
        self._clients = build_clients(options)

    def quota_scope(self) -> str:
        return f"bedrock:{self._clients.endpoint}:{self._clients.credential}"

    async def preflight(self, request: ActorRequest) -> None:
        options_of(request)
        converse_body(request)
        await check_model(self._clients, request.model)
        await check_images(self._clients, request)

    async def complete(self, request: ActorRequest) -> ActorResponse[object]:
        body = sdk_body(converse_body(request))
        runtime = self._clients.runtime
        with translate_errors():
            if request.max_tokens <= WHOLE_ANSWER_MAX_TOKENS:
                answer: Mapping[str, object] = await call(runtime.converse, **body)
            else:
                answer = await call(_streamed, converse_stream=runtime.converse_stream, body=body)
        return _response(request, answer)

    async def stream(self, request: ActorRequest) -> AsyncIterator[StreamEvent]:
        """The answer through ConverseStream: each text and tool-use delta as boto3 reads it (in a worker thread),
        then the answer the events make, its usage and stop reason from the metadata and messageStop events."""
        body = sdk_body(converse_body(request))
        gathered: StreamAnswer | None = None
        with translate_errors():
            async for event in events(self._clients.runtime.converse_stream, body):
                if gathered is None:  # the first item: the response's metadata
                    gathered = StreamAnswer(event.get("ResponseMetadata"))
                    continue
                for piece in gathered.add(event):
                    yield piece
            answer = (gathered or StreamAnswer(None)).finished()
        yield _response(request, answer)


def _streamed(converse_stream: Callable[..., Json], body: Mapping[str, object]) -> dict[str, object]:
    """ConverseStream's events gathered into Converse's answer (in the worker thread: the stream is read there)."""
    answer = converse_stream(**body)
    gathered = StreamAnswer(answer.get("ResponseMetadata"))
    for event in cast("Iterable[Mapping[str, object]]", answer["stream"]):
        gathered.add(event)
    return gathered.finished()


def _response(request: ActorRequest, answer: Mapping[str, object]) -> ActorResponse[object]:
    request_id = json_object(answer.get("ResponseMetadata")).get("RequestId")
    ids = {"batch_id": None, "custom_id": request.custom_id, "request_id": str(request_id) if request_id else None}
    held, _ = answer_and_json(answer, model=request.model, mode=BatchProcessingMode.LIVE, ids=ids)
    response = response_of(held)
    model = request.response_model
    return response if model is None else parse_response(response, model)
