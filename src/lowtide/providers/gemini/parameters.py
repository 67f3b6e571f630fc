"""Gemini's rules for a call's parameters, checked as an actor loads (registered with the registry) and on every
request as it is encoded, so that what the API would refuse is refused before anything is recorded or sent:

- `temperature` from 0 to 2, `top_p` from 0 to 1, `top_k` at least 1 (Gemini takes it as `topK`);
- at most 5 stop sequences, none empty or only whitespace, none twice;
- no `thinking`, `output_config`, `cache_control` or `metadata` (Gemini has other means, named in the refusal);
- `provider_options.gemini` as `GeminiOptions` reads it.

`max_tokens` against the model's own limit is the API's to say (its 400 names it).
"""

from __future__ import annotations

from lowtide import ConfigurationError
from lowtide.providers import Parameters, check_ranges, refuse_fields
from lowtide.providers.gemini.options import GeminiOptions, options_of

__all__ = ["MAX_STOP_SEQUENCES", "check_parameters"]

MAX_STOP_SEQUENCES = 5
_RANGES = {"temperature": (0.0, 2.0), "top_p": (0.0, 1.0)}

_REFUSED: dict[str, str] = {
    "thinking": "Gemini models think by `provider_options.gemini.thinking_budget` (and `include_thoughts`), not "
    "`thinking`.",
    "output_config": "Gemini has no output_config: give `response_model` for structured output.",
    "cache_control": "Gemini caches long prompts by itself (implicit caching); cache_control has no meaning there.",
    "metadata": "the Gemini API takes no request metadata.",
}


def check_parameters(parameters: Parameters) -> GeminiOptions:
    """Refuse what Gemini would refuse of `parameters` (a `ConfigurationError` naming the field); their Gemini
    settings (`options_of`) when all is well."""
    options = options_of(parameters)
    refuse_fields(parameters, _REFUSED, who="Gemini")
    check_ranges(parameters, _RANGES, who="Gemini")
    if parameters.top_k is not None and parameters.top_k < 1:
        raise ConfigurationError(f"top_k: {parameters.top_k} is below 1, the least Gemini takes.", field="top_k")
    _check_stop_sequences(parameters.stop_sequences)
    return options


def _check_stop_sequences(sequences: list[str]) -> None:
    if len(sequences) > MAX_STOP_SEQUENCES:
        raise ConfigurationError(
            f"stop_sequences holds {len(sequences)} sequences; Gemini takes at most {MAX_STOP_SEQUENCES}.",
            field="stop_sequences",
        )
    for index, sequence in enumerate(sequences):
        where = f"stop_sequences.{index}"
        if not sequence.strip():
            raise ConfigurationError(f"{where}: the stop sequence is empty; Gemini refuses it.", field=where)
        if sequence in sequences[:index]:
            raise ConfigurationError(
                f"{where}: {sequence!r} is given twice; Gemini wants each stop sequence once.", field=where
            )
