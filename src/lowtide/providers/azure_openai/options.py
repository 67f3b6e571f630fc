"""The settings only Azure OpenAI has, as an actor gives them under `provider_options: {azure_openai: ...}`, checked
before anything is sent; and the OpenAI settings beside them, which Azure's Chat Completions API takes as OpenAI's does.

An actor's `model` names a deployment (on Azure a request goes to a deployment, not a model): `model` here says which
model that deployment serves, for prices, budgets and the context window (without it they are read from the
deployment's name when it is a model's, as deployments are often named, else unknown, never guessed).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lowtide.core.parameters import Parameters
from lowtide.errors import ConfigurationError
from lowtide.providers.openai.options import OpenAIOptions

__all__ = ["DEFAULT_API_VERSION", "OPENAI_SECTION", "PROVIDER_NAME", "AzureOptions", "azure_options", "openai_options"]

PROVIDER_NAME = "azure_openai"
GEN_AI_PROVIDER_NAME = "azure.ai.openai"
"""`gen_ai.provider.name` of its spans: the OpenTelemetry GenAI semantic conventions' value (1.44)."""
OPENAI_SECTION = "openai"
"""The section of `provider_options` OpenAI's request encoders read, which Azure's settings are handed to them in."""
DEFAULT_API_VERSION = "2024-10-21"
"""Azure OpenAI's current generally available data-plane version: chat completions, files and batches (with
`metadata`, which lowtide's exactly-once create depends on)."""

_PREFIX = f"provider_options.{PROVIDER_NAME}"


class AzureOptions(BaseModel):
    """Azure's own settings of one actor or call."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str | None = Field(default=None, min_length=1)
    """The model the actor's deployment serves (`gpt-4o-mini`), for prices and checks; the API is never told it."""
    api_version: str | None = Field(default=None, pattern=r"^\d{4}-\d{2}-\d{2}(-preview)?$")
    """The data-plane API version (`?api-version=`); else `OPENAI_API_VERSION`, else `DEFAULT_API_VERSION`."""


_AZURE_KEYS = frozenset(AzureOptions.model_fields)


def _section(parameters: Parameters) -> Mapping[str, Any]:
    return parameters.provider_options.get(PROVIDER_NAME) or {}


def azure_options(parameters: Parameters) -> AzureOptions:
    """The Azure settings of a request (or an actor), or the `ConfigurationError` naming the first wrong one."""
    given = {key: value for key, value in _section(parameters).items() if key in _AZURE_KEYS}
    try:
        return AzureOptions.model_validate(given)
    except ValidationError as exc:
        raise _refusal(exc) from None


def openai_options(parameters: Parameters) -> dict[str, Any]:
    """The OpenAI settings among the Azure section (everything but Azure's own), as OpenAI's encoders read them: on
    Azure every call goes to Chat Completions, the API Azure's batches take."""
    given = {key: value for key, value in _section(parameters).items() if key not in _AZURE_KEYS}
    endpoint = given.get("endpoint", "chat_completions")
    if endpoint != "chat_completions":
        raise ConfigurationError(
            f"{_PREFIX}.endpoint: lowtide sends Azure OpenAI calls to Chat Completions (the API Azure's batches take), "
            f"not {endpoint!r}.",
            field=f"{_PREFIX}.endpoint",
        )
    try:
        OpenAIOptions.model_validate(given)
    except ValidationError as exc:
        raise _refusal(exc) from None
    return {**given, "endpoint": "chat_completions"}


def _refusal(exc: ValidationError) -> ConfigurationError:
    first = exc.errors()[0]
    where = ".".join([_PREFIX, *(str(part) for part in first["loc"])])
    # The value is never echoed: a misplaced key must not reach an error message or a log.
    return ConfigurationError(f"Invalid Azure OpenAI setting {where}: {first['msg']}.", field=where)
