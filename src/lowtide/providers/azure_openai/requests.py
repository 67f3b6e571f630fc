"""An `ActorRequest` as the body of Azure's `POST /openai/deployments/{deployment}/chat/completions`: OpenAI's Chat
Completions body (made by OpenAI's encoder, from the Azure section of `provider_options`), its `model` the deployment.
The same body for a live call and a batch line. Pure; what Azure would refuse raises `ConfigurationError`."""

from __future__ import annotations

from dataclasses import replace

from lowtide.errors import ConfigurationError
from lowtide.providers.azure_openai.options import OPENAI_SECTION, PROVIDER_NAME, openai_options
from lowtide.providers.azure_openai.parameters import as_openai_error, check_parameters
from lowtide.providers.openai.chat_limits import ChatLimits
from lowtide.providers.openai.requests import Encoded, to_chat_body
from lowtide.providers.openai.rules import CONTENT as OPENAI_CONTENT
from lowtide.types import ActorRequest

__all__ = ["AZURE_CHAT", "BATCH_URL", "encode_request", "model_served"]

BATCH_URL = "/chat/completions"
"""The url of every line of an Azure batch, and of its create: Azure names Chat Completions without `/v1`."""

AZURE_CHAT = ChatLimits(
    api="Azure's Chat Completions",
    remedies={
        "tool_result_media": "send images and files in a user message after the tool result",
        "image_file_id": "send the image inline (base64) or by URL",
        "document_url": "send the file inline (its bytes in the request)",
        "document": "send the file inline (its bytes in the request)",
        "reasoning_summary": f"remove provider_options.{PROVIDER_NAME}.reasoning.summary",
    },
    content=replace(OPENAI_CONTENT, provider="Azure OpenAI"),
)
"""What an Azure deployment's Chat Completions cannot carry: OpenAI's remedy (its Responses endpoint) is not open to
an Azure actor."""


def encode_request(request: ActorRequest) -> Encoded:
    """The Chat Completions body of `request`; its `model` is the deployment the actor names."""
    check_parameters(request)
    as_openai = request.model_copy(update={"provider_options": {OPENAI_SECTION: openai_options(request)}})
    try:
        return Encoded("chat_completions", to_chat_body(as_openai, limits=AZURE_CHAT))
    except ConfigurationError as exc:
        raise as_openai_error(exc) from None


def model_served(request: ActorRequest) -> str:
    """The model the request's deployment serves, as the actor says (`provider_options.azure_openai.model`), else
    the deployment's own name (deployments are often named after their model)."""
    section = request.provider_options.get(PROVIDER_NAME) or {}
    model = section.get("model")
    return model if isinstance(model, str) and model else request.model
