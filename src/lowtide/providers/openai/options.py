"""The settings only OpenAI has, as an actor gives them under `provider_options: {openai: ...}`, checked before
anything is sent."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lowtide.core.parameters import Parameters
from lowtide.errors import ConfigurationError

__all__ = [
    "PROVIDER_NAME",
    "Endpoint",
    "OpenAIOptions",
    "ReasoningEffort",
    "ReasoningOptions",
    "ServiceTier",
    "options_of",
]

PROVIDER_NAME = "openai"
GEN_AI_PROVIDER_NAME = "openai"
"""`gen_ai.provider.name` of its spans: the OpenTelemetry GenAI semantic conventions' value (1.44)."""

Endpoint = Literal["responses", "chat_completions"]

# The SDK's own aliases (`openai.types.shared.ReasoningEffort`, `openai.types.responses.ServiceTier`), written out so
# that the OpenAI-shaped providers (Groq, Together) that build their bodies here need not import the `openai` SDK;
# features/openai_options.feature holds them to the installed SDK's, so an SDK that adds a value fails the suite.
ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"] | None
ServiceTier = Literal["auto", "default", "flex", "scale", "priority", "fast", "ultrafast"] | None


class ReasoningOptions(BaseModel):
    """How much a reasoning model thinks, and whether it says how (Responses only)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    effort: ReasoningEffort = None
    summary: Literal["auto", "concise", "detailed"] | None = None


class OpenAIOptions(BaseModel):
    """OpenAI's own settings of one actor or call. Further body parameters travel in `extra_params`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    endpoint: Endpoint = "responses"
    """The API the calls go to: `/v1/responses` or `/v1/chat/completions`."""
    reasoning: ReasoningOptions | None = None
    service_tier: ServiceTier = None
    verbosity: Literal["low", "medium", "high"] | None = None
    prompt_cache_key: str | None = Field(default=None, min_length=1)
    prompt_cache_retention: Literal["in_memory", "24h"] | None = None
    store: bool | None = None
    """Whether OpenAI keeps the response (the API's default when not given)."""
    safety_identifier: str | None = Field(default=None, min_length=1, max_length=64)
    system_role: Literal["system", "developer"] = "system"
    """The role the system prompt takes in Chat Completions (Responses sends it as `instructions`)."""


_PREFIX = f"provider_options.{PROVIDER_NAME}"


def options_of(request: Parameters) -> OpenAIOptions:
    """The OpenAI settings of a request (or an actor), or the `ConfigurationError` naming the first wrong one."""
    given = request.provider_options.get(PROVIDER_NAME) or {}
    try:
        return OpenAIOptions.model_validate(given)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join([_PREFIX, *(str(part) for part in first["loc"])])
        # The value is never echoed: a misplaced key must not reach an error message or a log.
        raise ConfigurationError(f"Invalid OpenAI setting {where}: {first['msg']}.", field=where) from None
