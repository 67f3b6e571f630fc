"""What is checked of a Groq request before anything is recorded or sent: its parameters (by encoding it, which
refuses what Groq would), its size against what Groq takes in one request (a live body, or a batch's line), and its
model: `GET /openai/v1/models/{model}`, asked once per model, endpoint and key in a process (`model_names`), an
unknown name refused with the closest names `GET /openai/v1/models` lists. A model the list does not show that the
endpoint serves when asked by name (a preview, one the organisation was given) goes through; when the endpoint cannot
say, the check is skipped and the API has the last word."""

from __future__ import annotations

from groq import AsyncGroq

from lowtide import ActorRequest
from lowtide.providers import InputLimits, body_json, byte_size, credential_of
from lowtide.providers.groq.errors import translate_errors
from lowtide.providers.groq.requests import encode_request
from lowtide.providers.model_names import model_names

__all__ = ["MAX_LIVE_BYTES", "check_model", "input_limits", "preflight"]

MAX_LIVE_BYTES = 20 * 1024 * 1024
"""The most bytes a request body may hold (Groq refuses larger ones with a 413)."""
_LINE_ROOM = 256
_LOOKUP_TIMEOUT = 30.0
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


async def check_model(client: AsyncGroq, *, owned: bool, request: ActorRequest) -> None:
    """Refuse the request's model (a `ConfigurationError` with "did you mean") when Groq's models endpoint says it
    has none."""
    asking = client.with_options(max_retries=0, timeout=_LOOKUP_TIMEOUT)
    endpoint = str(client.base_url).rstrip("/")
    names = model_names("Groq", endpoint, credential_of(client.api_key, owned=owned, client=client))

    async def lookup(name: str) -> object:
        with translate_errors():
            return await asking.models.retrieve(name)

    async def listing() -> list[str]:
        with translate_errors():
            listed = await asking.models.list()
        return [model.id for model in listed.data]

    await names.check(request.model, lookup=lookup, listing=listing)
