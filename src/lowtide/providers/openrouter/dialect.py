"""OpenRouter as an OpenAI-compatible dialect: its settings (`provider_options: {openrouter: ...}`), what its Chat
Completions refuse, its batch limits and its prices, as data. Light: no SDK.

Its usage is priced by genai-prices' `openrouter` provider, whose model names are OpenRouter's
(`openai/gpt-4o-mini`); batch answers at its batch price (about half the live one, as OpenRouter bills batches)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from lowtide.providers import BatchLimits
from lowtide.providers.openai_compatible.dialect import Dialect
from lowtide.providers.openai_compatible.usage import chat_usage_shape

__all__ = ["OPENROUTER", "OpenRouterOptions"]


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
    # A batch holds up to 5,000 requests, given inline in one create (OpenRouter's Batch API guide); the body's size
    # is lowtide's bound, OpenRouter documents none.
    batch=BatchLimits(max_requests=5_000, max_bytes=100 * 1024 * 1024),
)
"""OpenRouter's Chat Completions and Batch API under `https://openrouter.ai/api/v1` (the `openai` SDK's base URL,
`/v1` included)."""
