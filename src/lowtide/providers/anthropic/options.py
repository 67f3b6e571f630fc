"""The settings only Anthropic has, under `provider_options: {anthropic: ...}` in an actor or a call: where they
belong in a provider-neutral request. The same settings given as top-level fields (`top_k`, `thinking`,
`output_config`, `cache_control`) are still read, as a shorthand for Anthropic actors; one given both ways is
refused, since it cannot be told which is meant."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lowtide.errors import ConfigurationError
from lowtide.types import ActorRequest

__all__ = ["PROVIDER_NAME", "AnthropicOptions", "anthropic_settings"]

PROVIDER_NAME = "anthropic"


class AnthropicOptions(BaseModel):
    """Anthropic's own settings of one actor or call. Further Messages parameters travel in `extra_params`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    top_k: int | None = Field(default=None, ge=1)
    thinking: dict[str, Any] | None = None
    """Extended thinking: `{type: enabled, budget_tokens: N}` (N from 1024, below `max_tokens`), or `adaptive`."""
    output_config: dict[str, Any] | None = None
    """`effort`, and a `format` lowtide fills in from `response_model`."""
    cache_control: dict[str, Any] | None = None
    """Automatic prompt caching of the whole request: `{type: ephemeral, ttl: 5m | 1h}`."""


_PREFIX = f"provider_options.{PROVIDER_NAME}"
SETTINGS = ("top_k", "thinking", "output_config", "cache_control")


def anthropic_settings(request: ActorRequest) -> dict[str, Any]:
    """The request's Anthropic settings, from `provider_options.anthropic` or their top-level shorthand, checked:
    a `ConfigurationError` names a wrong one, or one given both ways."""
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
    _check_thinking(settings.get("thinking"), request.max_tokens)
    return settings


def _check_thinking(thinking: dict[str, Any] | None, max_tokens: int) -> None:
    if not thinking or thinking.get("type") != "enabled":
        return
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int) or isinstance(budget, bool) or budget < 1024:
        raise ConfigurationError("thinking.budget_tokens must be an integer of at least 1024", field="thinking")
    if budget >= max_tokens:
        raise ConfigurationError(
            f"thinking.budget_tokens ({budget}) must be less than max_tokens ({max_tokens})", field="thinking"
        )
