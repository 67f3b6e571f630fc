"""Together AI as an OpenAI-compatible dialect: its settings (`provider_options: {together: ...}`), what its Chat
Completions refuse, its limits and its prices, as data. Light: no SDK (registering Together imports this alone).

Its parameter rules, checked as an actor loads and on every request as it is encoded: `temperature` from 0 to 2,
`top_p` from 0 to 1, `top_k` at least 1 (sent); no `thinking`, `output_config`, `cache_control` or `metadata` (the
refusal names Together's means); stop sequences none empty, none twice. genai-prices has no usage extractor of its
own for Together: OpenAI's Chat Completions extractor reads the same `usage` object, at Together's prices (batch at
its 50% discount where genai-prices lists no batch price)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from lowtide.providers.openai_compatible.dialect import Dialect
from lowtide.providers.openai_compatible.usage import chat_usage_shape

__all__ = ["TOGETHER", "TogetherOptions"]


class TogetherOptions(BaseModel):
    """Together's own settings of one actor or call. Further body parameters travel in `extra_params`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    repetition_penalty: float | None = Field(default=None, gt=0)
    """How much a token said already is held back (Together's own parameter; the API's default when not given)."""
    min_p: float | None = Field(default=None, ge=0, le=1)
    reasoning_effort: Literal["low", "medium", "high"] | None = None
    """How much a reasoning model thinks (the API's default when not given)."""
    batch_priority: int | None = None
    """Batch mode: the batch's `priority`, as Together's `batches.create` takes it. Ignored in live mode."""
    unlisted_model: bool = False
    """Send the model unchecked though `GET /v1/models` does not list it (a fine-tune's, a dedicated endpoint's): the
    API has the last word. Never sent."""


_TEXT_ONLY = """meta-llama/Llama-3.3-70B-Instruct-Turbo meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo openai/gpt-oss-20b
    meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo openai/gpt-oss-120b deepseek-ai/DeepSeek-V3"""
"""Together's serverless chat models that take text only, from its model pages (Llama 4, Vision and VL read images)."""

TOGETHER = Dialect(
    name="together",
    owner="Together",
    api_owner="Together AI",
    usage=chat_usage_shape("together", "Together AI", flavor=lambda _: "chat", extracted_as="openai"),
    options=TogetherOptions,
    body_options=("repetition_penalty", "min_p", "reasoning_effort"),
    api_key_env="TOGETHER_API_KEY",
    base_url_env="TOGETHER_BASE_URL",
    sdk_paths=("/v1",),
    refused={
        "thinking": "Together's reasoning models think by `provider_options.together.reasoning_effort`, not "
        "`thinking`.",
        "output_config": "Together has no output_config: give `response_model` for structured output.",
        "cache_control": "Together caches prompts by itself; cache_control has no meaning there.",
        "metadata": "Together's Chat Completions take no request metadata.",
    },
    takes_top_k=True,
    max_stop_sequences=16,  # Together names no limit; this bound only refuses a runaway list
    text_only_models=frozenset(_TEXT_ONLY.split()),
    vision_example="meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8",
    gen_ai_provider_name=None,  # the conventions (1.44) name no value for Together: its name
)
"""Together's Chat Completions under `/v1/`; limits of 50,000 requests and 100 MB an input file, 24 hours."""
