"""The settings only Bedrock has, as an actor gives them under `provider_options: {bedrock: ...}`, checked before
anything is sent: where batch inference's input and output go in S3 and the role Bedrock reads and writes them with,
the region, and the account's records-per-job quotas."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lowtide import ConfigurationError
from lowtide.providers import Parameters

__all__ = ["MAX_RECORDS", "MIN_RECORDS", "PROVIDER_NAME", "BedrockOptions", "options_in", "options_of"]

PROVIDER_NAME = "bedrock"
GEN_AI_PROVIDER_NAME = "aws.bedrock"
"""`gen_ai.provider.name` of its spans: the OpenTelemetry GenAI semantic conventions' value (1.44)."""
MIN_RECORDS = 100
"""Bedrock's default minimum of records per batch inference job (an adjustable service quota)."""
MAX_RECORDS = 50_000
"""Bedrock's default maximum of records per batch inference job (an adjustable service quota)."""


class BedrockOptions(BaseModel):
    """Bedrock's own settings of one actor. In batch mode `s3_bucket` and `role_arn` are required."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    s3_bucket: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
    """Batch mode: the bucket a job's input is written to and its output read from."""
    role_arn: str | None = Field(default=None, pattern=r"^arn:aws(-[a-z]+)*:iam::\d{12}:role/.+$")
    """Batch mode: the service role Bedrock reads the input and writes the output with."""
    key_prefix: str = Field(default="lowtide/", max_length=512)
    """Batch mode: where under the bucket lowtide writes (`<prefix>input/...`, `<prefix>output/...`)."""
    region: str | None = Field(default=None, pattern=r"^[a-z]{2}(-[a-z]+)+-\d$")
    """The AWS region; by default the one the usual AWS chain gives (`AWS_REGION`, the profile)."""
    min_records: int = Field(default=MIN_RECORDS, ge=1)
    """Batch mode: the fewest records a job may hold (the account's quota, 100 unless AWS raised or lowered it). A
    batch holding fewer is refused before anything is sent: Bedrock would fail its job."""
    max_records: int = Field(default=MAX_RECORDS, ge=1, le=1_000_000)
    """Batch mode: the most records a job may hold (the account's quota); more are sent as several jobs."""


_PREFIX = f"provider_options.{PROVIDER_NAME}"


def options_of(request: Parameters) -> BedrockOptions:
    return options_in(request.provider_options)


def options_in(provider_options: Mapping[str, Mapping[str, object]]) -> BedrockOptions:
    """The Bedrock section of `provider_options`, checked (`ConfigurationError` naming the first wrong one)."""
    given = provider_options.get(PROVIDER_NAME) or {}
    try:
        return BedrockOptions.model_validate(given)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join([_PREFIX, *(str(part) for part in first["loc"])])
        raise ConfigurationError(f"Invalid Bedrock setting {where}: {first['msg']}.", field=where) from None
