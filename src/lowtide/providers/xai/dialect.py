"""xAI as an OpenAI-compatible dialect: its settings (`provider_options: {xai: ...}`), what its Chat Completions
refuse, its limits and its prices, as data. Light: no SDK (registering xAI imports this alone).

Its parameter rules, checked as an actor loads and on every request as it is encoded: `temperature` from 0 to 2,
`top_p` from 0 to 1; no `top_k`, `thinking`, `output_config`, `cache_control` or `metadata` (the refusal names
xAI's means); at most 4 stop sequences. Its usage is priced by genai-prices' `x-ai` provider (Chat Completions'
`usage` object), batch at xAI's 50% discount where genai-prices lists no batch price."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from lowtide.providers import BatchLimits
from lowtide.providers.openai_compatible.dialect import Dialect
from lowtide.providers.openai_compatible.usage import chat_usage_shape

__all__ = ["XAI", "XaiOptions"]


class XaiOptions(BaseModel):
    """xAI's own settings of one actor or call. Further body parameters travel in `extra_params`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    reasoning_effort: Literal["low", "high"] | None = None
    """How much a reasoning model (grok-3-mini) thinks (the API's default when not given)."""


XAI = Dialect(
    name="xai",
    owner="xAI",
    usage=chat_usage_shape("x-ai", "xAI", flavor=lambda _: "chat"),
    options=XaiOptions,
    body_options=("reasoning_effort",),
    api_key_env="XAI_API_KEY",
    base_url_env="XAI_BASE_URL",
    default_base_url="https://api.x.ai/v1",
    refused={
        "top_k": "xAI has no top_k; use temperature or top_p.",
        "thinking": "xAI's reasoning models think by `provider_options.xai.reasoning_effort`, not `thinking`.",
        "output_config": "xAI has no output_config: give `response_model` for structured output.",
        "cache_control": "xAI caches prompts by itself; cache_control has no meaning there.",
        "metadata": "xAI's Chat Completions take no request metadata.",
    },
    max_stop_sequences=4,
    gen_ai_provider_name="xai",  # the OpenTelemetry GenAI semantic conventions' value (1.44)
    # The emulator's reading: xAI documents no request cap a batch; a batch's requests are added 1,000 a call.
    batch=BatchLimits(max_requests=50_000, max_bytes=100 * 1024 * 1024),
)
"""xAI's Chat Completions under `https://api.x.ai/v1` (the `openai` SDK's base URL, `/v1` included)."""
