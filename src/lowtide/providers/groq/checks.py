"""What is checked of a Groq request before anything is recorded or sent: its parameters (by encoding it, which
refuses what Groq would), and its size against what Groq takes in one request (a live body, or a batch's line)."""

from __future__ import annotations

from lowtide import ActorRequest
from lowtide.providers import InputLimits, body_json, byte_size
from lowtide.providers.groq.requests import encode_request

__all__ = ["MAX_LIVE_BYTES", "input_limits", "preflight"]

MAX_LIVE_BYTES = 20 * 1024 * 1024
"""The most bytes a request body may hold (Groq refuses larger ones with a 413)."""
_LINE_ROOM = 256
"""The bytes a request's custom id, method and url add to it as a line of a batch's input file."""


def input_limits(request: ActorRequest, *, batch_bytes: int | None = None) -> InputLimits:
    """The limits a request of this model and settings is held to: a live body's, or (given `batch_bytes`, the
    most a batch's input file takes) a batch line's, whichever is lower."""
    most = MAX_LIVE_BYTES if batch_bytes is None else min(MAX_LIVE_BYTES, batch_bytes) - _LINE_ROOM
    where = "Groq" if batch_bytes is None else "Groq's Batch API"
    return InputLimits(max_bytes=most, model=request.model, where=where)


def preflight(request: ActorRequest, *, batch_bytes: int | None = None) -> None:
    """Refuse, with a `ConfigurationError` naming the field, what Groq would refuse of `request`."""
    body = body_json(encode_request(request), ascii_json=batch_bytes is not None)
    limits = input_limits(request, batch_bytes=batch_bytes)
    limits.check_size(byte_size(body), request)
