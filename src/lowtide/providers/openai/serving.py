"""OpenAI's Chat Completions and Responses APIs as `lowtide serve` speaks them: a request body as an actor's call
(`served_requests.py`), an `ActorResponse` as the API's `ChatCompletion` or `Response` (whole, or replayed as the
API's server-sent events), and lowtide's errors in OpenAI's error shape. No I/O here."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

from lowtide.errors import (
    ActorError,
    APIError,
    BatchRequestCanceled,
    BatchRequestErrored,
    BatchRequestExpired,
    BatchTimeoutError,
    BudgetExceededError,
    ConfigurationError,
    DeadlineExceededError,
    StructuredOutputError,
)
from lowtide.http.sse import data_line, encode_event
from lowtide.messages.relay import Relay
from lowtide.messages.wire import Refusal, ServedCall
from lowtide.providers.openai.answers import retryable
from lowtide.providers.openai.relay import ChatRelay, ResponsesRelay
from lowtide.providers.openai.served_requests import chat_call, responses_call
from lowtide.providers.openai.stream_events import completion_chunks, response_events
from lowtide.types import ActorResponse, OtherContent, TextContent, ThinkingContent, ToolUseContent, Usage

__all__ = ["MAX_REQUEST_BYTES", "ChatCompletionsWire", "ResponsesWire"]

JSON = dict[str, Any]

MAX_REQUEST_BYTES = 50 * 1024 * 1024
"""The most OpenAI takes in one request: 50 MB of payload (its limit on a request's image and file inputs, the
largest a Chat Completions or Responses body can be)."""

_NO_RETRY = {"x-should-retry": "false"}
"""Tells the official SDKs that sending the same request again cannot help (they retry 429s and 5xx otherwise)."""
_TYPE_OF_STATUS: Mapping[int, str] = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "invalid_request_error",
    404: "invalid_request_error",
    409: "invalid_request_error",
    422: "invalid_request_error",
    429: "rate_limit_exceeded",
}
# serve's own refusals, named as the Messages API names them, in OpenAI's words (their type, and their code unless
# the refusal gives one).
_OWN_CODES: Mapping[str, tuple[str, str | None]] = {
    "authentication_error": ("invalid_request_error", "invalid_api_key"),
    "not_found_error": ("invalid_request_error", "unknown_url"),
    "request_too_large": ("invalid_request_error", "request_too_large"),
    "api_error": ("server_error", None),
}
_SNAPSHOT = re.compile(r"(?P<name>.+)-\d{4}-\d{2}-\d{2}")
"""A model's dated snapshot (`gpt-4o-2024-08-06`), whose undated name (`gpt-4o`) is the alias OpenAI resolves."""
_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "tool_calls"}


class _OpenAIWire:
    """What both endpoints share: the size limit, the models, errors."""

    key_header = None
    key_query = None
    max_body_bytes = MAX_REQUEST_BYTES

    def model_refusal(self, model: str, served: Sequence[str]) -> Refusal | None:
        """OpenAI's 404 `model_not_found` for a model this key cannot use, unless `model` names one of `served`: the
        same id, or the undated alias of a dated snapshot or the reverse. Two snapshots are two models."""
        if any(model in (name, _undated(name)) or _undated(model) == name for name in served):
            return None
        return Refusal(
            404,
            "invalid_request_error",
            f"The model `{model}` does not exist or you do not have access to it"
            f" (lowtide serve answers {', '.join(served)} here).",
            code="model_not_found",
            param="model",
        )

    def error_body(self, refusal: Refusal) -> JSON:
        error_type, code = _OWN_CODES.get(refusal.error_type, (refusal.error_type, None))
        body = {"message": refusal.message, "type": error_type, "param": refusal.param, "code": refusal.code or code}
        return {"error": body}

    def refusal(self, error: ActorError) -> Refusal:
        """A lowtide error as the status, type and code OpenAI uses for the same trouble."""
        return _refusal(error)


class ChatCompletionsWire(_OpenAIWire):
    """OpenAI's Chat Completions API (`POST /v1/chat/completions`) for `lowtide serve`."""

    path = "/v1/chat/completions"

    def call(self, body: object, route: Mapping[str, str]) -> ServedCall:
        return chat_call(body)

    def message(self, response: ActorResponse[object], call: ServedCall) -> JSON:
        """The `ChatCompletion` the API would have answered with."""
        texts = [block.text for block in response.content if isinstance(block, TextContent)]
        refusals = [_refusal_text(block) for block in response.content if isinstance(block, OtherContent)]
        refusal = "".join(text for text in refusals if text) or None
        message: JSON = {
            "role": "assistant",
            "content": "".join(texts) if texts or refusal is None else None,
            "refusal": refusal,
            "annotations": [],
        }
        calls = [
            {"id": block.id, "type": "function", "function": {"name": block.name, "arguments": _arguments(block)}}
            for block in response.content
            if isinstance(block, ToolUseContent)
        ]
        if calls:
            message["tool_calls"] = calls
        stop = response.stop_reason or "end_turn"
        finish = "content_filter" if stop == "refusal" and refusal is None else _FINISH.get(stop, "stop")
        return {
            "id": response.ids.message_id or f"chatcmpl-{response.ids.custom_id or 'lowtide'}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": response.model,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
            "usage": _chat_usage(response.usage),
            "service_tier": call.echo.get("service_tier", "default"),
            "system_fingerprint": None,
        }

    def relay(self, call: ServedCall) -> Relay:
        """A live answer to `call` streamed as it arrives (`lowtide serve --mode live`), in these chunks' shapes."""
        return ChatRelay(call, self.message)

    def events(self, message: Mapping[str, Any], call: ServedCall) -> Iterator[bytes]:
        """`message` replayed as the API streams it: `chat.completion.chunk`s (the usage last, when the request's
        `stream_options.include_usage` asks for it), then `[DONE]`."""
        for chunk in completion_chunks(message, include_usage=call.echo.get("include_usage") is True):
            yield _data(chunk)
        yield b"data: [DONE]\n\n"

    def error_event(self, refusal: Refusal) -> bytes:
        return _data(self.error_body(refusal))


class ResponsesWire(_OpenAIWire):
    """OpenAI's Responses API (`POST /v1/responses`) for `lowtide serve`."""

    path = "/v1/responses"

    def call(self, body: object, route: Mapping[str, str]) -> ServedCall:
        return responses_call(body)

    def message(self, response: ActorResponse[object], call: ServedCall) -> JSON:
        """The `Response` the API would have answered with; it echoes the request's settings, as the API does."""
        incomplete = response.stop_reason == "max_tokens"
        usage = response.usage
        prompt = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
        created = int(time.time())
        return {
            **_settings(call, response.model),
            "id": response.ids.message_id or f"resp_{response.ids.custom_id or 'lowtide'}",
            "created_at": created,
            "completed_at": created,
            "status": "incomplete" if incomplete else "completed",
            "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
            "output": _output(response),
            "usage": {
                "input_tokens": prompt,
                "input_tokens_details": {"cached_tokens": usage.cache_read_input_tokens},
                "output_tokens": usage.output_tokens,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": prompt + usage.output_tokens,
            },
        }

    def relay(self, call: ServedCall) -> Relay:
        """A live answer to `call` streamed as it arrives (`lowtide serve --mode live`), in these events' shapes."""
        opening = _settings(call, str(call.arguments.get("model", "")))
        return ResponsesRelay(call, self.message, opening | {"status": "in_progress", "output": [], "usage": None})

    def events(self, message: Mapping[str, Any], call: ServedCall) -> Iterator[bytes]:
        """`message` replayed as the API streams it: `response.created`, `response.in_progress`, each output item
        added, filled and done, then `response.completed` (or `response.incomplete`) with the whole response.
        Items other than messages and function calls (reasoning) are in the final response, not streamed."""
        streamed = [item for item in message["output"] if item["type"] in ("message", "function_call")]
        for event in response_events({**message, "output": streamed}):
            name = str(event["type"])
            if name in ("response.completed", "response.incomplete"):
                event = {**event, "response": dict(message)}
            yield encode_event(name, event)

    def error_event(self, refusal: Refusal) -> bytes:
        body = self.error_body(refusal)["error"]
        return encode_event("error", {"type": "error", "sequence_number": 0, **body, "error": body})


def _settings(call: ServedCall, model: str) -> JSON:
    """A `Response`'s fields that echo the request's settings (as the API does), with its model and no error."""
    echo = call.echo
    return {
        "object": "response",
        "error": None,
        "model": model,
        "incomplete_details": None,
        "completed_at": None,
        "instructions": echo.get("instructions"),
        "max_output_tokens": echo.get("max_output_tokens"),
        "metadata": echo.get("metadata", {}),
        "parallel_tool_calls": echo.get("parallel_tool_calls", True),
        "temperature": echo.get("temperature", 1.0),
        "top_p": echo.get("top_p", 1.0),
        "tool_choice": echo.get("tool_choice", "auto"),
        "tools": echo.get("tools", []),
        "text": echo.get("text", {"format": {"type": "text"}}),
        "reasoning": echo.get("reasoning", {"effort": None, "summary": None}),
        "service_tier": echo.get("service_tier", "default"),
        "store": echo.get("store", True),
        "truncation": echo.get("truncation", "disabled"),
        "user": echo.get("user"),
    }


def _undated(model: str) -> str:
    found = _SNAPSHOT.fullmatch(model)
    return found["name"] if found else model


def _output(response: ActorResponse[object]) -> list[JSON]:
    """The answer's blocks as output items: consecutive text as one message, each tool use a function call, thinking
    as a reasoning item; blocks lowtide keeps whole go back as they came."""
    items: list[JSON] = []
    ordinal = 0

    def item_id(prefix: str) -> str:
        nonlocal ordinal
        ordinal += 1
        return f"{prefix}_{response.ids.message_id or 'lowtide'}_{ordinal}"

    for block in response.content:
        if isinstance(block, TextContent):
            part: JSON = {"type": "output_text", "text": block.text, "annotations": [], "logprobs": []}
            if items and items[-1]["type"] == "message":
                items[-1]["content"][0]["text"] += block.text
            else:
                items.append(
                    {"type": "message", "id": item_id("msg"), "status": "completed", "role": "assistant"}
                    | {"content": [part]}
                )
        elif isinstance(block, ToolUseContent):
            call = {"type": "function_call", "id": item_id("fc"), "call_id": block.id, "name": block.name}
            items.append({**call, "arguments": _arguments(block), "status": "completed"})
        elif isinstance(block, ThinkingContent):
            summary = [{"type": "summary_text", "text": block.thinking}]
            items.append({"type": "reasoning", "id": item_id("rs"), "summary": summary})
        elif block.type == "refusal":
            refused: JSON = {"type": "refusal", "refusal": _refusal_text(block) or ""}
            items.append(
                {"type": "message", "id": item_id("msg"), "status": "completed", "role": "assistant"}
                | {"content": [refused]}
            )
        else:
            items.append({"type": block.type, **block.data})
    return items


def _arguments(block: ToolUseContent) -> str:
    return json.dumps(block.input, ensure_ascii=False, separators=(",", ":"))


def _refusal_text(block: OtherContent) -> str | None:
    if block.type != "refusal":
        return None
    inner: object = block.data.get("data", block.data)
    text: object = cast("JSON", inner).get("refusal") if isinstance(inner, dict) else None
    return text if isinstance(text, str) else None


def _chat_usage(usage: Usage) -> JSON:
    prompt = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
    return {
        "prompt_tokens": prompt,
        "completion_tokens": usage.output_tokens,
        "total_tokens": prompt + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_input_tokens, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }


def _data(body: Mapping[str, Any]) -> bytes:
    return data_line(body)


def _refusal(error: ActorError) -> Refusal:
    message = str(error)
    match error:
        case ConfigurationError():
            return Refusal(400, "invalid_request_error", message, param=error.field)
        case StructuredOutputError():
            return Refusal(400, "invalid_request_error", message)
        case BudgetExceededError():
            # The budget is spent: no retry can succeed, so the SDKs are told not to try.
            return Refusal(429, "insufficient_quota", message, code="insufficient_quota", headers=_NO_RETRY)
        case APIError():
            status = error.status_code or 502
            code = error.error_type
            headers = {} if retryable(status, code) else _NO_RETRY
            return Refusal(status, _TYPE_OF_STATUS.get(status, "server_error"), message, code=code, headers=headers)
        case BatchRequestErrored():
            if retryable(None, error.error_type):
                return Refusal(500, "server_error", message, code=error.error_type)
            return Refusal(400, "invalid_request_error", message, code=error.error_type, headers=_NO_RETRY)
        case BatchTimeoutError() | DeadlineExceededError() | BatchRequestExpired():
            return Refusal(504, "server_error", message, code="timeout")
        case BatchRequestCanceled():
            return Refusal(500, "server_error", message, code="cancelled")
        case _:
            return Refusal(500, "server_error", message)
