"""`Quota`: the live calls of one scope (one provider's credentials at one endpoint), admitted at its rate limits and
never over them.

Buckets for requests, input tokens, output tokens and (where the API counts them together) all tokens per minute,
each refilling continuously at its limit (60 a minute gives back one a second). A limit is what the configuration
says, or what the API's rate-limit headers say, whichever is lower; the headers also lower what remains when other
clients share the key. A call is admitted, in arrival order, when the scope is not paused, fewer calls than the
concurrency cap are in flight, and each bucket holds its share: one request, its estimated input tokens, and its
`max_tokens` (reserved, as the API reserves them, then settled to what the answer used; the input estimate is
settled the same way, as a refund or a debt).

A 429 pauses the whole scope for the API's `retry-after` (or a backoff), then starts slowly: the concurrency cap
falls back to the ramp's start and grows by one step for each call that succeeds, as it does at startup.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from lowtide.clock import Clock
from lowtide.live.events import LiveEvent, Observer, PauseEnded, PauseStarted
from lowtide.live.reports import Budget, QuotaReport

__all__ = ["Permit", "Quota", "QuotaLimits"]

_LEAST_WAIT = 0.001


@dataclass(frozen=True)
class QuotaLimits:
    """A scope's configured limits (None: not limited by configuration; the API's headers may still limit it)."""

    max_concurrency: int = 16
    ramp_start: int = 4
    ramp_step: int = 1
    rpm: int | None = None
    input_tpm: int | None = None
    output_tpm: int | None = None
    tpm: int | None = None
    """Input and output tokens together (as OpenAI counts them)."""


class _Bucket:
    def __init__(self, limit: int | None, now: float) -> None:
        self.configured = limit
        self.limit = limit
        self.level = float(limit) if limit is not None else 0.0
        self.at = now
        self.untracked = 0.0
        """What calls took while the limit was unknown: counted against the first budget the API tells, since
        that budget may have been reckoned before the API saw them."""

    def refill(self, now: float) -> None:
        if self.limit is not None:
            self.level = min(float(self.limit), self.level + (now - self.at) * self.limit / 60.0)
        self.at = now

    def need(self, amount: int) -> float:
        return float(min(amount, self.limit)) if self.limit is not None else 0.0

    def wait_for(self, amount: int) -> float:
        if self.limit is None:
            return 0.0
        return max(0.0, (self.need(amount) - self.level) * 60.0 / self.limit)

    def take(self, amount: int) -> None:
        if self.limit is not None:
            self.level -= self.need(amount)
        else:
            self.untracked += amount

    def give(self, amount: float) -> None:
        if self.limit is not None:
            self.level = min(float(self.limit), self.level + amount)

    def learn(self, budget: Budget) -> None:
        learned = budget.limit if self.configured is None else min(budget.limit, self.configured)
        if self.limit is None:
            # The first budget told may not count the other calls sent before it: count them (at worst twice, for
            # a moment, until the next answers tell).
            self.level = max(0.0, float(min(budget.remaining, learned)) - self.untracked)
            self.untracked = 0.0
        self.limit = learned
        self.level = min(self.level, float(budget.remaining), float(learned))


@dataclass
class Permit:
    """One admitted call: what it took from the scope, settled when it ends."""

    input_tokens: int
    output_tokens: int
    waited: float


class Quota:
    """The limits of one scope, shared by every live call through it in this process."""

    def __init__(self, name: str, limits: QuotaLimits, clock: Clock) -> None:
        self.name = name
        self.limits = limits
        self.clock = clock
        now = clock.now()
        self._requests = _Bucket(limits.rpm, now)
        self._input = _Bucket(limits.input_tpm, now)
        self._output = _Bucket(limits.output_tpm, now)
        self._tokens = _Bucket(limits.tpm, now)
        self.cap = min(limits.ramp_start, limits.max_concurrency)
        self.in_flight = 0
        self.paused_until = 0.0
        self.pauses = 0
        self._pause_told = True
        self.listeners: list[Observer] = []
        """Told when the scope's pause starts and ends."""
        self._gate = asyncio.Lock()
        self._released = asyncio.Event()

    def _refill(self) -> float:
        now = self.clock.now()
        for bucket in (self._requests, self._input, self._output, self._tokens):
            bucket.refill(now)
        return now

    async def admit(self, *, input_tokens: int, output_tokens: int) -> Permit:
        """Wait (in arrival order) until the call fits, then take its share."""
        started = self.clock.now()
        async with self._gate:
            while True:
                now = self._refill()
                if now < self.paused_until:
                    await self.clock.sleep(max(self.paused_until - now, _LEAST_WAIT))
                    continue
                if self.in_flight >= self.cap:
                    self._released.clear()
                    await self._released.wait()
                    continue
                wait = max(
                    self._requests.wait_for(1),
                    self._input.wait_for(input_tokens),
                    self._output.wait_for(output_tokens),
                    self._tokens.wait_for(input_tokens + output_tokens),
                )
                if wait > 0:
                    # At least a millisecond: a shorter wait can be lost in the clock's float (1.8e9 s has steps
                    # of about 0.2 us), and the bucket would never fill.
                    await self.clock.sleep(max(wait, _LEAST_WAIT))
                    continue
                if not self._pause_told:
                    self._pause_told = True
                    self._tell(PauseEnded(self.name))
                self._requests.take(1)
                self._input.take(input_tokens)
                self._output.take(output_tokens)
                self._tokens.take(input_tokens + output_tokens)
                self.in_flight += 1
                return Permit(input_tokens, output_tokens, self.clock.now() - started)

    def release(self, permit: Permit, *, input_tokens: int | None = None, output_tokens: int | None = None) -> None:
        """The call ended: its slot back, and its tokens settled to what it used (None: it used what it took)."""
        self._refill()
        self.in_flight -= 1
        if input_tokens is not None:
            self._input.give(permit.input_tokens - input_tokens)
            self._tokens.give(permit.input_tokens - input_tokens)
        if output_tokens is not None:
            self._output.give(permit.output_tokens - output_tokens)
            self._tokens.give(permit.output_tokens - output_tokens)
        self._released.set()

    def succeeded(self) -> None:
        """One more call went through: the concurrency cap grows a step, up to the maximum."""
        self.cap = min(self.limits.max_concurrency, self.cap + self.limits.ramp_step)

    def pause(self, seconds: float) -> float:
        """A 429: no call is admitted for `seconds` (an earlier, longer pause stands); then a slow start."""
        until = self.clock.now() + seconds
        if until > self.paused_until:
            self.paused_until = until
            self.pauses += 1
            self._pause_told = False
            self._tell(PauseStarted(self.name, until))
        self.cap = min(self.limits.ramp_start, self.limits.max_concurrency)
        return self.paused_until

    def _tell(self, event: LiveEvent) -> None:
        for listener in self.listeners:
            listener(event)

    def learn(self, report: QuotaReport) -> None:
        """What the API's headers said: limits and what remains (lowering ours when others use the key too)."""
        self._refill()
        for bucket, budget in (
            (self._requests, report.requests),
            (self._input, report.input_tokens),
            (self._output, report.output_tokens),
            (self._tokens, report.tokens),
        ):
            if budget is not None:
                bucket.learn(budget)

    @property
    def known_limits(self) -> tuple[int | None, int | None, int | None, int | None]:
        """Requests, input, output and all tokens per minute in force (configured or learned)."""
        return self._requests.limit, self._input.limit, self._output.limit, self._tokens.limit
