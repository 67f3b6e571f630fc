"""`BedrockProvider`: one call, one answer, through bedrock-runtime's Converse with boto3: in one response
(`converse`) when `max_tokens` is small, streamed (`converse_stream`) when it may be long, so that a long generation
never idles out; the streamed events make the same answer. boto3 runs in a worker thread, never on the event loop."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import ClassVar, cast

from lowtide import ActorRequest, ActorResponse, APIConnectionError, BatchProcessingMode, Provider, ProviderOptions
from lowtide.providers import json_count, json_object, parse_response, response_of
from lowtide.providers.bedrock.answers import answer_and_json
from lowtide.providers.bedrock.client import Json, build_clients, call
from lowtide.providers.bedrock.errors import translate_errors
from lowtide.providers.bedrock.models import check_model
from lowtide.providers.bedrock.options import GEN_AI_PROVIDER_NAME, options_of
from lowtide.providers.bedrock.requests import converse_body, sdk_body

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

    async def complete(self, request: ActorRequest) -> ActorResponse[object]:
        body = sdk_body(converse_body(request))
        runtime = self._clients.runtime
        with translate_errors():
            if request.max_tokens <= WHOLE_ANSWER_MAX_TOKENS:
                answer: Mapping[str, object] = await call(runtime.converse, **body)
            else:
                answer = await call(_streamed, converse_stream=runtime.converse_stream, body=body)
        request_id = json_object(answer.get("ResponseMetadata")).get("RequestId")
        ids = {"batch_id": None, "custom_id": request.custom_id, "request_id": str(request_id) if request_id else None}
        held, _ = answer_and_json(answer, model=request.model, mode=BatchProcessingMode.LIVE, ids=ids)
        response = response_of(held)
        model = request.response_model
        return response if model is None else parse_response(response, model)


def _streamed(converse_stream: Callable[..., Json], body: Mapping[str, object]) -> dict[str, object]:
    """ConverseStream's events gathered into Converse's answer (in the worker thread: the stream is read there)."""
    answer = converse_stream(**body)
    blocks: dict[int, dict[str, object]] = {}
    texts: dict[int, list[str]] = {}
    inputs: dict[int, list[str]] = {}
    result: dict[str, object] = {"ResponseMetadata": answer.get("ResponseMetadata")}
    stopped = False
    for event in cast("Iterable[Mapping[str, object]]", answer["stream"]):
        start = json_object(event.get("contentBlockStart"))
        delta = json_object(event.get("contentBlockDelta"))
        if start:
            use = json_object(json_object(start.get("start")).get("toolUse"))
            if use:
                blocks[json_count(start.get("contentBlockIndex"))] = {"toolUse": {**use, "input": {}}}
        elif delta:
            index, piece = json_count(delta.get("contentBlockIndex")), json_object(delta.get("delta"))
            if isinstance(piece.get("text"), str):
                blocks.setdefault(index, {"text": ""})
                texts.setdefault(index, []).append(str(piece["text"]))
            elif "toolUse" in piece:
                inputs.setdefault(index, []).append(str(json_object(piece["toolUse"]).get("input") or ""))
            elif "reasoningContent" in piece:
                reasoning = json_object(piece["reasoningContent"])
                blocks.setdefault(index, {"reasoningContent": {"reasoningText": {"text": ""}}})
                texts.setdefault(index, []).append(str(reasoning.get("text") or ""))
                if "signature" in reasoning:
                    blocks[index] = {"reasoningContent": {"reasoningText": {"signature": reasoning["signature"]}}}
        elif "messageStop" in event:
            result["stopReason"] = json_object(event["messageStop"]).get("stopReason")
            stopped = True
        elif "metadata" in event:
            result["usage"] = json_object(event["metadata"]).get("usage")
            result["metrics"] = json_object(event["metadata"]).get("metrics")
    if not stopped:
        raise APIConnectionError(
            f"Bedrock's stream ended after {len(blocks)} block(s), before its answer was finished."
        )
    for index, pieces in texts.items():
        block = blocks[index]
        if "text" in block:
            block["text"] = "".join(pieces)
        else:
            reasoning = json_object(json_object(block["reasoningContent"]).get("reasoningText"))
            block["reasoningContent"] = {"reasoningText": {**reasoning, "text": "".join(pieces)}}
    for index, pieces in inputs.items():
        raw = "".join(pieces)
        use = json_object(blocks[index]["toolUse"])
        blocks[index]["toolUse"] = {**use, "input": json.loads(raw) if raw else {}}
    result["output"] = {"message": {"role": "assistant", "content": [blocks[index] for index in sorted(blocks)]}}
    return result
