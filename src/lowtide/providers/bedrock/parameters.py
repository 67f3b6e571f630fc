"""Bedrock's rules for a call's parameters, checked as an actor loads (registered with the registry) and on every
request as it is encoded into a Converse body, so that what Converse would refuse, or what it has no place for, is
refused before anything is recorded or sent:

- `temperature` and `top_p` from 0 to 1 (Converse's `inferenceConfig` ranges);
- stop sequences none empty (boto3 refuses an empty string as the request is built), none twice;
- no `metadata`, `output_config` or `cache_control`: Converse has no field for them, and sending the call without
  them would drop what the caller asked for without a word (Converse's own `requestMetadata` goes in `extra_params`).
"""

from __future__ import annotations

from lowtide import ConfigurationError
from lowtide.providers import Parameters, check_ranges, refuse_fields

__all__ = ["check_parameters"]

_RANGES = {"temperature": (0.0, 1.0), "top_p": (0.0, 1.0)}

_REFUSED: dict[str, str] = {
    "metadata": "Converse takes no request metadata of Anthropic's shape; give Bedrock's own as"
    " `extra_params: {requestMetadata: {...}}` (string values, kept in the invocation logs).",
    "output_config": "Converse has no output_config: give `response_model` for structured output.",
    "cache_control": "Converse marks what to cache with cache points inside the messages, not a cache_control setting.",
}


def check_parameters(parameters: Parameters) -> None:
    """Refuse what Converse would refuse or drop of `parameters` (a `ConfigurationError` naming the field)."""
    refuse_fields(parameters, _REFUSED, who="Bedrock")
    check_ranges(parameters, _RANGES, who="Bedrock's Converse")
    sequences = parameters.stop_sequences
    for index, sequence in enumerate(sequences):
        where = f"stop_sequences.{index}"
        if not sequence:
            raise ConfigurationError(f"{where}: the stop sequence is empty; Converse refuses it.", field=where)
        if sequence in sequences[:index]:
            raise ConfigurationError(f"{where}: {sequence!r} is given twice.", field=where)
