"""The settings only Together has, as an actor gives them under `provider_options: {together: ...}`, checked before
anything is sent."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lowtide import ConfigurationError
from lowtide.providers import Parameters

__all__ = ["PROVIDER_NAME", "TogetherOptions", "options_in", "options_of"]

PROVIDER_NAME = "together"


class TogetherOptions(BaseModel):
    """Together's own settings of one actor or call. Further body parameters travel in `extra_params`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    repetition_penalty: float | None = Field(default=None, gt=0)
    """How much a token said already is held back (Together's own parameter; the API's default when not given)."""
    min_p: float | None = Field(default=None, ge=0, le=1)
    reasoning_effort: Literal["low", "medium", "high"] | None = None
    """How much a reasoning model thinks (the API's default when not given)."""
    batch_priority: int | None = None
    """Batch mode: the batch's `priority`, as Together's `batches.create` takes it. Ignored in live mode."""
    unlisted_model: bool = False
    """Send the model unchecked though `GET /v1/models` does not list it (a fine-tune's, a dedicated endpoint's): the
    API has the last word. Never sent."""


_PREFIX = f"provider_options.{PROVIDER_NAME}"


def options_of(request: Parameters) -> TogetherOptions:
    """The Together settings of a request (or an actor), or the `ConfigurationError` naming the first wrong one."""
    return options_in(request.provider_options)


def options_in(provider_options: Mapping[str, Mapping[str, object]]) -> TogetherOptions:
    """The Together section of `provider_options`, checked (`ConfigurationError` naming the first wrong one)."""
    given = provider_options.get(PROVIDER_NAME) or {}
    try:
        return TogetherOptions.model_validate(given)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join([_PREFIX, *(str(part) for part in first["loc"])])
        # The value is never echoed: a misplaced key must not reach an error message or a log.
        raise ConfigurationError(f"Invalid Together setting {where}: {first['msg']}.", field=where) from None
