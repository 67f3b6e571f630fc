"""Mistral's rules for a call's parameters, checked as an actor loads (registered with the registry) and on every
request as it is encoded, so that what the API would refuse is refused before anything is recorded or sent:

- `temperature` from 0 to 1.5, `top_p` from 0 to 1 (Mistral's chat completions ranges);
- stop sequences none empty or only whitespace, none twice;
- no `top_k`, `thinking`, `output_config`, `cache_control` or `metadata` (the chat API has none of them);
- `provider_options.mistral` as `MistralOptions` reads it.
"""

from __future__ import annotations

from lowtide import ConfigurationError
from lowtide.providers import Parameters, check_ranges, refuse_fields
from lowtide.providers.mistral.options import MistralOptions, options_of

__all__ = ["check_parameters"]

_RANGES = {"temperature": (0.0, 1.5), "top_p": (0.0, 1.0)}

_REFUSED: dict[str, str] = {
    "top_k": "Mistral's chat API samples by temperature and top_p only.",
    "thinking": "Mistral's reasoning models think by themselves; there is no thinking setting.",
    "output_config": "Mistral has no output_config: give `response_model` for structured output.",
    "cache_control": "Mistral's chat API has no prompt cache setting.",
    "metadata": "Mistral's chat API takes no request metadata.",
}


def check_parameters(parameters: Parameters) -> MistralOptions:
    """Refuse what Mistral would refuse of `parameters` (a `ConfigurationError` naming the field); their Mistral
    settings (`options_of`) when all is well."""
    options = options_of(parameters)
    refuse_fields(parameters, _REFUSED, who="Mistral")
    check_ranges(parameters, _RANGES, who="Mistral")
    sequences = parameters.stop_sequences
    for index, sequence in enumerate(sequences):
        where = f"stop_sequences.{index}"
        if not sequence.strip():
            raise ConfigurationError(f"{where}: the stop sequence is empty; Mistral refuses it.", field=where)
        if sequence in sequences[:index]:
            raise ConfigurationError(f"{where}: {sequence!r} is given twice.", field=where)
    return options
