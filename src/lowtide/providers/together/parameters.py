"""Together's rules for a call's parameters, checked as an actor loads (registered with the registry) and on every
request as it is encoded, so that what the API would refuse is refused before anything is recorded or sent:

- `temperature` from 0 to 2, `top_p` from 0 to 1, `top_k` at least 1 (Together takes it);
- no `thinking`, `output_config`, `cache_control` or `metadata` (Together has other means, named in the refusal);
- stop sequences none empty, none twice;
- `provider_options.together` as `TogetherOptions` reads it.
"""

from __future__ import annotations

from lowtide import ConfigurationError
from lowtide.providers import Parameters
from lowtide.providers.openai_compatible.dialect import check_stop_sequences
from lowtide.providers.together.options import TogetherOptions, options_of

__all__ = ["check_parameters"]

_RANGES = {"temperature": (0.0, 2.0), "top_p": (0.0, 1.0)}
_MOST_STOPS = 16
"""More stop sequences than any call needs: Together names no limit; this bound only refuses a runaway list."""

_REFUSED: dict[str, str] = {
    "thinking": "Together's reasoning models think by `provider_options.together.reasoning_effort`, not `thinking`.",
    "output_config": "Together has no output_config: give `response_model` for structured output.",
    "cache_control": "Together caches prompts by itself; cache_control has no meaning there.",
    "metadata": "Together's Chat Completions take no request metadata.",
}


def check_parameters(parameters: Parameters) -> TogetherOptions:
    """Refuse what Together would refuse of `parameters` (a `ConfigurationError` naming the field); their Together
    settings (`options_of`) when all is well."""
    options = options_of(parameters)
    for name, reason in _REFUSED.items():
        if getattr(parameters, name) is not None:
            raise ConfigurationError(f"{name} cannot be sent to Together: {reason}", field=name)
    for name, (low, high) in _RANGES.items():
        value = getattr(parameters, name)
        if value is not None and not low <= value <= high:
            raise ConfigurationError(
                f"{name}: {value:g} is outside the range Together takes, {low:g} to {high:g}.", field=name
            )
    if parameters.top_k is not None and parameters.top_k < 1:
        raise ConfigurationError(f"top_k: {parameters.top_k} is below 1, the least Together takes.", field="top_k")
    check_stop_sequences(parameters.stop_sequences, who="Together", most=_MOST_STOPS)
    return options
