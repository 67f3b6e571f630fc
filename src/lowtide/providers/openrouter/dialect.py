"""OpenRouter as an OpenAI-compatible dialect: its settings (`provider_options: {openrouter: ...}`), what its Chat
Completions refuse and its prices, as data, and the check of an actor's parameters as it loads: a batch-mode actor is
refused there, since lowtide speaks no OpenRouter Batch API. Light: no SDK.

Its usage is priced by genai-prices' `openrouter` provider, whose model names are OpenRouter's
(`openai/gpt-4o-mini`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from lowtide import BatchProcessingMode, ConfigurationError
from lowtide.providers import Parameters
from lowtide.providers.openai_compatible.dialect import Dialect
from lowtide.providers.openai_compatible.usage import chat_usage_shape

__all__ = ["OPENROUTER", "OpenRouterOptions", "check_parameters"]


class OpenRouterOptions(BaseModel):
    """OpenRouter's own settings of one actor or call. Further body parameters (`provider` routing, `models`
    fallbacks) travel in `extra_params`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = None
    """How much a reasoning model thinks (the API's default when not given)."""


OPENROUTER = Dialect(
    name="openrouter",
    owner="OpenRouter",
    usage=chat_usage_shape("openrouter", "OpenRouter", flavor=lambda _: "chat"),
    options=OpenRouterOptions,
    body_options=("reasoning_effort",),
    api_key_env="OPENROUTER_API_KEY",
    base_url_env="OPENROUTER_BASE_URL",
    default_base_url="https://openrouter.ai/api/v1",
    refused={
        "thinking": "OpenRouter's reasoning models think by `provider_options.openrouter.reasoning_effort`, not "
        "`thinking`.",
        "output_config": "OpenRouter has no output_config: give `response_model` for structured output.",
        "cache_control": "lowtide sends no cache_control to OpenRouter's Chat Completions.",
        "metadata": "OpenRouter's Chat Completions take no request metadata.",
    },
    takes_top_k=True,
    gen_ai_provider_name="openrouter",
)
"""OpenRouter's Chat Completions under `https://openrouter.ai/api/v1` (the `openai` SDK's base URL, `/v1` included)."""


def check_parameters(parameters: Parameters) -> OpenRouterOptions:
    """The dialect's check, and batch mode refused as the actor loads: lowtide has no OpenRouter batch backend."""
    options = OPENROUTER.check_parameters(parameters)
    # An actor's configuration says its mode (a call's request does not): checked as the actor loads.
    mode = getattr(parameters, "batch_processing", None)
    if mode is BatchProcessingMode.BATCH and not getattr(parameters, "fallback_to_live", False):
        raise ConfigurationError(
            "OpenRouter runs in live mode only: lowtide does not yet speak OpenRouter's Batch API (in beta). Set "
            "batch_processing: live, or fallback_to_live: true to send batch-mode calls live.",
            field="batch_processing",
        )
    return options
