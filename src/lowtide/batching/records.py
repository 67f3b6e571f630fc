"""Outcomes as the ledger stores them (JSON) and back: a response, or the error that belongs to one request.

What is stored must come back as the same exception class with the same fields, in any later process.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from lowtide import errors
from lowtide.core.modes import BatchProcessingMode
from lowtide.errors import (
    ActorError,
    APIError,
    BatchRequestCanceled,
    BatchRequestError,
    BatchRequestErrored,
    BatchRequestExpired,
    BatchRequestUnreadable,
    DeadlineExceededError,
)
from lowtide.messages.answers import Answer, answer_of, text_alone
from lowtide.types import ActorResponse, Cost, Usage

__all__ = ["answer_from_json", "error_from_json", "error_to_json", "response_from_json"]


_API_ERRORS: dict[str, type[APIError]] = {
    cls.__name__: cls for cls in vars(errors).values() if isinstance(cls, type) and issubclass(cls, APIError)
}


def response_from_json(data: dict[str, object]) -> ActorResponse[object]:
    """A response as the ledger stores it (a provider codec's `line_outcome` gives it;
    `parsed` is left out, rebuilt from the text with whatever model the caller asks for)."""
    return _RESPONSE.model_validate(data)


_RESPONSE = ActorResponse[object]  # looked up once: subscripting a generic model on every call costs a hash of it


def answer_from_json(data: dict[str, Any]) -> Answer:
    """A stored answer, as `response_from_json` gives it: held as its fields (`TextAnswer`, through `answer_of`)
    when it is text blocks alone in the form the providers store such answers, so that a run read back (a resumed
    bulk run, `lowtide collect`) neither validates every answer again nor holds every response; validated otherwise."""
    if not _stored_shape(data):
        return response_from_json(data)
    blocks: list[object] = data["content"]
    usage, cost = _validated(_USAGES, Usage, data["usage"]), data["cost"]
    return answer_of(
        data,
        text_alone=text_alone(blocks),
        usage=usage,
        cost=None if cost is None else _validated(_COSTS, Cost, cost),
        mode=_MODES[data["mode"]],
    )


_STORED_FIELDS = frozenset(
    ("text", "content", "stop_reason", "stop_sequence", "usage", "cost", "model", "provider", "mode", "ids")
)
_MODES = {mode.value: mode for mode in BatchProcessingMode}


def _stored_shape(data: Mapping[str, object]) -> bool:
    """Whether a stored answer has exactly the fields a `TextAnswer` holds, the ones `answer_of` does not look at of
    the type validation would accept as they are (`answer_of` looks at the blocks, ids, stop reason and sequence)."""
    if len(data) != len(_STORED_FIELDS) or not _STORED_FIELDS.issuperset(data):
        return False
    if not isinstance(data["text"], str) or not isinstance(data["model"], str) or not isinstance(data["provider"], str):
        return False
    return (
        data["mode"] in _MODES
        and isinstance(data["content"], list)
        and isinstance(data["ids"], dict)
        and isinstance(data["usage"], dict)
        and (data["cost"] is None or isinstance(data["cost"], dict))
    )


ModelT = TypeVar("ModelT", bound=BaseModel)
_USAGES: dict[str, Usage] = {}
_COSTS: dict[str, Cost] = {}
_KNOWN_MAX = 4096  # distinct usages and costs kept: answers of one run repeat a few of them many times


def _validated(known: dict[str, ModelT], model: type[ModelT], data: dict[str, object]) -> ModelT:
    """`data` validated as `model`, once per distinct value (its repr: JSON read back keeps its keys' order)."""
    key = repr(data)
    found = known.get(key)
    if found is None:
        if len(known) >= _KNOWN_MAX:  # pragma: no cover - a bound on memory, not behaviour
            known.clear()
        found = known[key] = model.model_validate(data)
    return found


def error_to_json(error: ActorError) -> dict[str, object]:
    data: dict[str, object] = {"class": type(error).__name__, "message": str(error)}
    if isinstance(error, BatchRequestError):
        data.update(batch_id=error.batch_id, custom_id=error.custom_id)
    if isinstance(error, BatchRequestErrored):
        data.update(error_type=error.error_type, api_message=error.api_message, retryable=error.retryable)
        if error.kind is not None:
            data.update(kind=error.kind.__name__)
        if error.request_id is not None:
            data.update(request_id=error.request_id)
    if isinstance(error, BatchRequestUnreadable):
        data.update(raw_line=error.raw_line, reason=error.reason)
    if isinstance(error, APIError):  # a live call's error (a live bulk run stores it)
        data.update(
            message=error.message, status_code=error.status_code, request_id=error.request_id,
            error_type=error.error_type,
        )  # fmt: skip
    if isinstance(error, DeadlineExceededError):
        data.update(attempts=error.attempts)
    return data


def error_from_json(data: dict[str, object]) -> ActorError:
    kind = data.get("class")
    batch_id, custom_id = str(data.get("batch_id", "")), str(data.get("custom_id", ""))
    match kind:
        case "BatchRequestErrored":
            run_id = data.get("request_id")
            return BatchRequestErrored(
                batch_id=batch_id,
                custom_id=custom_id,
                error_type=str(data.get("error_type")),
                api_message=str(data.get("api_message")),
                retryable=data.get("retryable") is True,  # stored with every such error: the provider's word
                kind=_api_error_class(data.get("kind")),
                request_id=run_id if isinstance(run_id, str) else None,
            )
        case "BatchRequestUnreadable":
            return BatchRequestUnreadable(
                batch_id=batch_id,
                custom_id=custom_id,
                raw_line=str(data.get("raw_line", "")),
                reason=str(data.get("reason", "")),
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


def _api_error_class(name: object) -> type[errors.APIError] | None:
    """The `APIError` class a stored error's `kind` names, if it names one."""
    found: object = getattr(errors, name, None) if isinstance(name, str) else None
    return found if isinstance(found, type) and issubclass(found, errors.APIError) else None
