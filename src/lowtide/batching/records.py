"""Outcomes as the ledger stores them (JSON) and back: a response, or the error that belongs to one request.

What is stored must come back as the same exception class with the same fields, in any later process.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from lowtide import errors
from lowtide.answers import Answer, TextAnswer
from lowtide.errors import (
    ActorError,
    APIError,
    BatchRequestCanceled,
    BatchRequestError,
    BatchRequestErrored,
    BatchRequestExpired,
    DeadlineExceededError,
)
from lowtide.modes import BatchProcessingMode
from lowtide.types import ActorResponse, Cost, Usage

__all__ = ["answer_from_json", "error_from_json", "error_to_json", "response_from_json"]


_API_ERRORS: dict[str, type[APIError]] = {
    cls.__name__: cls for cls in vars(errors).values() if isinstance(cls, type) and issubclass(cls, APIError)
}


def response_from_json(data: dict[str, Any]) -> ActorResponse[Any]:
    """A response as the ledger stores it (a provider codec's `line_outcome` gives it;
    `parsed` is left out, rebuilt from the text with whatever model the caller asks for)."""
    return _RESPONSE.model_validate(data)


_RESPONSE = ActorResponse[Any]  # looked up once: subscripting a generic model on every call costs a hash of it


def answer_from_json(data: dict[str, Any]) -> Answer:
    """A stored answer, as `response_from_json` gives it: held as its fields (`TextAnswer`) when it is text blocks
    alone in the form the providers store such answers, so that a run read back (a resumed bulk run, `lowtide
    collect`) neither validates every answer again nor holds every response; validated otherwise."""
    if not _text_alone(data):
        return response_from_json(data)
    return TextAnswer(data, usage=_usage(data["usage"]), cost=_cost(data["cost"]), mode=_MODES[data["mode"]])


_STORED_FIELDS = frozenset(
    ("text", "content", "stop_reason", "stop_sequence", "usage", "cost", "model", "provider", "mode", "ids")
)
_TEXT_BLOCK_KEYS = frozenset(("type", "text", "citations"))
_ID_NAMES = frozenset(("message_id", "batch_id", "custom_id", "request_id"))
_MODES = {mode.value: mode for mode in BatchProcessingMode}


def _text_alone(data: Mapping[str, Any]) -> bool:
    """Whether a stored answer has exactly the fields a `TextAnswer` holds, each of the type validation would
    accept as it is: text blocks alone without citations, string or null ids, stop reason and sequence."""
    if len(data) != len(_STORED_FIELDS) or not _STORED_FIELDS.issuperset(data):
        return False
    if not isinstance(data["text"], str) or data["mode"] not in _MODES:
        return False
    if not isinstance(data["model"], str) or not isinstance(data["provider"], str):
        return False
    if not all(value is None or isinstance(value, str) for value in (data["stop_reason"], data["stop_sequence"])):
        return False
    ids, blocks, usage, cost = data["ids"], data["content"], data["usage"], data["cost"]
    if not isinstance(ids, dict) or len(cast("dict[str, Any]", ids)) != len(_ID_NAMES):
        return False
    if not _ID_NAMES.issuperset(cast("dict[str, Any]", ids)):
        return False
    if not all(value is None or isinstance(value, str) for value in cast("dict[str, Any]", ids).values()):
        return False
    if not isinstance(usage, dict) or not (cost is None or isinstance(cost, dict)) or not isinstance(blocks, list):
        return False
    for block in cast("list[Any]", blocks):
        if not isinstance(block, dict):
            return False
        fields = cast("dict[str, Any]", block)
        if fields.get("type") != "text" or not isinstance(fields.get("text"), str) or fields.get("citations"):
            return False
        if not _TEXT_BLOCK_KEYS.issuperset(fields):
            return False
    return True


_USAGES: dict[str, Usage] = {}
_COSTS: dict[str, Cost | None] = {}
_KNOWN_MAX = 4096  # distinct usages and costs kept: answers of one run repeat a few of them many times


def _usage(data: dict[str, Any]) -> Usage:
    key = repr(data)
    usage = _USAGES.get(key)
    if usage is None:
        if len(_USAGES) >= _KNOWN_MAX:  # pragma: no cover - a bound on memory, not behaviour
            _USAGES.clear()
        usage = _USAGES[key] = Usage.model_validate(data)
    return usage


def _cost(data: dict[str, Any] | None) -> Cost | None:
    if data is None:
        return None
    key = repr(data)
    if key not in _COSTS:
        if len(_COSTS) >= _KNOWN_MAX:  # pragma: no cover - a bound on memory, not behaviour
            _COSTS.clear()
        _COSTS[key] = Cost.model_validate(data)
    return _COSTS[key]


def error_to_json(error: ActorError) -> dict[str, Any]:
    data: dict[str, Any] = {"class": type(error).__name__, "message": str(error)}
    if isinstance(error, BatchRequestError):
        data.update(batch_id=error.batch_id, custom_id=error.custom_id)
    if isinstance(error, BatchRequestErrored):
        data.update(error_type=error.error_type, api_message=error.api_message, retryable=error.retryable)
    if isinstance(error, APIError):  # a live call's error (a live bulk run stores it)
        data.update(
            message=error.message, status_code=error.status_code, request_id=error.request_id,
            error_type=error.error_type,
        )  # fmt: skip
    if isinstance(error, DeadlineExceededError):
        data.update(attempts=error.attempts)
    return data


def error_from_json(data: dict[str, Any]) -> ActorError:
    kind = data.get("class")
    batch_id, custom_id = str(data.get("batch_id", "")), str(data.get("custom_id", ""))
    match kind:
        case "BatchRequestErrored":
            return BatchRequestErrored(
                batch_id=batch_id,
                custom_id=custom_id,
                error_type=str(data.get("error_type")),
                api_message=str(data.get("api_message")),
                retryable=retryable if isinstance(retryable := data.get("retryable"), bool) else None,
            )
        case "BatchRequestCanceled":
            return BatchRequestCanceled(batch_id=batch_id, custom_id=custom_id)
        case "BatchRequestExpired":
            return BatchRequestExpired(batch_id=batch_id, custom_id=custom_id)
        case "BatchRequestError":
            return BatchRequestError(str(data.get("message")), batch_id=batch_id, custom_id=custom_id)
        case "DeadlineExceededError":
            attempts = data.get("attempts")
            return DeadlineExceededError(
                str(data.get("message")), attempts=attempts if isinstance(attempts, int) else 0
            )
        case str() if kind in _API_ERRORS:
            status, request_id, error_type = data.get("status_code"), data.get("request_id"), data.get("error_type")
            return _API_ERRORS[kind](
                str(data.get("message")),
                status_code=status if isinstance(status, int) else None,
                request_id=request_id if isinstance(request_id, str) else None,
                error_type=error_type if isinstance(error_type, str) else None,
            )
        case _:
            return ActorError(str(data.get("message", "unknown error")))
