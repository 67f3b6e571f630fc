"""The settings only Vertex AI has, as an actor gives them under `provider_options: {vertex: ...}`, checked before
anything is sent. Gemini's own generation settings (`thinking_budget`, `include_thoughts`) stay under
`provider_options.gemini`, read by the same code as for the Gemini API."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lowtide import ConfigurationError
from lowtide.providers import Parameters

__all__ = ["GEN_AI_PROVIDER_NAME", "PROVIDER_NAME", "VertexOptions", "options_in", "options_of"]

PROVIDER_NAME = "vertex"
GEN_AI_PROVIDER_NAME = "gcp.vertex_ai"
"""`gen_ai.provider.name` of its spans: the OpenTelemetry GenAI semantic conventions' value."""
_NAME = r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$"
_BUCKET = r"^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$"


class VertexOptions(BaseModel):
    """Vertex AI's own settings of one actor: where its calls go and where a batch's files are kept."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    project: str | None = Field(default=None, pattern=_NAME)
    """The Google Cloud project id; else `GOOGLE_CLOUD_PROJECT`, else the project of the credentials."""
    location: str | None = Field(default=None, pattern=r"^[a-z0-9-]{2,40}$")
    """The region (`us-central1`); else `GOOGLE_CLOUD_LOCATION`, else `us-central1` (a batch job needs a region)."""
    credentials: Literal["default", "anonymous"] | None = None
    """`default`: Google's Application Default Credentials, as its SDKs read them; `anonymous`: none (an emulator).
    Unset: anonymous when the base URL is on this machine (loopback), else the default credentials."""
    bucket: str | None = Field(default=None, pattern=_BUCKET)
    """Batch mode: the Cloud Storage bucket a batch's input is written to and its output read from (required)."""
    key_prefix: str = Field(default="lowtide", pattern=r"^[A-Za-z0-9._/-]{1,200}$")
    """Batch mode: the folder of the bucket a batch's files go under (`<prefix>/<intent id>/`)."""


def options_of(request: Parameters, name: str = PROVIDER_NAME) -> VertexOptions:
    """The Vertex settings of a request (or an actor), or the `ConfigurationError` naming the first wrong one."""
    return options_in(request.provider_options, name)


def options_in(provider_options: Mapping[str, Mapping[str, object]], name: str = PROVIDER_NAME) -> VertexOptions:
    """The Vertex section of `provider_options` (under the provider's `name`: `vertex`, or `vertex_claude`), checked
    (`ConfigurationError` naming the first wrong one)."""
    given = provider_options.get(name) or {}
    try:
        return VertexOptions.model_validate(given)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join([f"provider_options.{name}", *(str(part) for part in first["loc"])])
        # The value is never echoed: a misplaced key must not reach an error message or a log.
        raise ConfigurationError(f"Invalid Vertex AI setting {where}: {first['msg']}.", field=where) from None
