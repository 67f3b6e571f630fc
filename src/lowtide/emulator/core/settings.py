"""What an `Emulator` is told when it is made, shared by every emulation: batch timings, the accepted keys, the
limits tests lower, the models served beyond each API's own, and the live rate limits and latency."""

from __future__ import annotations

from dataclasses import dataclass, field

from lowtide.emulator.core.ratelimits import Latency, RateLimits

__all__ = ["COMPATIBLE_PARTS", "Settings"]


@dataclass
class Settings:
    """Tunable behaviour. Batches keep the timings in force when they were created (or, for cancel, canceled).

    A byte limit of None is each API's own; a number lowers it, to test a 413 without building huge bodies
    (`max_request_bytes` lowers every API's, the others the APIs that have such a limit)."""

    processing_seconds: float = 0.0
    cancel_seconds: float = 0.0
    api_keys: frozenset[str] | None = None
    max_batch_bytes: int | None = None
    max_request_bytes: int | None = None
    max_file_bytes: int | None = None
    extra_models: tuple[str, ...] = ()
    rate_limits: RateLimits = field(default_factory=RateLimits)
    latency: Latency = field(default_factory=Latency)
    compatible_lacks: frozenset[str] = frozenset()
    """Parts OpenAI's wire leaves out, to stand for an OpenAI-compatible endpoint without them (`COMPATIBLE_PARTS`):
    `metadata` (a batch's metadata is taken and dropped), `cancel` and `models` (those routes answer 404)."""


COMPATIBLE_PARTS = frozenset({"metadata", "cancel", "models"})
"""The parts of OpenAI's wire an OpenAI-compatible endpoint may lack, each switched off by
`Settings.compatible_lacks`."""
