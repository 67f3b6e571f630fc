"""What is checked of an OpenAI-compatible request before anything is recorded or sent, from its dialect alone: its
parameters (by encoding it, which refuses what the API would) and its size against what the API takes in one request
(a live body, or a batch's line). Its model is checked through the SDK (`sdk.check_model`)."""

from __future__ import annotations

from pydantic import BaseModel

from lowtide import ActorRequest
from lowtide.providers import InputLimits, body_json, byte_size
from lowtide.providers.openai_compatible.chat import encode_request
from lowtide.providers.openai_compatible.dialect import Dialect

__all__ = ["input_limits", "preflight"]

_LINE_ROOM = 256
"""The bytes a request's custom id, method and url add to it as a line of a batch's input file."""


def input_limits(request: ActorRequest, dialect: Dialect[BaseModel], *, batch_bytes: int | None = None) -> InputLimits:
    """The limits a request is held to: a live body's, or (given `batch_bytes`, the most a batch's input file takes)
    a batch line's, whichever is lower."""
    most = dialect.max_live_bytes if batch_bytes is None else min(dialect.max_live_bytes, batch_bytes) - _LINE_ROOM
    where = dialect.owner if batch_bytes is None else f"{dialect.owner}'s Batch API"
    return InputLimits(max_bytes=most, model=request.model, where=where)


def preflight(request: ActorRequest, dialect: Dialect[BaseModel], *, batch_bytes: int | None = None) -> None:
    """Refuse, with a `ConfigurationError` naming the field, what the API would refuse of `request`."""
    body = body_json(encode_request(request, dialect), ascii_json=batch_bytes is not None)
    input_limits(request, dialect, batch_bytes=batch_bytes).check_size(byte_size(body), request)
