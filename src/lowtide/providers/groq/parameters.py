"""Groq's rules for a call's parameters, checked as an actor loads (registered with the registry) and on every
request as it is encoded, so that what the API would refuse is refused before anything is recorded or sent:

- `temperature` from 0 to 2, `top_p` from 0 to 1;
- no `top_k`, `thinking`, `output_config`, `cache_control` or `metadata` (Groq has other means, named in the
  refusal);
- at most 4 stop sequences, none empty, none twice;
- `provider_options.groq` as `GroqOptions` reads it (a completion window from 24h to 7d).
"""

from __future__ import annotations

from lowtide import ConfigurationError
from lowtide.providers import Parameters
from lowtide.providers.groq.options import GroqOptions, options_of

__all__ = ["MAX_STOP_SEQUENCES", "check_parameters", "check_stop_sequences"]

MAX_STOP_SEQUENCES = 4
_RANGES = {"temperature": (0.0, 2.0), "top_p": (0.0, 1.0)}

_REFUSED: dict[str, str] = {
    "top_k": "Groq has no top_k; use temperature or top_p.",
    "thinking": "Groq's reasoning models think by `provider_options.groq.reasoning_effort`, not `thinking`.",
    "output_config": "Groq has no output_config: give `response_model` for structured output.",
    "cache_control": "Groq caches prompts by itself; cache_control has no meaning there.",
    "metadata": "Groq's Chat Completions take no request metadata.",
}


def check_parameters(parameters: Parameters) -> GroqOptions:
    """Refuse what Groq would refuse of `parameters` (a `ConfigurationError` naming the field); their Groq settings
    (`options_of`) when all is well."""
    options = options_of(parameters)
    for name, reason in _REFUSED.items():
        if getattr(parameters, name) is not None:
            raise ConfigurationError(f"{name} cannot be sent to Groq: {reason}", field=name)
    for name, (low, high) in _RANGES.items():
        value = getattr(parameters, name)
        if value is not None and not low <= value <= high:
            raise ConfigurationError(
                f"{name}: {value:g} is outside the range Groq takes, {low:g} to {high:g}.", field=name
            )
    check_stop_sequences(parameters.stop_sequences, who="Groq", most=MAX_STOP_SEQUENCES)
    return options


def check_stop_sequences(sequences: list[str], *, who: str, most: int) -> None:
    """At most `most` stop sequences, none empty, none twice (`who` names the API in the refusal)."""
    if len(sequences) > most:
        raise ConfigurationError(
            f"stop_sequences holds {len(sequences)} sequences; {who} takes at most {most}.", field="stop_sequences"
        )
    for index, sequence in enumerate(sequences):
        where = f"stop_sequences.{index}"
        if not sequence:
            raise ConfigurationError(f"{where}: the stop sequence is empty; {who} refuses it.", field=where)
        if sequence in sequences[:index]:
            raise ConfigurationError(
                f"{where}: {sequence!r} is given twice; {who} wants each stop sequence once.", field=where
            )
