"""What `lowtide serve` needs from a provider's wire format, and what such a format gives back: the call a request
body asks for, the models it may ask for, and a refusal in the API's own terms. Neutral: each provider's package
implements `Wire`."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from lowtide.errors import ActorError
from lowtide.messages.relay import Relay
from lowtide.types import ActorResponse

__all__ = ["REFUSAL_TYPES", "LiveWire", "Refusal", "ServedCall", "Wire", "Wires"]

REFUSAL_TYPES = frozenset(
    {"invalid_request_error", "authentication_error", "not_found_error", "request_too_large", "api_error"}
)
"""The error types of the refusals `lowtide serve` makes on its own: a body it cannot read or a method it does not
serve, a wrong key, a path it does not serve, a body over the limit, a failure of its own."""


@dataclass(frozen=True)
class ServedCall:
    """One request body as an actor's call: the keyword arguments of `Actor.run` (plain JSON, so that their digest can
    key the ledger), whether to stream the answer, and what of the request the answer echoes back (some APIs repeat
    the request's settings in their answer, or shape a stream by them)."""

    arguments: dict[str, Any] = field(default_factory=dict[str, Any])
    stream: bool = False
    echo: dict[str, Any] = field(default_factory=dict[str, Any])


class Refusal(Exception):
    """A request refused in the API's own terms: an HTTP status, the API's error type and a message.

    The refusals `lowtide serve` makes itself, before any wire has read the body, name their type as the Messages API
    does (`REFUSAL_TYPES`); a wire whose API names them otherwise translates them in `error_body`.
    """

    def __init__(
        self,
        status: int,
        error_type: str,
        message: str,
        *,
        code: str | None = None,
        param: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error_type = error_type
        self.message = message
        self.code = code
        """The API's finer error code, for APIs that give one beside the type."""
        self.param = param
        """The request's field at fault, for APIs that name it."""
        self.headers: Mapping[str, str] = dict(headers or {})
        """Headers the answer carries, e.g. one telling SDKs not to retry."""


class Wire(Protocol):
    """One provider API's request and answer shapes (e.g. `lowtide.providers.anthropic.serving.MessagesWire`)."""

    @property
    def path(self) -> str:
        """The route it answers, e.g. `/v1/messages`, in Starlette's path syntax (`/{version}/models/{model}:{method}`
        for a route with parameters, which `call` reads)."""
        ...

    @property
    def key_header(self) -> str | None:
        """The header the API's SDKs send their key in (`x-goog-api-key`, say), None for an API whose SDKs send it in
        `x-api-key` or as `Authorization: Bearer` (which every wire accepts)."""
        ...

    @property
    def key_query(self) -> str | None:
        """The query parameter the API also takes its key in (Gemini's `?key=`), None for an API that takes none.
        (The access log never writes a query string.)"""
        ...

    @property
    def max_body_bytes(self) -> int:
        """The most bytes the API takes in one request body: a larger one is refused (413) before it is read."""
        ...

    def call(self, body: object, route: Mapping[str, str]) -> ServedCall:
        """The call a parsed JSON body asks for; raises `Refusal` for a body the API would refuse unsent. `route`
        holds the values of the `{parameters}` of `path` in the request's URL (an API that names the model in its
        path, as Gemini's does), empty for a path without any."""
        ...

    def model_refusal(self, model: str, served: Sequence[str]) -> Refusal | None:
        """None when a request naming `model` asks for one of the `served` models (by its own name, or by the dated or
        undated name of the same model, as the provider names them); else the API's answer to a model this key
        cannot use."""
        ...

    def message(self, response: ActorResponse[object], call: ServedCall) -> dict[str, Any]:
        """The answer to `call` as the API's JSON."""
        ...

    def events(self, message: Mapping[str, Any], call: ServedCall) -> Iterator[bytes]:
        """That answer replayed as the API streams it (server-sent events)."""
        ...

    def error_body(self, refusal: Refusal) -> dict[str, Any]: ...

    def error_event(self, refusal: Refusal) -> bytes: ...

    def refusal(self, error: ActorError) -> Refusal:
        """A lowtide error as the status and error type the API uses for the same trouble."""
        ...


@runtime_checkable
class LiveWire(Protocol):
    """A `Wire` that can also relay a live answer while it is written (`lowtide serve --mode live`): each wire of
    lowtide's own providers is one. A wire without `relay` gets the finished answer replayed, as in batch mode."""

    def relay(self, call: ServedCall) -> Relay:
        """A new stream's writer for `call`: the server-sent events of each step of the answer as it arrives
        (`lowtide.messages.relay.steps`), in the API's own stream shapes."""
        ...


Wires = Sequence[Wire]
"""The wires one provider serves (`Provider.serving_wires`): each answers its own path."""
