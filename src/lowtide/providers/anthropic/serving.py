"""The Messages API as `lowtide serve` speaks it: a request body as an actor's call, an `ActorResponse` as the API's
`Message` (whole, or replayed as server-sent events), and lowtide's errors in the API's error shape. No I/O here."""

from __future__ import annotations

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
from lowtide.http.sse import encode_event
from lowtide.messages.relay import Relay
from lowtide.messages.wire import Refusal, ServedCall
from lowtide.providers.anthropic.models import undated
from lowtide.providers.anthropic.relay import MessagesRelay
from lowtide.providers.anthropic.stream_events import message_events
from lowtide.types import ActorResponse, OtherContent

__all__ = ["MAX_REQUEST_BYTES", "MessagesWire"]

MAX_REQUEST_BYTES = 32 * 1024 * 1024
"""The Messages API refuses a request body over 32 MB (413 `request_too_large`)."""

# The body's fields an actor's call takes as they are; `model` and `messages` are checked on their own.
_PASSED = (
    "max_tokens",
    "system",
    "tools",
    "tool_choice",
    "temperature",
    "top_p",
    "top_k",
    "stop_sequences",
    "metadata",
    "thinking",
    "output_config",
    "cache_control",
)
_KNOWN = frozenset({"model", "messages", "stream", *_PASSED})
# The API's ranges of the numbers it takes: (lowest, highest or None, whether it must be an integer).
_RANGES: Mapping[str, tuple[float, float | None, bool]] = {
    "max_tokens": (1, None, True),
    "temperature": (0, 1, False),
    "top_p": (0, 1, False),
    "top_k": (0, None, True),
}

# The API's shapes of the fields that are not numbers, in its own words for one of another type.
_SHAPES: Mapping[str, tuple[type, str]] = {
    "tools": (list, "a valid list"),
    "stop_sequences": (list, "a valid list"),
    "tool_choice": (dict, "a valid dictionary"),
    "metadata": (dict, "a valid dictionary"),
    "thinking": (dict, "a valid dictionary"),
    "output_config": (dict, "a valid dictionary"),
    "cache_control": (dict, "a valid dictionary"),
}

_STATUS_OF_TYPE: Mapping[str, int] = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
_TYPE_OF_STATUS: Mapping[int, str] = {status: kind for kind, status in _STATUS_OF_TYPE.items()}


class MessagesWire:
    """Anthropic's Messages API (`POST /v1/messages`) for `lowtide serve`."""

    path = "/v1/messages"
    key_header = "x-api-key"
    key_query = None
    max_body_bytes = MAX_REQUEST_BYTES

    def call(self, body: object, route: Mapping[str, str]) -> ServedCall:
        """The actor's call for a request body (parsed JSON); raises `Refusal` (400) for a body the API would refuse
        before anything is sent."""
        if not isinstance(body, dict):
            raise _invalid("The request body must be a JSON object.")
        given = cast("dict[str, object]", body)
        unknown = sorted(set(given) - _KNOWN)
        if unknown:
            raise _invalid(f"{unknown[0]}: Extra inputs are not permitted (not supported by lowtide serve).")
        model = given.get("model")
        if model is None:
            raise _invalid("model: Field required")
        if not isinstance(model, str) or not model:
            raise _invalid("model: Input should be a non-empty string")
        messages = given.get("messages")
        if messages is None:
            raise _invalid("messages: Field required")
        if not isinstance(messages, list) or not messages:
            raise _invalid("messages: Input should be a non-empty list of messages")
        if "max_tokens" not in given:
            raise _invalid("max_tokens: Field required")
        for name, (lowest, highest, integer) in _RANGES.items():
            _in_range(given, name, lowest, highest, integer=integer)
        for name, (shape, said) in _SHAPES.items():
            value = given.get(name)
            if value is not None and not isinstance(value, shape):
                raise _invalid(f"{name}: Input should be {said}")
        system = given.get("system")
        if system is not None and not isinstance(system, str | list):
            raise _invalid("system: Input should be a valid string or a list of text blocks")
        stream = given.get("stream", False)
        if not isinstance(stream, bool):
            raise _invalid("stream: Input should be a valid boolean")
        arguments: dict[str, object] = {"model": model, "messages": messages}
        arguments.update({name: given[name] for name in _PASSED if given.get(name) is not None})
        return ServedCall(arguments=arguments, stream=stream)

    def model_refusal(self, model: str, served: Sequence[str]) -> Refusal | None:
        """The API's 404 for a model it does not serve this key, unless `model` names one of `served`: the same id,
        or the undated alias of a dated one (`claude-haiku-4-5` for `claude-haiku-4-5-20251001`) or the reverse.
        Two different snapshots of one model are different models (their prices may differ)."""
        if any(model in (name, undated(name)) or undated(model) == name for name in served):
            return None
        return Refusal(404, "not_found_error", f"model: {model} (lowtide serve answers {', '.join(served)} here)")

    def message(self, response: ActorResponse[object], call: ServedCall) -> dict[str, object]:
        """The `Message` the API would have answered with."""
        usage = response.usage
        return {
            "id": response.ids.message_id or f"msg_{response.ids.custom_id or 'lowtide'}",
            "type": "message",
            "role": "assistant",
            "model": response.model,
            "content": [_block(block) for block in response.content],
            "stop_reason": response.stop_reason,
            "stop_sequence": response.stop_sequence,
            "usage": {
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "cache_read_input_tokens": usage.cache_read_input_tokens,
                "cache_creation_input_tokens": usage.cache_creation_input_tokens,
            },
        }

    def events(self, message: Mapping[str, object], call: ServedCall) -> Iterator[bytes]:
        """`message` replayed as the API streams it: message_start, content blocks, message_delta, message_stop."""
        for name, data in message_events(message):
            yield encode_event(name, data)

    def relay(self, call: ServedCall) -> Relay:
        """A live answer to `call` streamed as it arrives (`lowtide serve --mode live`), in these events' shapes."""
        return MessagesRelay(call, self.message)

    def error_body(self, refusal: Refusal) -> dict[str, object]:
        return {"type": "error", "error": {"type": refusal.error_type, "message": refusal.message}}

    def error_event(self, refusal: Refusal) -> bytes:
        return encode_event("error", self.error_body(refusal))

    def refusal(self, error: ActorError) -> Refusal:
        """A lowtide error as the status and error type the API uses for the same trouble."""
        return _refusal(error)


def _block(block: object) -> dict[str, object]:
    if isinstance(block, OtherContent):
        return {"type": block.type, **block.data}
    return cast("Any", block).model_dump(mode="json", exclude_none=True)


def _invalid(message: str) -> Refusal:
    return Refusal(400, "invalid_request_error", message)


def _in_range(given: Mapping[str, object], name: str, lowest: float, highest: float | None, *, integer: bool) -> None:
    """A number the body gives within the API's range, refused in the API's words; one left out (or null, for those
    the body may leave out) is the actor's to choose."""
    value: object = given.get(name)
    if value is None and (name not in given or name != "max_tokens"):
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or (integer and not isinstance(value, int)):
        raise _invalid(f"{name}: Input should be a valid {'integer' if integer else 'number'}")
    if value < lowest:
        raise _invalid(f"{name}: Input should be greater than or equal to {lowest:g}")
    if highest is not None and value > highest:
        raise _invalid(f"{name}: Input should be less than or equal to {highest:g}")


def _refusal(error: ActorError) -> Refusal:
    message = str(error)
    match error:
        case ConfigurationError() | StructuredOutputError():
            return Refusal(400, "invalid_request_error", message)
        case BudgetExceededError():
            return Refusal(402, "billing_error", message)
        case APIError():
            status = error.status_code or 502
            kind = error.error_type or _TYPE_OF_STATUS.get(status, "api_error")
            return Refusal(status, kind, message)
        case BatchRequestErrored():
            return Refusal(_STATUS_OF_TYPE.get(error.error_type, 500), error.error_type, message)
        case BatchTimeoutError() | DeadlineExceededError() | BatchRequestExpired():
            return Refusal(504, "timeout_error", message)
        case BatchRequestCanceled():
            return Refusal(500, "api_error", message)
        case _:
            return Refusal(500, "api_error", message)
