"""`BedrockProvider`: one call, one answer, through bedrock-runtime's Converse with boto3: in one response
(`converse`) when `max_tokens` is small, streamed (`converse_stream`) when it may be long, so that a long generation
never idles out; the streamed events make the same answer. boto3 runs in a worker thread, never on the event loop."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, cast

from lowtide import ActorRequest, ActorResponse, APIConnectionError, BatchProcessingMode, Provider, ProviderOptions
from lowtide.providers import parse_response, response_of
from lowtide.providers.bedrock.answers import answer_and_json
from lowtide.providers.bedrock.client import build_clients, call
from lowtide.providers.bedrock.errors import translate_errors
from lowtide.providers.bedrock.options import options_of
from lowtide.providers.bedrock.requests import converse_body, sdk_body

__all__ = ["WHOLE_ANSWER_MAX_TOKENS", "BedrockProvider"]

WHOLE_ANSWER_MAX_TOKENS = 4096
"""The largest `max_tokens` answered in one response; above it the answer is streamed."""


class BedrockProvider(Provider):
    """bedrock-runtime's Converse (and ConverseStream) through boto3."""

    name: ClassVar[str] = "bedrock"
    mode: ClassVar[BatchProcessingMode] = BatchProcessingMode.LIVE

    def __init__(self, options: ProviderOptions) -> None:
        self._clients = build_clients(options)

    def quota_scope(self) -> str:
        return f"bedrock:{self._clients.endpoint}:{self._clients.credential}"

    async def preflight(self, request: ActorRequest) -> None:
        options_of(request)
        converse_body(request)

    async def complete(self, request: ActorRequest) -> ActorResponse[object]:
        body = sdk_body(converse_body(request))
        runtime = self._clients.runtime
        with translate_errors():
            if request.max_tokens <= WHOLE_ANSWER_MAX_TOKENS:
                answer: Mapping[str, Any] = await call(runtime.converse, **body)
            else:
                answer = await call(_streamed, converse_stream=runtime.converse_stream, body=body)
        metadata = cast("Mapping[str, Any]", answer.get("ResponseMetadata") or {})
        request_id = cast("str | None", metadata.get("RequestId"))
        ids = {"batch_id": None, "custom_id": request.custom_id, "request_id": request_id}
        held, _ = answer_and_json(answer, model=request.model, mode=BatchProcessingMode.LIVE, ids=ids)
        response = response_of(held)
        model = request.response_model
        return response if model is None else parse_response(response, model)


def _streamed(converse_stream: Any, body: Mapping[str, object]) -> dict[str, Any]:
    """ConverseStream's events gathered into Converse's answer (in the worker thread: the stream is read there)."""
    answer = cast("Mapping[str, Any]", converse_stream(**body))
    blocks: dict[int, dict[str, Any]] = {}
    inputs: dict[int, list[str]] = {}
    result: dict[str, Any] = {"ResponseMetadata": answer.get("ResponseMetadata")}
    stopped = False
    for event in cast("Iterable[Mapping[str, Any]]", answer["stream"]):
        if "contentBlockStart" in event:
            start = event["contentBlockStart"]
            use = start.get("start", {}).get("toolUse")
            if use is not None:
                blocks[start["contentBlockIndex"]] = {"toolUse": {**use, "input": {}}}
        elif "contentBlockDelta" in event:
            delta = event["contentBlockDelta"]
            index, piece = delta["contentBlockIndex"], delta["delta"]
            if "text" in piece:
                block = blocks.setdefault(index, {"text": ""})
                block["text"] = block.get("text", "") + piece["text"]
            elif "toolUse" in piece:
                inputs.setdefault(index, []).append(piece["toolUse"].get("input", ""))
            elif "reasoningContent" in piece:
                reasoning = blocks.setdefault(index, {"reasoningContent": {"reasoningText": {"text": ""}}})
                text = reasoning["reasoningContent"]["reasoningText"]
                text["text"] += piece["reasoningContent"].get("text", "")
                if "signature" in piece["reasoningContent"]:
                    text["signature"] = piece["reasoningContent"]["signature"]
        elif "messageStop" in event:
            result["stopReason"] = event["messageStop"].get("stopReason")
            stopped = True
        elif "metadata" in event:
            result["usage"] = event["metadata"].get("usage")
            result["metrics"] = event["metadata"].get("metrics")
    if not stopped:
        raise APIConnectionError(
            f"Bedrock's stream ended after {len(blocks)} block(s), before its answer was finished."
        )
    for index, pieces in inputs.items():
        raw = "".join(pieces)
        blocks[index]["toolUse"]["input"] = json.loads(raw) if raw else {}
    result["output"] = {"message": {"role": "assistant", "content": [blocks[index] for index in sorted(blocks)]}}
    return result
