"""What is checked of a Together request before anything is recorded or sent: its parameters (by encoding it, which
refuses what Together would), its size against what Together takes in one request (a live body, or a batch's line),
and its model against `GET /v1/models`, read once per endpoint and key in a process (`model_names`): a name it does
not list is refused with the closest names it does. Together has no question for one model, and its list leaves out
a fine-tune's or a dedicated endpoint's name: `provider_options: {together: {unlisted_model: true}}` sends such a name
unchecked (the API has the last word). When the list cannot be read, the check is skipped."""

from __future__ import annotations

from together import AsyncTogether

from lowtide import ActorRequest
from lowtide.providers import InputLimits, body_json, byte_size, credential_of, json_objects
from lowtide.providers.model_names import model_names
from lowtide.providers.together.errors import translate_errors
from lowtide.providers.together.options import options_of
from lowtide.providers.together.requests import encode_request

__all__ = ["MAX_LIVE_BYTES", "check_model", "input_limits", "preflight"]

MAX_LIVE_BYTES = 20 * 1024 * 1024
"""The most bytes a request body is taken with here (Together names no lower limit for one request)."""
_LINE_ROOM = 256
_LOOKUP_TIMEOUT = 30.0
_INSIST = (
    "(A model the list leaves out, a fine-tune's or a dedicated endpoint's, is sent with provider_options: "
    "{together: {unlisted_model: true}}.)"
)
"""The bytes a request's custom id, method and url add to it as a line of a batch's input file."""


def input_limits(request: ActorRequest, *, batch_bytes: int | None = None) -> InputLimits:
    """The limits a request is held to: a live body's, or (given `batch_bytes`) a batch line's."""
    most = MAX_LIVE_BYTES if batch_bytes is None else min(MAX_LIVE_BYTES, batch_bytes) - _LINE_ROOM
    where = "Together" if batch_bytes is None else "Together's Batch API"
    return InputLimits(max_bytes=most, model=request.model, where=where)


def preflight(request: ActorRequest, *, batch_bytes: int | None = None) -> None:
    """Refuse, with a `ConfigurationError` naming the field, what Together would refuse of `request`."""
    body = body_json(encode_request(request), ascii_json=batch_bytes is not None)
    input_limits(request, batch_bytes=batch_bytes).check_size(byte_size(body), request)


async def check_model(client: AsyncTogether, *, owned: bool, request: ActorRequest) -> None:
    """Refuse the request's model (a `ConfigurationError` with "did you mean") when `GET /v1/models` does not list
    it, unless the request insists (`unlisted_model`)."""
    if options_of(request).unlisted_model:
        return
    asking = client.with_options(max_retries=0, timeout=_LOOKUP_TIMEOUT)
    endpoint = str(client.base_url).rstrip("/")
    names = model_names("Together", endpoint, credential_of(client.api_key, owned=owned, client=client))

    async def listing() -> list[str]:
        with translate_errors():
            listed = await asking.get("/v1/models", cast_to=object)
        # Together answers a bare list of models.
        return [name for model in json_objects(listed) if isinstance(name := model.get("id"), str)]

    await names.check(request.model, listing=listing, hint=_INSIST)
