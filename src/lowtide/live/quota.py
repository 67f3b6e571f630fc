"""`Quota`: the live calls of one scope (one provider's credentials at one endpoint), admitted at its rate limits and
never over them.

Buckets for requests, input tokens, output tokens and (where the API counts them together) all tokens per minute,
each refilling continuously at its limit (60 a minute gives back one a second). A limit is what the configuration
says, or what the API's rate-limit headers say, whichever is lower; the headers also lower what remains when other
clients share the key. A call is admitted, in arrival order, when the scope is not paused, fewer calls than the
concurrency cap are in flight, and each bucket holds its share: one request, its estimated input tokens, and its
`max_tokens` (reserved, as the API reserves them, then settled to what the answer used; the input estimate is
settled the same way, as a refund or a debt).

The startup ramp (the concurrency cap starting at `ramp_start`, growing by `ramp_step` with each success) protects
a scope whose limit nobody has told: once the API's rate-limit headers have told this process the scope's limits
and what remains, the buckets hold admission to that known budget, and the cap opens to `max_concurrency` at once.

A 429 pauses the whole scope for the API's `retry-after` (or a backoff), then starts slowly: the concurrency cap
falls back to the ramp's start and grows by one step for each call that succeeds, headers or not, until it is
back at `max_concurrency`.

The buckets and the pause live in a `QuotaStore`: this process's alone, or the ledger's, shared by every process
that uses it (two `lowtide run --mode live` on one machine stay under one limit, and a 429 seen by one pauses both).
The concurrency cap and its ramp are each process's own. What a call settles (a refund of what it reserved, or a
debt) and what the headers tell are carried to the store with this process's next admission: one round trip per
call, and none for a call that only ends.
"""

from __future__ import annotations

import asyncio
import functools
from dataclasses import dataclass

from lowtide.core.clock import Clock
from lowtide.ledger.quota_records import QuotaStore, ScopeState
from lowtide.live.events import LiveEvent, Observer, PauseEnded, PauseStarted
from lowtide.live.quota_state import LocalQuotaStore
from lowtide.live.reports import QuotaReport

__all__ = ["Permit", "Quota", "QuotaLimits"]

_LEAST_WAIT = 0.001
_ON_THE_WAY = 0.25
"""Seconds a call admitted here may take to reach the API and be counted there (a loaded machine's event loop and
a new connection included). A call taken from a full bucket leaves the API's bucket full until it arrives, with no
refill meanwhile: the quota's bucket gets none either for that long, so as not to count a refill the API never
had."""


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


@dataclass
class Permit:
    """One admitted call: what it took from the scope, settled when it ends."""

    input_tokens: int
    output_tokens: int
    waited: float


@dataclass
class _Unsent:
    """What this process has to tell the store with its next update: refunds (or debts), and the last headers."""

    input: float = 0.0
    output: float = 0.0
    report: QuotaReport | None = None
    report_at: float = 0.0
    """When the report's answer arrived (the quota's clock)."""
    pause_until: float = 0.0

    def apply(self, state: ScopeState, limits: QuotaLimits, now: float) -> None:
        """Tell the store, its buckets refilled to `now`."""
        if self.report is not None:
            for bucket, configured, budget in (
                (state.requests, limits.rpm, self.report.requests),
                (state.input, limits.input_tpm, self.report.input_tokens),
                (state.output, limits.output_tpm, self.report.output_tokens),
                (state.tokens, limits.tpm, self.report.tokens),
            ):
                if budget is not None:
                    bucket.learn(configured, budget, since=now - self.report_at)
        state.input.give(state.input.limit(limits.input_tpm), self.input)
        state.output.give(state.output.limit(limits.output_tpm), self.output)
        state.tokens.give(state.tokens.limit(limits.tpm), self.input + self.output)
        if self.pause_until > state.paused_until:
            state.paused_until = self.pause_until
            state.pauses += 1
        self.input = self.output = 0.0
        self.report = None
        self.pause_until = 0.0


class Quota:
    """The limits of one scope, shared by every live call through it in this process (and, with the ledger's
    store, by every process using that ledger)."""

    def __init__(self, name: str, limits: QuotaLimits, clock: Clock, store: QuotaStore | None = None) -> None:
        self.name = name
        self.limits = limits
        self.clock = clock
        self.store: QuotaStore = store if store is not None else LocalQuotaStore()
        self._offered: list[QuotaStore] = [] if store is None else [store]
        """The stores of the actors calling through this quota, in the order they came: the first is in use."""
        self.cap = min(limits.ramp_start, limits.max_concurrency)
        self.in_flight = 0
        self.paused_until = 0.0
        self.pauses = 0
        self._pauses_seen = 0
        self._pause_told = True
        self._slow_start = False
        """After a pause: the cap grows a step per success, and the headers do not open it."""
        self._unsent = _Unsent()
        self._known: tuple[int | None, int | None, int | None, int | None] = (
            limits.rpm,
            limits.input_tpm,
            limits.output_tpm,
            limits.tpm,
        )
        self._no_refill: list[tuple[float, float]] = [(0.0, 0.0)] * 4
        """For each bucket (requests, input, output, all tokens): from when until when it gets no refill, after a
        call taken from it full."""
        self.listeners: list[Observer] = []
        """Told when the scope's pause starts and ends."""
        self._gate = asyncio.Lock()
        self._released = asyncio.Event()

    def offer(self, store: QuotaStore) -> None:
        """Another actor's store (its ledger's), to keep the state through once the stores before it are withdrawn."""
        if not self._offered:
            self.store = store  # the quota was this process's alone: a ledger's is shared with other processes too
        if all(offered is not store for offered in self._offered):
            self._offered.append(store)

    def withdraw(self, store: QuotaStore) -> None:
        """An actor closing: its store is not used again. The state goes on in the next actor's store (its ledger
        holds the same scope if it is the same ledger; another ledger's is what other processes of it count), or in
        this process's alone when no actor's store is left."""
        self._offered = [offered for offered in self._offered if offered is not store]
        if self.store is store:
            self.store = self._offered[0] if self._offered else LocalQuotaStore()

    async def admit(self, *, input_tokens: int, output_tokens: int) -> Permit:
        """Wait (in arrival order) until the call fits, then take its share."""
        started = self.clock.now()
        async with self._gate:
            while True:
                now = self.clock.now()
                if now < self.paused_until:
                    await self.clock.sleep(max(self.paused_until - now, _LEAST_WAIT))
                    continue
                if self.in_flight >= self.cap:
                    self._released.clear()
                    await self._released.wait()
                    continue
                wait = await self.store.update(
                    self.name,
                    functools.partial(self._take, now=now, input_tokens=input_tokens, output_tokens=output_tokens),
                )
                if wait > 0:
                    # At least a millisecond: a shorter wait can be lost in the clock's float (1.8e9 s has steps
                    # of about 0.2 us), and the bucket would never fill.
                    await self.clock.sleep(max(wait, _LEAST_WAIT))
                    continue
                if not self._pause_told:
                    self._pause_told = True
                    self._tell(PauseEnded(self.name))
                self.in_flight += 1
                return Permit(input_tokens, output_tokens, self.clock.now() - started)

    def _take(self, state: ScopeState, *, now: float, input_tokens: int, output_tokens: int) -> float:
        """In the store's update: settle what is unsent, refill, and take the call's share if it fits (0.0), else
        the seconds to wait."""
        limits = self.limits
        self._refill(state, now)
        self._unsent.apply(state, limits, now)
        needs = (
            (state.requests, state.requests.limit(limits.rpm), 1),
            (state.input, state.input.limit(limits.input_tpm), input_tokens),
            (state.output, state.output.limit(limits.output_tpm), output_tokens),
            (state.tokens, state.tokens.limit(limits.tpm), input_tokens + output_tokens),
        )
        self._known = (needs[0][1], needs[1][1], needs[2][1], needs[3][1])
        if state.pauses > self._pauses_seen:
            self._pauses_seen = state.pauses
            if state.paused_until > self.paused_until:
                self._paused(state.paused_until)  # another process saw a 429
        if now < state.paused_until:
            return state.paused_until - now
        wait = max(bucket.wait_for(limit, amount) for bucket, limit, amount in needs)
        if wait == 0:
            for i, (bucket, limit, amount) in enumerate(needs):
                if bucket.full(limit) and self._no_refill[i][1] <= now:
                    self._no_refill[i] = (now, now + _ON_THE_WAY)
                bucket.take(limit, amount)
        return wait

    def _refill(self, state: ScopeState, now: float) -> None:
        """Each bucket refilled to `now` at its limit in force, but for the time a call taken from it full was on
        its way to the API (`_ON_THE_WAY`); before what the headers told is applied, which is as of now."""
        limits = self.limits
        elapsed = state.elapsed(now)
        since = now - elapsed
        buckets = (
            (state.requests, limits.rpm),
            (state.input, limits.input_tpm),
            (state.output, limits.output_tpm),
            (state.tokens, limits.tpm),
        )
        for (bucket, configured), (start, end) in zip(buckets, self._no_refill, strict=True):
            bucket.refill(bucket.limit(configured), elapsed - max(0.0, min(now, end) - max(since, start)))

    def release(self, permit: Permit, *, input_tokens: int | None = None, output_tokens: int | None = None) -> None:
        """The call ended: its slot back, and its tokens settled to what it used (None: it used what it took),
        told to the store with the next admission."""
        self.in_flight -= 1
        if input_tokens is not None:
            self._unsent.input += permit.input_tokens - input_tokens
        if output_tokens is not None:
            self._unsent.output += permit.output_tokens - output_tokens
        self._released.set()

    def succeeded(self) -> None:
        """One more call went through: the concurrency cap grows a step, up to the maximum."""
        self.cap = min(self.limits.max_concurrency, self.cap + self.limits.ramp_step)
        if self.cap >= self.limits.max_concurrency:
            self._slow_start = False

    async def pause(self, seconds: float) -> float:
        """A 429: no call is admitted for `seconds` (an earlier, longer pause stands), in this process and every
        other sharing the store; then a slow start."""
        until = self.clock.now() + seconds
        self._paused(until)
        if until >= self._unsent.pause_until:
            self._unsent.pause_until = until
        self._slow_down()
        await self.store.update(self.name, self._told)
        return self.paused_until

    def _told(self, state: ScopeState) -> None:
        now = self.clock.now()
        self._refill(state, now)
        self._unsent.apply(state, self.limits, now)
        self._pauses_seen = state.pauses
        if state.paused_until > self.paused_until:
            self._paused(state.paused_until)

    def _paused(self, until: float) -> None:
        if until > self.paused_until:
            self.paused_until = until
            self.pauses += 1
            self._pause_told = False
            self._slow_down()
            self._tell(PauseStarted(self.name, until))

    def _slow_down(self) -> None:
        self.cap = min(self.limits.ramp_start, self.limits.max_concurrency)
        self._slow_start = self.cap < self.limits.max_concurrency

    def _tell(self, event: LiveEvent) -> None:
        for listener in self.listeners:
            listener(event)

    def learn(self, report: QuotaReport) -> None:
        """What the API's headers said: limits and what remains (lowering ours when others use the key too), told
        to the store with the next admission. An answer's headers that tell a budget end the startup ramp: the
        buckets now hold admission to the known budget, so the cap opens to `max_concurrency` (not during the slow
        start after a pause, nor on a 429's headers)."""
        self._unsent.report = report
        self._unsent.report_at = self.clock.now()
        opens = not report.empty and report.retry_after is None and not self._slow_start
        if opens and self.cap < self.limits.max_concurrency:
            self.cap = self.limits.max_concurrency
            self._released.set()  # the calls waiting for a slot may go now
        known = list(self._known)
        for i, (configured, budget) in enumerate(
            (
                (self.limits.rpm, report.requests),
                (self.limits.input_tpm, report.input_tokens),
                (self.limits.output_tpm, report.output_tokens),
                (self.limits.tpm, report.tokens),
            )
        ):
            if budget is not None:
                known[i] = budget.limit if configured is None else min(configured, budget.limit)
        self._known = (known[0], known[1], known[2], known[3])

    @property
    def known_limits(self) -> tuple[int | None, int | None, int | None, int | None]:
        """Requests, input, output and all tokens per minute in force (configured or learned)."""
        return self._known
