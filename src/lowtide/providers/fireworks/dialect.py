"""Fireworks AI as an OpenAI-compatible dialect: its settings (`provider_options: {fireworks: ...}`), what its Chat
Completions refuse, its limits and its prices, as data, and the check of an actor's parameters as it loads. Light: no
SDK (registering Fireworks imports this alone).

Its parameter rules, checked as an actor loads and on every request as it is encoded: `temperature` from 0 to 2,
`top_p` from 0 to 1, `top_k` at least 1 (Fireworks takes it); no `thinking`, `output_config`, `cache_control` or
`metadata` (the refusal names Fireworks' means); at most 4 stop sequences. Its usage is priced by genai-prices'
`fireworks` provider (Chat Completions' `usage` object; models named as Fireworks names them,
`accounts/fireworks/models/<model>`); a model genai-prices does not list is priced unknown, never $0.

Batch mode is Fireworks' Batch Inference API (`batch_backend.py`): a dataset uploaded, a `batchInferenceJobs` job
created under an id lowtide chooses, its output dataset read; it runs in the actor's own account (`account_id`, or
`FIREWORKS_ACCOUNT_ID`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from lowtide.providers import BatchLimits
from lowtide.providers.openai_compatible.dialect import Dialect
from lowtide.providers.openai_compatible.usage import chat_usage_shape

__all__ = ["DEFAULT_ACCOUNT", "FIREWORKS", "FireworksOptions", "model_account"]

DEFAULT_ACCOUNT = "fireworks"
"""The account that owns Fireworks' serverless models (`accounts/fireworks/models/...`)."""


class FireworksOptions(BaseModel):
    """Fireworks' own settings of one actor or call. Further body parameters travel in `extra_params`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    reasoning_effort: Literal["none", "low", "medium", "high"] | None = None
    """How much a reasoning model thinks (the API's default when not given)."""
    account_id: str | None = None
    """The account batch inference jobs and their datasets belong to (else `FIREWORKS_ACCOUNT_ID`); batch mode only."""


FIREWORKS = Dialect(
    name="fireworks",
    owner="Fireworks",
    api_owner="Fireworks AI",
    usage=chat_usage_shape("fireworks", "Fireworks", flavor=lambda _: "chat"),
    options=FireworksOptions,
    body_options=("reasoning_effort",),
    api_key_env="FIREWORKS_API_KEY",
    base_url_env="FIREWORKS_BASE_URL",
    # The fireworks SDK puts `/v1/...` (and, at its default address, `/inference/v1/...`) before every route itself.
    sdk_paths=("/inference/v1", "/v1"),
    refused={
        "thinking": "Fireworks' reasoning models think by `provider_options.fireworks.reasoning_effort`, not "
        "`thinking`.",
        "output_config": "Fireworks has no output_config: give `response_model` for structured output.",
        "cache_control": "Fireworks caches prompts by itself; cache_control has no meaning there.",
        "metadata": "Fireworks' Chat Completions take no request metadata.",
    },
    takes_top_k=True,
    max_stop_sequences=4,
    # A dataset is uploaded in one call, which takes up to 150 MB (Fireworks' reference; a dataset may hold 500 MB
    # through its multi-part upload, which lowtide does not use); Fireworks documents no request cap.
    batch=BatchLimits(max_requests=50_000, max_bytes=150 * 1024 * 1024),
)
"""Fireworks' Chat Completions at `https://api.fireworks.ai/inference/v1` (the fireworks SDK's default address; a base
URL given, such as the emulator's, is the one before `/v1`)."""


def model_account(model: str) -> tuple[str, str]:
    """The account and model id a Fireworks model name holds (`accounts/<account>/models/<id>`); a bare id is the
    serverless account's."""
    parts = model.split("/")
    if len(parts) == 4 and parts[0] == "accounts" and parts[2] == "models" and parts[1] and parts[3]:
        return parts[1], parts[3]
    return DEFAULT_ACCOUNT, model
