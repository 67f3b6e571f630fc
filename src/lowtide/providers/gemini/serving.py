"""The Gemini API's `generateContent` as `lowtide serve` speaks it, so that a program using the google-genai SDK gets
batch prices by changing its base URL: a request body as an actor's call (`served_requests.py`), an `ActorResponse`
as the API's `GenerateContentResponse` (whole, or, for `streamGenerateContent`, as one server-sent event holding the
whole answer), and lowtide's errors in Google's error shape (`{"error": {"code", "message", "status"}}`). No I/O here.

One route answers both API versions the SDK calls (`v1beta`, its default, and `v1`) and both methods
(`generateContent`, `streamGenerateContent`), so that a request asked streamed and unstreamed, or through either
version, is one request to the ledger. `countTokens` is not served: a count is not an answer a batch gives."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Protocol

from lowtide import (
    ActorError,
    ActorResponse,
    APIError,
    BatchRequestCanceled,
    BatchRequestErrored,
    BatchRequestExpired,
    BatchTimeoutError,
    BudgetExceededError,
    ConfigurationError,
    DeadlineExceededError,
    InvalidRequestError,
    StructuredOutputError,
    TextContent,
    ThinkingContent,
    ToolUseContent,
)
from lowtide.providers import Refusal, Relay, ServedCall, Wire
from lowtide.providers.gemini.relay import GenerateContentRelay, data_event
from lowtide.providers.gemini.requests import SYNTHETIC_CALL_ID
from lowtide.providers.gemini.served_requests import INVALID, call_of, invalid

__all__ = ["GEMINI_WIRES", "MAX_REQUEST_BYTES", "GenerateContentWire"]

MAX_REQUEST_BYTES = 20 * 1024 * 1024
"""The Gemini API takes at most 20 MB in one request (inline data included)."""

_VERSIONS = ("v1beta", "v1")
_METHODS = {"generateContent": False, "streamGenerateContent": True}
# Google's status names by HTTP status (google.rpc.Code as the API maps it).
_STATUS_NAMES: Mapping[int, str] = {
    400: INVALID,
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    405: INVALID,
    409: "ABORTED",
    413: INVALID,
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "UNIMPLEMENTED",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_STATUS_OF_NAME: Mapping[str, int] = {
    INVALID: 400,
    "FAILED_PRECONDITION": 400,
    "OUT_OF_RANGE": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "ABORTED": 409,
    "ALREADY_EXISTS": 409,
    "RESOURCE_EXHAUSTED": 429,
    "CANCELLED": 499,
    "INTERNAL": 500,
    "UNKNOWN": 500,
    "DATA_LOSS": 500,
    "UNIMPLEMENTED": 501,
    "UNAVAILABLE": 503,
    "DEADLINE_EXCEEDED": 504,
}


class _Other(Protocol):
    """A block lowtide keeps whole (`OtherContent`)."""

    @property
    def data(self) -> Mapping[str, object]: ...


_FINISH = {"end_turn": "STOP", "tool_use": "STOP", "stop_sequence": "STOP", "max_tokens": "MAX_TOKENS"}


class GenerateContentWire:
    """The Gemini API's `POST /{version}/models/{model}:generateContent` (and `:streamGenerateContent`) for
    `lowtide serve`."""

    path = "/{version}/models/{model}:{method}"
    key_header = "x-goog-api-key"
    key_query = "key"
    max_body_bytes = MAX_REQUEST_BYTES

    def call(self, body: object, route: Mapping[str, str]) -> ServedCall:
        """The actor's call a request asks for: its model and method from the path, the rest from its body."""
        version, model, method = route.get("version"), route.get("model", ""), route.get("method", "")
        if version not in _VERSIONS or method not in _METHODS:
            raise Refusal(
                404,
                "NOT_FOUND",
                f"/{version}/models/{model}:{method} is not served here (lowtide serve answers generateContent and"
                f" streamGenerateContent, under {' and '.join(_VERSIONS)}).",
            )
        return call_of(body, model.removeprefix("models/"), stream=_METHODS[method])

    def model_refusal(self, model: str, served: Sequence[str]) -> Refusal | None:
        """The API's 404 for a model it does not serve, unless `model` is one of `served` (with or without the
        `models/` prefix of its resource name)."""
        if any(model.removeprefix("models/") == name.removeprefix("models/") for name in served):
            return None
        return Refusal(
            404,
            "NOT_FOUND",
            f"models/{model} is not found for API version v1beta, or is not supported for generateContent"
            f" (lowtide serve answers {', '.join(served)} here).",
        )

    def message(self, response: ActorResponse[object], call: ServedCall) -> dict[str, object]:
        """The `GenerateContentResponse` the API would have answered with."""
        usage = response.usage
        prompt = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
        metadata: dict[str, object] = {
            "promptTokenCount": prompt,
            "candidatesTokenCount": usage.output_tokens,
            "totalTokenCount": prompt + usage.output_tokens,
        }
        if usage.cache_read_input_tokens:
            metadata["cachedContentTokenCount"] = usage.cache_read_input_tokens
        stop = response.stop_reason or "end_turn"
        candidate: dict[str, object] = {
            "content": {"role": "model", "parts": [_part(block) for block in response.content]},
            "finishReason": _FINISH.get(stop, stop if stop.isupper() else "OTHER"),
            "index": 0,
        }
        ids = response.ids
        return {
            "candidates": [candidate],
            "usageMetadata": metadata,
            "modelVersion": response.model,
            "responseId": ids.message_id or ids.custom_id or "lowtide",
        }

    def events(self, message: Mapping[str, object], call: ServedCall) -> Iterator[bytes]:
        """`message` as the API streams it with `alt=sse`: one event (the whole answer is known at once)."""
        yield data_event(message)

    def relay(self, call: ServedCall) -> Relay:
        """A live answer to `call` streamed as it arrives (`lowtide serve --mode live`): a chunk per piece of text."""
        return GenerateContentRelay(call, self.message)

    def error_body(self, refusal: Refusal) -> dict[str, object]:
        status = refusal.error_type if refusal.error_type in _STATUS_OF_NAME else None
        name = status or _STATUS_NAMES.get(refusal.status, "INTERNAL" if refusal.status >= 500 else INVALID)
        return {"error": {"code": refusal.status, "message": refusal.message, "status": name}}

    def error_event(self, refusal: Refusal) -> bytes:
        return data_event(self.error_body(refusal))

    def refusal(self, error: ActorError) -> Refusal:
        """A lowtide error as the HTTP status and Google status name the API uses for the same trouble."""
        message = str(error)
        match error:
            case ConfigurationError() | StructuredOutputError():
                return invalid(message)
            case BudgetExceededError():
                return Refusal(429, "RESOURCE_EXHAUSTED", message)
            case APIError():
                # No status: lowtide's own reading of the answer (a prompt blocked, an answer stopped for safety
                # is an InvalidRequestError naming Gemini's reason), else a connection that failed.
                status = error.status_code or (400 if isinstance(error, InvalidRequestError) else 502)
                name = error.error_type if error.error_type in _STATUS_OF_NAME else _STATUS_NAMES.get(status)
                return Refusal(status, name or "UNKNOWN", message)
            case BatchRequestErrored():
                known = error.error_type in _STATUS_OF_NAME
                return Refusal(
                    _STATUS_OF_NAME.get(error.error_type, 500), error.error_type if known else "INTERNAL", message
                )
            case BatchTimeoutError() | DeadlineExceededError() | BatchRequestExpired():
                return Refusal(504, "DEADLINE_EXCEEDED", message)
            case BatchRequestCanceled():
                return Refusal(499, "CANCELLED", message)
            case _:
                return Refusal(500, "INTERNAL", message)


GEMINI_WIRES: tuple[Wire, ...] = (GenerateContentWire(),)
"""What a Gemini batch provider's `serving_wires()` returns."""


def _part(block: TextContent | ThinkingContent | ToolUseContent | _Other) -> dict[str, object]:
    """A content block as the part Gemini would have written: text, a thought, a function call (its id unless
    lowtide made it up); a block Gemini sent that lowtide does not model, as it came."""
    if isinstance(block, TextContent):
        return {"text": block.text}
    if isinstance(block, ThinkingContent):
        thought: dict[str, object] = {"text": block.thinking, "thought": True}
        if block.signature:
            thought["thoughtSignature"] = block.signature
        return thought
    if isinstance(block, ToolUseContent):
        call: dict[str, object] = {"name": block.name, "args": block.input}
        if not block.id.startswith(SYNTHETIC_CALL_ID):
            call["id"] = block.id
        return {"functionCall": call}
    return dict(block.data)
