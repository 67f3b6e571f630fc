"""The settings only Gemini has, as an actor gives them under `provider_options: {gemini: ...}`, checked before
anything is sent."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lowtide import ConfigurationError
from lowtide.providers import Parameters

__all__ = ["PROVIDER_NAME", "GeminiOptions", "options_in", "options_of"]

PROVIDER_NAME = "gemini"
GEN_AI_PROVIDER_NAME = "gcp.gemini"
"""`gen_ai.provider.name` of its spans: the OpenTelemetry GenAI semantic conventions' value (1.44)."""


class GeminiOptions(BaseModel):
    """Gemini's own settings of one actor or call. Further `generationConfig` fields travel in `extra_params`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    thinking_budget: int | None = Field(default=None, ge=-1)
    """The tokens a thinking model may think with: 0 turns thinking off (where the model allows), -1 lets the model
    decide; the API's default when not given."""
    include_thoughts: bool | None = None
    """Whether the answer carries the model's thought summaries (as thinking blocks)."""
    api_version: str | None = Field(default=None, pattern=r"^v1(beta|alpha)?$")
    """The API version the SDK calls (`v1beta`, the SDK's own default when not given, or `v1`)."""
    batch_inline_bytes: int | None = Field(default=None, ge=0)
    """Batch mode, given for the actor: the most bytes of requests (as JSONL) a batch sends inline; a larger batch is
    uploaded as a file through the Files API. 0 uploads every batch; by default 16 MiB (the API takes about 20 MB
    inline). Ignored in live mode."""
    batch_webhook_url: str | None = Field(default=None, pattern=r"^https?://")
    """Batch mode: the URL each job calls when it ends (`webhook_config.uris` on the create: a per-job webhook, signed
    with an RS256 JWT for this URL), where `lowtide webhooks` or `lowtide serve --webhooks` for this actor listens."""
    webhook_jwks_url: str | None = Field(default=None, pattern=r"^https?://")
    """The JWKS the per-job webhooks' tokens are verified with, by default `$GEMINI_WEBHOOK_JWKS_URL`, else Google's
    (`https://generativelanguage.googleapis.com/.well-known/jwks.json`); an emulator's is `/_emulator/jwks/gemini`."""


_PREFIX = f"provider_options.{PROVIDER_NAME}"


def options_of(request: Parameters) -> GeminiOptions:
    """The Gemini settings of a request (or an actor), or the `ConfigurationError` naming the first wrong one."""
    return options_in(request.provider_options)


def options_in(provider_options: Mapping[str, Mapping[str, object]]) -> GeminiOptions:
    """The Gemini section of `provider_options`, checked (`ConfigurationError` naming the first wrong one)."""
    given = provider_options.get(PROVIDER_NAME) or {}
    try:
        return GeminiOptions.model_validate(given)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join([_PREFIX, *(str(part) for part in first["loc"])])
        # The value is never echoed: a misplaced key must not reach an error message or a log.
        raise ConfigurationError(f"Invalid Gemini setting {where}: {first['msg']}.", field=where) from None
