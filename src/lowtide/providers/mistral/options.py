"""The settings only Mistral has, as an actor gives them under `provider_options: {mistral: ...}`, checked before
anything is sent."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lowtide import ConfigurationError
from lowtide.providers import Parameters

__all__ = ["PROVIDER_NAME", "MistralOptions", "options_in", "options_of"]

PROVIDER_NAME = "mistral"
GEN_AI_PROVIDER_NAME = "mistral_ai"
"""`gen_ai.provider.name` of its spans: the OpenTelemetry GenAI semantic conventions' value (1.44)."""


class MistralOptions(BaseModel):
    """Mistral's own settings of one actor or call. Further body fields travel in `extra_params`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    random_seed: int | None = Field(default=None, ge=0)
    """The seed of the model's sampling, for answers that repeat."""
    safe_prompt: bool | None = None
    """Whether Mistral puts its safety prompt before the conversation."""
    batch_inline_bytes: int | None = Field(default=None, ge=0)
    """Batch mode, given for the actor: the most bytes of requests (as JSONL) a batch job sends inline (the create's
    `requests`); a larger batch is uploaded as a file (`purpose="batch"`). 0 uploads every batch; by default 8 MiB.
    Ignored in live mode."""


_PREFIX = f"provider_options.{PROVIDER_NAME}"


def options_of(request: Parameters) -> MistralOptions:
    """The Mistral settings of a request (or an actor), or the `ConfigurationError` naming the first wrong one."""
    return options_in(request.provider_options)


def options_in(provider_options: Mapping[str, Mapping[str, object]]) -> MistralOptions:
    """The Mistral section of `provider_options`, checked (`ConfigurationError` naming the first wrong one)."""
    given = provider_options.get(PROVIDER_NAME) or {}
    try:
        return MistralOptions.model_validate(given)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join([_PREFIX, *(str(part) for part in first["loc"])])
        # The value is never echoed: a misplaced key must not reach an error message or a log.
        raise ConfigurationError(f"Invalid Mistral setting {where}: {first['msg']}.", field=where) from None
