"""What Azure OpenAI would refuse of a request, refused before it is recorded or sent: its parameters (as the encoder
finds them), its size (50 MB a request, a batch line within Azure's 200 MB file) and its input against the context
window of the model its deployment serves (`models.context_window`; the window of a model lowtide does not know is
not checked). Nothing is asked of the API: Azure's data plane lists models, not a resource's deployments, and has no
token counting, so an unknown deployment is the API's 404 (`DeploymentNotFound`), raised as the call's error."""

from __future__ import annotations

from lowtide.messages.limits import InputLimits, body_json, byte_size, check_input
from lowtide.providers.azure_openai.requests import encode_request, model_served
from lowtide.providers.openai.checks import MAX_REQUEST_BYTES, TOOL_TOKENS
from lowtide.providers.openai.models import context_window
from lowtide.types import ActorRequest

__all__ = ["MAX_REQUEST_BYTES", "check_request", "limits_of"]


def limits_of(request: ActorRequest, *, body_bytes: int, max_bytes: int, where: str) -> InputLimits:
    """The limits of requests like `request`, in a mode taking `max_bytes` a request."""
    return InputLimits(
        max_bytes=max_bytes,
        window=context_window(model_served(request)),
        fixed_tokens=TOOL_TOKENS if request.tools else 0,
        body_bytes=body_bytes,
        model=request.model,
        where=where,
    )


async def check_request(request: ActorRequest, *, max_bytes: int, where: str, ascii_json: bool) -> InputLimits:
    """Refuse `request` if Azure would; its limits when it passes."""
    body = body_json(encode_request(request).body, ascii_json=ascii_json)
    limits = limits_of(request, body_bytes=byte_size(body), max_bytes=max_bytes, where=where)
    await check_input(request, size=byte_size(body), limits=limits, count=_uncounted)
    return limits


async def _uncounted() -> int | None:
    return None
