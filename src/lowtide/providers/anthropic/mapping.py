"""Pure translations between lowtide's types and Anthropic's: request -> Messages params, message -> response,
batch result line -> outcome, SDK exception -> `ActorError`. No I/O here."""

from __future__ import annotations

import hashlib
import inspect
import json
import re
from collections.abc import Callable, Generator, Mapping
from contextlib import contextmanager
from typing import Any, assert_never, cast

import anthropic
import httpx2
from anthropic import transform_schema
from anthropic.types import Message
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from anthropic.types.messages import MessageBatchIndividualResponse
from anthropic.types.messages.batch_create_params import Request as BatchEntry
from pydantic import BaseModel, TypeAdapter, ValidationError

from lowtide.config import BatchProcessingMode
from lowtide.errors import (
    ActorError,
    APIConnectionError,
    APIError,
    APITimeoutError,
    AuthenticationError,
    BatchRequestCanceled,
    BatchRequestErrored,
    BatchRequestExpired,
    ConfigurationError,
    InvalidRequestError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    StructuredOutputError,
)
from lowtide.pricing import cost_of
from lowtide.types import ActorRequest, ActorResponse, ContentBlock, ProviderIds, Usage

__all__ = [
    "CUSTOM_ID_PATTERN",
    "PROVIDER_NAME",
    "BatchEntry",
    "api_error_from_status",
    "batch_entry",
    "check_custom_id",
    "custom_id_for",
    "parse_response",
    "split_for_sdk",
    "to_batch_request",
    "to_message_params",
    "to_outcome",
    "to_response",
    "translate_errors",
]

PROVIDER_NAME = "anthropic"
CUSTOM_ID_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

_OPTIONAL_PARAMS = ("temperature", "top_p", "top_k", "metadata", "thinking", "tool_choice", "cache_control")


def to_message_params(request: ActorRequest) -> dict[str, Any]:
    """The Messages API parameters for `request`, identical for a live call and a batch entry."""
    params: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": [message.model_dump() for message in request.messages],
    }
    if request.system is not None:
        params["system"] = request.system
    if request.tools:
        params["tools"] = [tool.model_dump(exclude_none=True) for tool in request.tools]
    if request.stop_sequences:
        params["stop_sequences"] = list(request.stop_sequences)
    for name in _OPTIONAL_PARAMS:
        value = getattr(request, name)
        if value is not None:
            params[name] = value
    output_config = dict(request.output_config or {})
    if request.response_model is not None:
        output_config["format"] = {"type": "json_schema", "schema": transform_schema(request.response_model)}
    if output_config:
        params["output_config"] = output_config
    clashes = set(request.extra_params) & set(params)
    if clashes:
        raise ConfigurationError(
            f"extra_params repeats parameter(s) already set: {', '.join(sorted(clashes))}", field="extra_params"
        )
    params.update(request.extra_params)
    return params


def split_for_sdk(params: dict[str, Any], method: Callable[..., Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split Messages parameters into those `method` names and the rest, which travel in `extra_body`.

    The SDK's typed signatures lag the API (2.x dropped `temperature`, `top_p` and `top_k`), yet the API still
    takes them, and a batch entry sends every parameter as it is: live calls must send the same.
    """
    accepted = _keyword_parameters(method)
    named = {name: value for name, value in params.items() if name in accepted}
    return named, {name: value for name, value in params.items() if name not in accepted}


def _keyword_parameters(method: Callable[..., Any]) -> frozenset[str]:
    function = getattr(method, "__func__", method)
    cached = _SIGNATURES.get(function)
    if cached is None:
        cached = _SIGNATURES[function] = frozenset(inspect.signature(function).parameters) - _SDK_OPTIONS
    return cached


_SIGNATURES: dict[object, frozenset[str]] = {}
# The SDK's own request options, never Messages parameters.
_SDK_OPTIONS = frozenset({"self", "extra_headers", "extra_query", "extra_body", "timeout"})


def check_custom_id(custom_id: str) -> str:
    if not CUSTOM_ID_PATTERN.fullmatch(custom_id):
        raise ConfigurationError(
            f"custom_id {custom_id!r} is invalid: use 1 to 64 letters, digits, '_' or '-'", field="custom_id"
        )
    return custom_id


def to_batch_request(custom_id: str, request: ActorRequest) -> BatchEntry:
    return batch_entry(custom_id, to_message_params(request))


def batch_entry(custom_id: str, params: dict[str, Any]) -> BatchEntry:
    # `params` come from `to_message_params` (now or before a restart, through the ledger): the Messages API's
    # parameter shape, built from validated fields. The SDK's TypedDict cannot see that through a dynamically
    # built dict, hence the cast at the one place the shape is declared.
    return {"custom_id": check_custom_id(custom_id), "params": cast("MessageCreateParamsNonStreaming", params)}


def custom_id_for(key: str) -> str:
    """The `custom_id` a keyed request carries: the key itself when the API allows it, else a digest of it."""
    if CUSTOM_ID_PATTERN.fullmatch(key):
        return key
    return "k-" + hashlib.sha256(key.encode()).hexdigest()[:40]


def to_response(
    message: Message,
    *,
    mode: BatchProcessingMode,
    ids: ProviderIds,
    response_model: type[BaseModel] | None = None,
) -> ActorResponse[Any]:
    """Map an API `Message` to an `ActorResponse`, priced at `mode`'s rates and parsed into `response_model`.

    Raises `StructuredOutputError` (carrying the response) when the answer does not fit `response_model`.
    """
    raw_blocks: list[dict[str, Any]] = [block.model_dump(mode="json", exclude_none=True) for block in message.content]
    content = _content_blocks(raw_blocks)
    text = "".join(block["text"] for block in raw_blocks if block.get("type") == "text")
    usage = Usage(
        input_tokens=message.usage.input_tokens,
        output_tokens=message.usage.output_tokens,
        cache_read_input_tokens=message.usage.cache_read_input_tokens or 0,
        cache_creation_input_tokens=message.usage.cache_creation_input_tokens or 0,
    )
    response: ActorResponse[Any] = ActorResponse[Any].model_validate(
        {
            "text": text,
            "content": content,
            "stop_reason": message.stop_reason,
            "stop_sequence": message.stop_sequence,
            "usage": usage,
            "cost": cost_of(message.usage.model_dump(mode="json", exclude_none=True), message.model, mode=mode),
            "model": message.model,
            "provider": PROVIDER_NAME,
            "mode": mode,
            "ids": ids.model_copy(update={"message_id": message.id}),
        }
    )
    return response if response_model is None else parse_response(response, response_model)


_BLOCKS: TypeAdapter[list[ContentBlock]] = TypeAdapter(list[ContentBlock])
_MODELLED_BLOCKS = ("text", "tool_use", "thinking")


def _content_blocks(raw_blocks: list[dict[str, Any]]) -> list[ContentBlock]:
    # Blocks lowtide does not model are kept whole rather than dropped.
    shaped = [
        block if block.get("type") in _MODELLED_BLOCKS else {"type": str(block.get("type")), "data": block}
        for block in raw_blocks
    ]
    return _BLOCKS.validate_python(shaped)


def parse_response(response: ActorResponse[Any], model: type[BaseModel]) -> ActorResponse[Any]:
    """`response` with `parsed` set to its answer validated as `model`; `StructuredOutputError` if it does not fit."""
    source = response.text
    if not source and response.tool_calls:
        source = json.dumps(response.tool_calls[0].input)
    try:
        parsed = model.model_validate_json(source)
    except ValidationError as exc:
        raise StructuredOutputError(
            f"The answer does not fit {model.__name__}: {exc.error_count()} problem(s); first: "
            f"{_first_problem(exc)}. The raw text is kept on the error and its response.",
            text=source,
            model_name=model.__name__,
            response=response,
        ) from None
    return response.model_copy(update={"parsed": parsed})


def _first_problem(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "(root)"
    return f"{where}: {first['msg']}"


def to_outcome(
    line: MessageBatchIndividualResponse,
    *,
    batch_id: str,
    request_id: str | None = None,
    response_model: type[BaseModel] | None = None,
) -> ActorResponse[Any] | ActorError:
    """One results line as the caller's outcome: a response, or the error that belongs to that request alone.

    A succeeded answer is parsed into `response_model` when one is given.
    `request_id` is that of the call that created the batch: the id Anthropic support asks for.
    """
    result = line.result
    custom_id = line.custom_id
    match result.type:
        case "succeeded":
            ids = ProviderIds(batch_id=batch_id, custom_id=custom_id, request_id=request_id)
            try:
                return to_response(
                    result.message, mode=BatchProcessingMode.BATCH, ids=ids, response_model=response_model
                )
            except StructuredOutputError as exc:
                return exc
        case "errored":
            error = result.error.error
            return BatchRequestErrored(
                batch_id=batch_id, custom_id=custom_id, error_type=error.type, api_message=error.message
            )
        case "canceled":
            return BatchRequestCanceled(batch_id=batch_id, custom_id=custom_id)
        case "expired":
            return BatchRequestExpired(batch_id=batch_id, custom_id=custom_id)
        case _:  # pragma: no cover - a result type newer than this code
            assert_never(result.type)


def api_error_from_status(
    status: int,
    message: str,
    *,
    request_id: str | None,
    error_type: str | None,
    retry_after: float | None = None,
) -> APIError:
    """The most specific `APIError` for an HTTP status (and the API's error type, which wins for 529s)."""
    common: dict[str, Any] = {"status_code": status, "request_id": request_id, "error_type": error_type}
    if status == 429:
        return RateLimitError(message, retry_after=retry_after, **common)
    if status == 529 or error_type == "overloaded_error":
        return OverloadedError(message, **common)
    if status >= 500:
        return ServerError(message, **common)
    errors: Mapping[int, type[APIError]] = {
        401: AuthenticationError,
        403: PermissionDeniedError,
        404: NotFoundError,
    }
    return errors.get(status, InvalidRequestError)(message, **common)


@contextmanager
def translate_errors() -> Generator[None]:
    """Re-raise every SDK exception as the matching `ActorError`, keeping status code and request id."""
    try:
        yield
    except anthropic.APITimeoutError as exc:
        raise APITimeoutError("The API did not answer in time.") from exc
    except anthropic.APIConnectionError as exc:
        raise APIConnectionError(f"Could not reach the API: {exc.message}") from exc
    except json.JSONDecodeError as exc:
        # The SDK decodes results line by line: a line cut short means the download broke.
        raise APIConnectionError(f"The results download broke off mid-line (at character {exc.pos}).") from exc
    except httpx2.TransportError as exc:
        # A body streamed after the status line (batch results) fails with the transport's own error.
        raise APIConnectionError(f"The connection to the API broke: {type(exc).__name__}") from exc
    except anthropic.APIStatusError as exc:
        raise api_error_from_status(
            exc.status_code,
            exc.api_message or exc.message,
            request_id=exc.request_id,
            error_type=exc.type,
            retry_after=_retry_after(exc.response.headers.get("retry-after")),
        ) from exc
    except anthropic.AnthropicError as exc:
        raise APIError(f"The Anthropic client failed: {exc}") from exc


def _retry_after(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if seconds >= 0 else None
