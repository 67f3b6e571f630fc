"""Rate limits as the APIs enforce them, per API and key, each limit a bucket that refills continuously (a limit of
60 a minute gives back one a second), and a 429 with `retry-after` when a call does not fit. Which limits an API has,
and the headers its answers carry, are its emulation's `QuotaStyle`: `requests`, `input-tokens` and `output-tokens`
per minute, or `requests` and `tokens` (the input and the answer's maximum together).

Output tokens are reserved at the request's maximum when a call is admitted and settled to what the answer used, as
the APIs do. A call fits when each bucket holds what it needs, or (for a need larger than the whole limit) is full.

`Latency` makes live answers take time: a fixed part plus a part per output token, on the emulator's clock.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from lowtide.emulator.core.errors import ApiError

__all__ = ["Admitted", "BucketState", "Latency", "QuotaStyle", "Quotas", "RateLimits"]


@dataclass(frozen=True)
class RateLimits:
    """Limits per minute, per API key; None is no limit."""

    rpm: int | None = None
    input_tpm: int | None = None
    output_tpm: int | None = None
    tpm: int | None = None
    """OpenAI's tokens per minute: input and output together."""

    def __post_init__(self) -> None:
        for name in ("rpm", "input_tpm", "output_tpm", "tpm"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a whole number of at least 1, or None (no limit), not {value!r}")

    @property
    def any(self) -> bool:
        return any(v is not None for v in (self.rpm, self.input_tpm, self.output_tpm, self.tpm))


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


@dataclass(frozen=True)
class BucketState:
    """What an answer tells of one bucket: its kind (`requests`, `tokens`, ...), its limit, what remains, and when it
    is full again (`full_at`, on the clock, as is `now`)."""

    kind: str
    limit: int
    remaining: int
    now: float
    full_at: float


@dataclass(frozen=True)
class QuotaStyle:
    """One API's rate limits: its `name` (keys are counted per API), the buckets it keeps of the configured limits
    (kind -> limit per minute, None for none), and the headers its answers carry for one bucket."""

    name: str
    buckets: Callable[[RateLimits], Mapping[str, int | None]]
    headers: Callable[[BucketState], Mapping[str, str]]


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

    account: tuple[QuotaStyle, str]
    reserved_output: int


@dataclass
class _Account:
    buckets: dict[str, _Bucket] = field(default_factory=dict[str, _Bucket])


class Quotas:
    """The rate limits of every API and key on one emulator, on its clock."""

    def __init__(self, limits: RateLimits) -> None:
        self.limits = limits
        self.limited = 0
        """429s sent."""
        self._accounts: dict[tuple[str, str], _Account] = {}

    def _account(self, account: tuple[QuotaStyle, str], now: float) -> _Account:
        style, key = account
        found = self._accounts.get((style.name, key))
        if found is None:
            found = self._accounts[(style.name, key)] = _Account()
            for kind, limit in style.buckets(self.limits).items():
                if limit is not None:
                    found.buckets[kind] = _Bucket(limit, float(limit), now)
        for bucket in found.buckets.values():
            bucket.refill(now)
        return found

    def admit(self, style: QuotaStyle, key: str, *, input_tokens: int, max_tokens: int, now: float) -> Admitted:
        """Take a call's share from each bucket, or raise the 429 the API would send, with `retry-after`."""
        name = (style, key)
        account = self._account(name, now)
        needs = {
            "requests": 1,
            "input-tokens": input_tokens,
            "output-tokens": max_tokens,
            "tokens": input_tokens + max_tokens,
        }
        short = [kind for kind, bucket in account.buckets.items() if not bucket.fits(needs[kind])]
        if short:
            self.limited += 1
            wait = max(account.buckets[kind].wait_for(needs[kind]) for kind in short)
            limits = ", ".join(f"{account.buckets[k].limit:,} {k.replace('-', ' ')} per minute" for k in short)
            raise ApiError(
                "rate_limit_error",
                f"This request would exceed the rate limit for your organization of {limits}. Please reduce the"
                " prompt length or the maximum tokens requested, or try again later.",
                headers={"retry-after": str(max(1, math.ceil(wait))), **self._headers(name, account, now)},
            )
        for kind, bucket in account.buckets.items():
            bucket.level -= min(needs[kind], bucket.limit)
        reserves = "output-tokens" in account.buckets or "tokens" in account.buckets
        return Admitted(name, max_tokens if reserves else 0)

    def settle(self, admitted: Admitted, *, output_tokens: int, now: float) -> dict[str, str]:
        """Give back what a call reserved beyond what it used; the headers its answer carries."""
        account = self._account(admitted.account, now)
        unused = max(0, admitted.reserved_output - output_tokens)
        for kind in ("output-tokens", "tokens"):
            bucket = account.buckets.get(kind)
            if bucket is not None:
                bucket.level = min(float(bucket.limit), bucket.level + unused)
        return self._headers(admitted.account, account, now)

    def _headers(self, name: tuple[QuotaStyle, str], account: _Account, now: float) -> dict[str, str]:
        headers: dict[str, str] = {}
        for kind, bucket in account.buckets.items():
            remaining = max(0, math.floor(bucket.level))
            headers.update(name[0].headers(BucketState(kind, bucket.limit, remaining, now, bucket.full_at(now))))
        return headers
