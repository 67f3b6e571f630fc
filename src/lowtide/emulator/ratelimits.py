"""Rate limits as the Messages API enforces them, per API key: requests, input tokens and output tokens per minute,
each a bucket that refills continuously (a limit of 60 a minute gives back one a second), and a 429
`rate_limit_error` with `retry-after` when a call does not fit. Every live answer carries the
`anthropic-ratelimit-*` headers (limit, remaining, and the RFC 3339 time the bucket is full again).

Output tokens are reserved at `max_tokens` when a call is admitted and settled to what the answer used, as the API
does. A call fits when each bucket holds what it needs, or (for a need larger than the whole limit) is full.

`Latency` makes live answers take time: a fixed part plus a part per output token, on the emulator's clock.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime

from lowtide.emulator.errors import ApiError

__all__ = ["Admitted", "Latency", "Quotas", "RateLimits"]

_KINDS = ("requests", "input-tokens", "output-tokens")


@dataclass(frozen=True)
class RateLimits:
    """Limits per minute, per API key; None is no limit."""

    rpm: int | None = None
    input_tpm: int | None = None
    output_tpm: int | None = None

    def __post_init__(self) -> None:
        for name in ("rpm", "input_tpm", "output_tpm"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a whole number of at least 1, or None (no limit), not {value!r}")

    @property
    def any(self) -> bool:
        return any(v is not None for v in (self.rpm, self.input_tpm, self.output_tpm))


@dataclass(frozen=True)
class Latency:
    """How long a live answer takes: `fixed` seconds plus `per_output_token` seconds for each token it holds."""

    fixed: float = 0.0
    per_output_token: float = 0.0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.fixed) and math.isfinite(self.per_output_token)):
            raise ValueError("latency must be finite")
        if self.fixed < 0 or self.per_output_token < 0:
            raise ValueError("latency cannot be negative")

    def of(self, output_tokens: int) -> float:
        return self.fixed + self.per_output_token * output_tokens


@dataclass
class _Bucket:
    limit: int
    level: float
    at: float

    def refill(self, now: float) -> None:
        self.level = min(float(self.limit), self.level + (now - self.at) * self.limit / 60.0)
        self.at = now

    def fits(self, need: int) -> bool:
        return self.level >= min(need, self.limit)

    def wait_for(self, need: int) -> float:
        """Seconds until `need` fits."""
        missing = min(need, self.limit) - self.level
        return max(0.0, missing * 60.0 / self.limit)

    def full_at(self, now: float) -> float:
        return now + (self.limit - self.level) * 60.0 / self.limit


@dataclass
class Admitted:
    """A call let through: what it reserved, to settle once its answer is known."""

    key: str
    reserved_output: int


@dataclass
class _Account:
    buckets: dict[str, _Bucket] = field(default_factory=dict[str, _Bucket])


class Quotas:
    """The rate limits of every API key on one emulator, on its clock."""

    def __init__(self, limits: RateLimits) -> None:
        self.limits = limits
        self.limited = 0
        """429s sent."""
        self._accounts: dict[str, _Account] = {}

    def _account(self, key: str, now: float) -> _Account:
        account = self._accounts.get(key)
        if account is None:
            account = self._accounts[key] = _Account()
            for kind, limit in zip(
                _KINDS, (self.limits.rpm, self.limits.input_tpm, self.limits.output_tpm), strict=True
            ):
                if limit is not None:
                    account.buckets[kind] = _Bucket(limit, float(limit), now)
        for bucket in account.buckets.values():
            bucket.refill(now)
        return account

    def admit(self, key: str, *, input_tokens: int, max_tokens: int, now: float) -> Admitted:
        """Take a call's share from each bucket, or raise the 429 the API would send, with `retry-after`."""
        account = self._account(key, now)
        needs = {"requests": 1, "input-tokens": input_tokens, "output-tokens": max_tokens}
        short = [kind for kind, bucket in account.buckets.items() if not bucket.fits(needs[kind])]
        if short:
            self.limited += 1
            wait = max(account.buckets[kind].wait_for(needs[kind]) for kind in short)
            names = {"requests": "requests", "input-tokens": "input tokens", "output-tokens": "output tokens"}
            raise ApiError(
                "rate_limit_error",
                f"This request would exceed the rate limit for your organization of"
                f" {', '.join(f'{account.buckets[k].limit:,} {names[k]} per minute' for k in short)}."
                " Please reduce the prompt length or the maximum tokens requested, or try again later.",
                headers={"retry-after": str(max(1, math.ceil(wait))), **self._headers(account, now)},
            )
        for kind, bucket in account.buckets.items():
            bucket.level -= min(needs[kind], bucket.limit)
        return Admitted(key, max_tokens if "output-tokens" in account.buckets else 0)

    def settle(self, admitted: Admitted, *, output_tokens: int, now: float) -> dict[str, str]:
        """Give back what a call reserved beyond what it used; the headers its answer carries."""
        account = self._account(admitted.key, now)
        bucket = account.buckets.get("output-tokens")
        if bucket is not None:
            bucket.level = min(float(bucket.limit), bucket.level + max(0, admitted.reserved_output - output_tokens))
        return self._headers(account, now)

    def _headers(self, account: _Account, now: float) -> dict[str, str]:
        headers: dict[str, str] = {}
        for kind, bucket in account.buckets.items():
            prefix = f"anthropic-ratelimit-{kind}"
            headers[f"{prefix}-limit"] = str(bucket.limit)
            headers[f"{prefix}-remaining"] = str(max(0, math.floor(bucket.level)))
            headers[f"{prefix}-reset"] = _rfc3339(bucket.full_at(now))
        return headers


def _rfc3339(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
