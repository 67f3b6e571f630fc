"""An `ActorRequest` as the body of Together's `POST /v1/chat/completions`: the same body for a live call and a batch
line. Pure; what Together would refuse raises `ConfigurationError` naming the field, before sending."""

from __future__ import annotations

from lowtide.providers.openai_compatible.chat import chat_body
from lowtide.providers.openai_compatible.dialect import Dialect
from lowtide.providers.together.options import PROVIDER_NAME, TogetherOptions
from lowtide.providers.together.parameters import check_parameters
from lowtide.providers.together.rules import USAGE
from lowtide.types import ActorRequest

__all__ = ["TOGETHER", "encode_request"]

TOGETHER = Dialect(name=PROVIDER_NAME, owner="Together", api_owner="Together AI", usage=USAGE, options=TogetherOptions)


def encode_request(request: ActorRequest) -> dict[str, object]:
    """The Chat Completions body of `request`, with `top_k` and Together's own settings (`provider_options.together`)
    in it."""
    options = check_parameters(request)
    own = options.model_dump(include={"repetition_penalty", "min_p", "reasoning_effort"})
    return chat_body(request, {"top_k": request.top_k, **own}, TOGETHER)
