"""The settings only Anthropic has, under `provider_options: {anthropic: ...}` in an actor or a call: where they
belong in a provider-neutral request. The same settings given as top-level fields (`top_k`, `thinking`,
`output_config`, `cache_control`) are still read, as a shorthand for Anthropic actors; one given both ways is
refused, since it cannot be told which is meant."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lowtide.core.parameters import Parameters
from lowtide.errors import ConfigurationError

__all__ = ["PROVIDER_NAME", "AnthropicOptions", "anthropic_settings"]

PROVIDER_NAME = "anthropic"
GEN_AI_PROVIDER_NAME = "anthropic"
"""`gen_ai.provider.name` of its spans: the OpenTelemetry GenAI semantic conventions' value (1.44)."""


class AnthropicOptions(BaseModel):
    """Anthropic's own settings of one actor or call. Further Messages parameters travel in `extra_params`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    top_k: int | None = Field(default=None, ge=1)
    thinking: dict[str, object] | None = None
    """Extended thinking: `{type: enabled, budget_tokens: N}` (N from 1024, below `max_tokens`), or `adaptive`."""
    output_config: dict[str, object] | None = None
    """`effort`, and a `format` lowtide fills in from `response_model`."""
    cache_control: dict[str, object] | None = None
    """Automatic prompt caching of the whole request: `{type: ephemeral, ttl: 5m | 1h}`."""


_PREFIX = f"provider_options.{PROVIDER_NAME}"
SETTINGS = ("top_k", "thinking", "output_config", "cache_control")


def anthropic_settings(request: Parameters) -> dict[str, Any]:
    """The Anthropic settings of a request (or an actor), from `provider_options.anthropic` or their top-level
    shorthand: a `ConfigurationError` names a wrong one, or one given both ways. Their values' ranges are checked by
    `parameters.check_parameters`."""
    given = request.provider_options.get(PROVIDER_NAME) or {}
    try:
        options = AnthropicOptions.model_validate(given)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join([_PREFIX, *(str(part) for part in first["loc"])])
        known = ", ".join(SETTINGS)
        raise ConfigurationError(
            f"Invalid Anthropic setting {where}: {first['msg']} (Anthropic's own settings are {known}; further"
            " Messages API parameters go in extra_params).",
            field=where,
        ) from None
    settings: dict[str, Any] = {}
    for name in SETTINGS:
        nested, shorthand = getattr(options, name), getattr(request, name)
        if nested is not None and shorthand is not None:
            raise ConfigurationError(
                f"{name} is given twice, as {name} and as {_PREFIX}.{name}; keep one.", field=f"{_PREFIX}.{name}"
            )
        value = nested if nested is not None else shorthand
        if value is not None:
            settings[name] = value
    return settings
