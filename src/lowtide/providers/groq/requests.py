"""An `ActorRequest` as the body of Groq's `POST /openai/v1/chat/completions`: the same body for a live call and a
batch line. Pure; what Groq would refuse raises `ConfigurationError` naming the field, before sending."""

from __future__ import annotations

from lowtide.providers.groq.chat import ChatDialect, chat_body
from lowtide.providers.groq.options import PROVIDER_NAME
from lowtide.providers.groq.parameters import check_parameters
from lowtide.providers.groq.rules import USAGE
from lowtide.types import ActorRequest

__all__ = ["GROQ", "encode_request"]

GROQ = ChatDialect(name=PROVIDER_NAME, owner="Groq", usage=USAGE)


def encode_request(request: ActorRequest) -> dict[str, object]:
    """The Chat Completions body of `request`, Groq's own settings (`provider_options.groq`) in it."""
    options = check_parameters(request)
    return chat_body(
        request, options.model_dump(include={"reasoning_effort", "reasoning_format", "service_tier"}), GROQ
    )
