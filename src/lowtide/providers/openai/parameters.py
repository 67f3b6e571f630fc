"""OpenAI's rules for a call's parameters, checked as an actor loads (registered with the registry) and on every
request as it is encoded, so that what the API would refuse is refused before anything is recorded or sent:

- `temperature` from 0 to 2, `top_p` from 0 to 1;
- no `top_k`, `thinking`, `output_config` or `cache_control` (OpenAI has other means, named in the refusal);
- stop sequences: none empty, none twice; at most 4 on Chat Completions; on the Responses API, which has none,
  applied by lowtide to a live answer (`providers.stop_sequences`) and refused in a batch (`refuse_batch_stops`,
  as a batch actor loads: `check_batch_parameters`);
- `max_tokens` at least 16 on the Responses API;
- `metadata`: at most 16 pairs, keys of at most 64 characters, string values of at most 512;
- `provider_options.openai` as `OpenAIOptions` reads it.
"""

from __future__ import annotations

from lowtide.core.parameters import Parameters, check_ranges, refuse_fields
from lowtide.errors import ConfigurationError
from lowtide.providers.openai.options import OpenAIOptions, options_of

__all__ = [
    "MAX_STOP_SEQUENCES",
    "MIN_OUTPUT_TOKENS",
    "check_batch_parameters",
    "check_parameters",
    "refuse_batch_stops",
]

MAX_STOP_SEQUENCES = 4
MIN_OUTPUT_TOKENS = 16
"""The least `max_output_tokens` the Responses API takes."""
_RANGES = {"temperature": (0.0, 2.0), "top_p": (0.0, 1.0)}
_METADATA_PAIRS = 16
_METADATA_KEY = 64
_METADATA_VALUE = 512

_REFUSED: dict[str, str] = {
    "top_k": "OpenAI has no top_k; use temperature or top_p.",
    "thinking": "OpenAI models reason by `provider_options.openai.reasoning` (effort, summary), not `thinking`.",
    "output_config": "OpenAI has no output_config: give `response_model` for structured output, and "
    "`provider_options.openai.reasoning` or `verbosity` for effort.",
    "cache_control": "OpenAI caches long prompts by itself; steer it with `provider_options.openai.prompt_cache_key` "
    "and `prompt_cache_retention` instead of cache_control.",
}


def check_parameters(parameters: Parameters) -> OpenAIOptions:
    """Refuse what OpenAI would refuse of `parameters` (a `ConfigurationError` naming the field); their OpenAI
    settings (`options_of`) when all is well. Stop sequences on the Responses API pass: lowtide applies them to a
    live answer itself (a batch refuses them: `refuse_batch_stops`)."""
    options = options_of(parameters)
    refuse_fields(parameters, _REFUSED, who="OpenAI")
    check_ranges(parameters, _RANGES, who="OpenAI")
    if options.endpoint == "responses" and parameters.max_tokens < MIN_OUTPUT_TOKENS:
        raise ConfigurationError(
            f"max_tokens is {parameters.max_tokens}; the Responses API needs at least {MIN_OUTPUT_TOKENS}.",
            field="max_tokens",
        )
    _check_stop_sequences(parameters.stop_sequences, chat=options.endpoint == "chat_completions")
    _check_metadata(parameters.metadata)
    return options


def check_batch_parameters(parameters: Parameters) -> OpenAIOptions:
    """`check_parameters`, and what the Batch API takes less of than the live APIs (`refuse_batch_stops`): the
    check of an actor in batch mode as it loads."""
    options = check_parameters(parameters)
    refuse_batch_stops(parameters, options)
    return options


def refuse_batch_stops(parameters: Parameters, options: OpenAIOptions) -> None:
    """A batch's answers are read without their requests, so lowtide cannot cut them at a stop sequence: stop
    sequences on the Responses API are refused in a batch, before anything is recorded or sent."""
    if options.endpoint == "responses" and parameters.stop_sequences:
        raise ConfigurationError(
            "stop_sequences: the Responses API has none, and lowtide applies them to live answers only (a batch's "
            "answers are read without their requests); use a live actor, or set "
            "`provider_options.openai.endpoint: chat_completions`, which is sent them.",
            field="stop_sequences",
        )


def _check_stop_sequences(sequences: list[str], *, chat: bool) -> None:
    if chat and len(sequences) > MAX_STOP_SEQUENCES:
        raise ConfigurationError(
            f"stop_sequences holds {len(sequences)} sequences; Chat Completions takes at most {MAX_STOP_SEQUENCES}.",
            field="stop_sequences",
        )
    for index, sequence in enumerate(sequences):
        where = f"stop_sequences.{index}"
        if not sequence:
            raise ConfigurationError(f"{where}: the stop sequence is empty; OpenAI refuses it.", field=where)
        if sequence in sequences[:index]:
            raise ConfigurationError(
                f"{where}: {sequence!r} is given twice; OpenAI wants each stop sequence once.", field=where
            )


def _check_metadata(metadata: dict[str, object] | None) -> None:
    """OpenAI's metadata: 16 pairs of strings at most, short keys and values. Values are never echoed."""
    if metadata is None:
        return
    if len(metadata) > _METADATA_PAIRS:
        raise ConfigurationError(
            f"metadata: {len(metadata)} pairs; OpenAI takes at most {_METADATA_PAIRS}.", field="metadata"
        )
    for key, value in metadata.items():
        where = f"metadata.{key}"
        if len(key) > _METADATA_KEY:
            raise ConfigurationError(
                f"metadata: a key of {len(key)} characters; OpenAI takes keys of at most {_METADATA_KEY}.",
                field="metadata",
            )
        if not isinstance(value, str):
            raise ConfigurationError(f"OpenAI's metadata holds strings only; {where} is not one.", field=where)
        if len(value) > _METADATA_VALUE:
            raise ConfigurationError(
                f"{where}: a value of {len(value)} characters; OpenAI takes values of at most {_METADATA_VALUE}.",
                field=where,
            )
