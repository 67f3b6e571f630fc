"""The Messages API's rules for a call's parameters, checked as an actor loads (registered with the registry) and
on every request as it is encoded, so that what the API would refuse is refused before anything is recorded or sent:

- `temperature` and `top_p` from 0 to 1; `top_k` at least 1;
- extended thinking (`thinking: {type: enabled, budget_tokens: N}`): N an integer from 1024, below `max_tokens`;
- each stop sequence holding something besides whitespace;
- `metadata` holding `user_id` alone (a string of at most 256 characters).

Pure, and free of the SDK: loading an actor file imports nothing more.
"""

from __future__ import annotations

from typing import Any

from lowtide.core.parameters import Parameters
from lowtide.errors import ConfigurationError
from lowtide.providers.anthropic.options import anthropic_settings

__all__ = ["MIN_THINKING_BUDGET", "check_parameters"]

MIN_THINKING_BUDGET = 1024
_RANGES = {"temperature": (0.0, 1.0), "top_p": (0.0, 1.0)}
_USER_ID_LENGTH = 256


def check_parameters(parameters: Parameters) -> dict[str, Any]:
    """Refuse what the Messages API would refuse of `parameters` (a `ConfigurationError` naming the field); the
    Anthropic settings they make (`anthropic_settings`) when all is well."""
    settings = anthropic_settings(parameters)
    for name, (low, high) in _RANGES.items():
        value = getattr(parameters, name)
        if value is not None and not low <= value <= high:
            raise ConfigurationError(
                f"{name}: {value:g} is outside the range the Messages API takes, {low:g} to {high:g}.", field=name
            )
    top_k = settings.get("top_k")
    if top_k is not None and top_k < 1:
        raise ConfigurationError(f"top_k: {top_k} is less than 1, the least the Messages API takes.", field="top_k")
    _check_thinking(settings.get("thinking"), parameters.max_tokens)
    for index, sequence in enumerate(parameters.stop_sequences):
        if not sequence.strip():
            where = f"stop_sequences.{index}"
            kind = "empty" if not sequence else "only whitespace"
            raise ConfigurationError(
                f"{where}: the stop sequence is {kind}; the Messages API wants each to hold something besides"
                " whitespace.",
                field=where,
            )
    _check_metadata(parameters.metadata)
    return settings


def _check_thinking(thinking: dict[str, object] | None, max_tokens: int) -> None:
    if not thinking or thinking.get("type") != "enabled":
        return
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int) or isinstance(budget, bool) or budget < MIN_THINKING_BUDGET:
        raise ConfigurationError(
            f"thinking.budget_tokens must be an integer of at least {MIN_THINKING_BUDGET}",
            field="thinking.budget_tokens",
        )
    if budget >= max_tokens:
        raise ConfigurationError(
            f"thinking.budget_tokens ({budget}) must be less than max_tokens ({max_tokens})",
            field="thinking.budget_tokens",
        )


def _check_metadata(metadata: dict[str, object] | None) -> None:
    """Only `user_id`, a string; its value is never echoed (it may be anything a user pasted)."""
    if metadata is None:
        return
    for key, value in metadata.items():
        where = f"metadata.{key}"
        if key != "user_id":
            raise ConfigurationError(
                f"{where}: the Messages API's metadata holds user_id alone; put other labels elsewhere.", field=where
            )
        if value is not None and (not isinstance(value, str) or len(value) > _USER_ID_LENGTH):
            raise ConfigurationError(
                f"{where}: user_id must be a string of at most {_USER_ID_LENGTH} characters.", field=where
            )
