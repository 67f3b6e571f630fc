"""The settings every actor shares the shape of: how it waits on batches (`BatchSettings`, `TimeoutPolicy`), how its
live calls retry and pace (`LiveSettings`), the default provider, and the base model every settings model derives
from (`SettingsModel`: unknown keys refused, frozen, numbers finite and never booleans).

Apart from `config.py` (an actor's whole configuration, which checks parameters with the provider's registered rules
and so reaches the registry): the batching engine and the provider contract need these and nothing of the registry.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from enum import StrEnum
from typing import Literal, Self, cast, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from lowtide.errors import ConfigurationError

__all__ = [
    "AGENT_EVENTS",
    "DAY",
    "DEFAULT_PROVIDER",
    "POLL_INTERVAL_VARIABLE",
    "BatchSettings",
    "LiveSettings",
    "NoticeKind",
    "NotifySettings",
    "SettingsModel",
    "TimeoutPolicy",
    "poll_interval_override",
]

DAY = 24 * 3600.0

DEFAULT_PROVIDER = "anthropic"
"""The provider of an actor that names none: the one place neutral code names a provider."""


class TimeoutPolicy(StrEnum):
    """What happens to a batch still running when `max_wait` has passed."""

    CANCEL = "cancel"
    """Ask the API to cancel it: nothing more is charged for requests not yet processed."""
    LEAVE = "leave"
    """Leave it running; its results can be collected later with the batch id."""


class SettingsModel(BaseModel):
    """What every settings model shares: unknown keys refused, frozen, numbers finite and never `true` or `false`
    (YAML's `yes` is `true`, which pydantic would take as 1)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _number_not_boolean(cls, value: object, info: ValidationInfo) -> object:
        field = cls.model_fields.get(info.field_name or "")
        numbers = _numbers_in(field.annotation) if field is not None else None
        if numbers == "itself" and isinstance(value, bool):
            raise ValueError(f"expected a number, not {str(value).lower()}")
        if numbers == "values":
            _no_boolean_values(value)
        return value


def _no_boolean_values(value: object) -> None:
    if isinstance(value, Mapping):
        for key, item in cast("Mapping[object, object]", value).items():
            if isinstance(item, bool):
                raise ValueError(f"{key}: expected a number, not {str(item).lower()}")


def _numbers_in(annotation: object) -> Literal["itself", "values"] | None:
    """Whether a field's annotation is a number (`int`, `float | None`, ...), or a mapping to numbers."""
    if annotation is int or annotation is float:
        return "itself"
    arguments = get_args(annotation)
    if get_origin(annotation) is dict:
        return "values" if len(arguments) == 2 and arguments[1] in (int, float) else None
    if arguments and bool not in arguments and any(argument in (int, float) for argument in arguments):
        return "itself"
    return None


NoticeKind = Literal[
    "batch.ended",
    "key.answered",
    "run.ended",
    "agent.parked",
    "agent.waiting-on-person",
    "agent.in-doubt",
    "agent.finished",
    "agent.failed",
    "agent.stopped",
]
"""What a notice tells: a batch's end, a key's answer stored from its batch, a bulk run's end, or the state an agent run
came to."""

AGENT_EVENTS: tuple[NoticeKind, ...] = tuple(kind for kind in get_args(NoticeKind) if kind.startswith("agent."))
"""The notices of an agent run's `notify` when it names none."""


class NotifySettings(SettingsModel):
    """Webhooks out: where lowtide POSTs a signed notice when a batch or bulk run ends, or an agent run moves."""

    url: str = Field(pattern=r"^https?://", description="Where the notices are POSTed (http or https).")
    secret_env: str = Field(
        default="LOWTIDE_NOTIFY_SECRET",
        description="The environment variable holding the secret the notices are signed with (whsec_ and base64, "
        "Standard Webhooks): never in the file.",
    )
    events: tuple[NoticeKind, ...] = Field(
        default=("batch.ended", "run.ended"),
        description="The notices sent (an agent run's `notify`: every `agent.*` state unless it names some); "
        "`key.answered`, one notice per key whose answer a batch stored, is sent only when named.",
    )
    include_keys: bool = Field(
        default=False,
        description="Whether a `key.answered` notice carries the key itself; by default only its SHA-256 "
        "(`key_sha256`), which the caller that chose the key can match.",
    )
    retries: int = Field(default=5, ge=0, le=20, description="Tries after the first of a notice not answered 2xx.")
    backoff: float = Field(
        default=2.0, gt=0, description="Seconds before the first retry; each next waits twice as long."
    )
    timeout: float = Field(default=10.0, gt=0, description="Seconds one try may take.")
    deliver_for: float = Field(
        default=DAY,
        gt=0,
        description="Seconds after a notice is made during which it is tried again: a notice its process could not "
        "deliver is left in the ledger's outbox for the next process that sweeps it (an engine with `notify` set).",
    )


class BatchSettings(SettingsModel):
    """How a batch-mode call waits for its batch."""

    poll_interval: float = Field(default=30.0, gt=0, description="Seconds between two status checks.")
    max_wait: float = Field(
        default=DAY + 600,
        gt=0,
        description="Seconds to wait for a batch to end before giving up on it (unset: a day and ten minutes, or "
        "the provider's own window and ten minutes when it is longer).",
    )
    on_timeout: TimeoutPolicy = TimeoutPolicy.CANCEL
    api_retries: int = Field(
        default=5, ge=0, le=50, description="Retries of a failed status check or result download (never of create)."
    )
    cache_primers: bool = Field(
        default=True,
        description="Whether a bulk run whose requests share a prefix long enough to cache sends one of them first, "
        "marked to be cached, and the rest once it is answered (only where that pays, at batch prices).",
    )
    coalesce_window: float = Field(
        default=0.5, ge=0, description="Seconds concurrent calls are gathered before they are sent as one batch."
    )
    max_batch_requests: int = Field(
        default=100_000, ge=1, le=100_000, description="Most requests in one batch (the API allows 100,000)."
    )
    max_batch_bytes: int = Field(
        default=256_000_000, ge=1024, le=256_000_000, description="Most bytes in one batch (the API allows 256 MB)."
    )
    max_attempts: int = Field(
        default=3, ge=1, le=20, description="Batches one request may travel in when it expires or errors retryably."
    )
    lease_seconds: float = Field(
        default=120.0, gt=0, description="How long other processes leave a request or batch to its owner."
    )
    reconcile_grace: float = Field(
        default=60.0, ge=0, description="How long an unknown create is looked for in the API's list before resending."
    )
    watch_interval: float = Field(
        default=1.0, gt=0, description="Seconds between ledger checks while another process does the work."
    )
    webhook_poll_interval: float | None = Field(
        default=None,
        gt=0,
        description="Seconds between two status checks when the provider's webhooks reach a lowtide receiver "
        "(`lowtide webhooks`, `lowtide serve --webhooks`), which wakes the poll at once: a slow check underneath, so "
        "that a lost webhook costs only time. Unset: no webhooks are expected, every `poll_interval`.",
    )
    poll_schedule: Literal["fixed", "adaptive"] = Field(
        default="fixed",
        description="`adaptive`: where no webhook is expected, space the status checks by how long this ledger's "
        "batches of the provider, endpoint and size took: rare (up to 4 x poll_interval) while their usual end is "
        "far, every poll_interval / 4 within poll_interval of it. `fixed`: every poll_interval.",
    )
    notify: NotifySettings | None = Field(
        default=None, description="Webhooks out: a signed notice to a URL when a batch or bulk run ends."
    )
    keep_uploads: bool = Field(
        default=False,
        description="Keep what a create uploaded (OpenAI's input file) once the answers are stored, or the create "
        "is given up; by default it is deleted.",
    )

    @model_validator(mode="after")
    def _poll_interval_from_environment(self) -> Self:
        """`$LOWTIDE_POLL_INTERVAL`, when set, replaces every actor's `poll_interval` in this process: examples
        written for the real API (a status check a minute) run against the emulator without editing them. The file's
        own value is checked first: one out of range fails as the file loads, with or without the variable."""
        override = poll_interval_override()
        if override is not None:
            object.__setattr__(self, "poll_interval", override)  # frozen: set once, as the model is made
        return self


POLL_INTERVAL_VARIABLE = "LOWTIDE_POLL_INTERVAL"


def poll_interval_override() -> float | None:
    """The poll interval `$LOWTIDE_POLL_INTERVAL` sets (seconds, above 0), or None when it is unset or empty."""
    text = os.environ.get(POLL_INTERVAL_VARIABLE, "").strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        raise ConfigurationError(
            f"{POLL_INTERVAL_VARIABLE} must be a number of seconds above 0 (got {text!r}).",
            field=POLL_INTERVAL_VARIABLE,
        )
    return seconds


_RETRY_CLASSES = ("rate_limited", "overloaded", "server", "connection", "timeout")


class LiveSettings(SettingsModel):
    """How live calls share their provider's rate limits, and how they are tried again."""

    max_concurrency: int = Field(default=16, ge=1, le=10_000, description="Most live calls in flight at once.")
    ramp_start: int = Field(
        default=4,
        ge=1,
        description="Calls in flight at first (until the API's headers tell the limit), and after a 429's pause.",
    )
    ramp_step: int = Field(default=1, ge=1, description="How many more may be in flight after each success.")
    rpm: int | None = Field(default=None, ge=1, description="Requests per minute (default: what the API says).")
    input_tpm: int | None = Field(default=None, ge=1, description="Input tokens per minute (default: the API's).")
    output_tpm: int | None = Field(default=None, ge=1, description="Output tokens per minute (default: the API's).")
    tpm: int | None = Field(
        default=None, ge=1, description="Input and output tokens together per minute, as OpenAI counts them."
    )
    attempt_timeout: float | None = Field(
        default=None,
        gt=0,
        description="Seconds one attempt may take, answer included (default: none; `timeout` still bounds each wait"
        " for the API's next bytes).",
    )
    deadline: float | None = Field(
        default=None, gt=0, description="Seconds a call may take over all its attempts and waits (default: none)."
    )
    max_cost_usd: float | None = Field(
        default=None,
        gt=0,
        allow_inf_nan=False,
        description="A hard cap on what this actor's live calls may cost in the process: a call starts only if what"
        " was spent, the worst case of the calls in flight and its own worst case fit under it.",
    )
    share_quota: bool = Field(
        default=True,
        description="Share the rate limits (what was used, what the API said, a 429's pause) with every process"
        " using the actor's ledger, so that processes on one ledger together stay under the limits; false: this"
        " process counts alone, and live calls never touch the ledger.",
    )
    retries: dict[str, int] = Field(
        default_factory=lambda: {"rate_limited": 8, "overloaded": 6, "server": 4, "connection": 4, "timeout": 3},
        description="Retries per error class: rate_limited, overloaded, server, connection, timeout.",
    )

    @model_validator(mode="after")
    def _check(self) -> Self:
        unknown = sorted(set(self.retries) - set(_RETRY_CLASSES))
        if unknown:
            raise ValueError(f"retries: unknown error class(es) {', '.join(unknown)}; use {', '.join(_RETRY_CLASSES)}")
        if any(n < 0 for n in self.retries.values()):
            raise ValueError("retries: a budget is a number of retries, 0 or more")
        return self
