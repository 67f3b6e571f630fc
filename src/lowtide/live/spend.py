"""`SpendCap`: a hard limit on what an actor's live calls may cost in a process. A call starts only if what was
spent, plus the worst case of the calls in flight, plus its own worst case, fits under the limit; when it does not
fit but calls are in flight (which usually cost less than their worst case), it waits for them to settle and looks
again; when nothing is in flight and it still does not fit, it is refused (`BudgetExceededError`), unsent.

`OwnedSpend`: what a live call's owner is charged beyond this process (the ledger's spend by owner, `calls.live_spend`):
its worst case reserved before it is sent, settled to what it cost once answered, and to its worst case for each
attempt the provider may have billed without an answer reaching us (`may_be_billed`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from decimal import Decimal
from typing import Protocol

from lowtide.errors import (
    ActorError,
    APIConnectionError,
    APIError,
    APIUnreachableError,
    BudgetExceededError,
    DeadlineExceededError,
    StreamInterruptedError,
)
from lowtide.types import ActorRequest, ActorResponse

__all__ = ["OwnedSpend", "Settle", "SpendCap", "may_be_billed"]

Settle = Callable[[ActorResponse[object] | None, int], Awaitable[None]]
"""Settles an admitted live call: with its answer (its cost spent), or None (it failed unanswered), and how many of
its attempts failed in doubt (`may_be_billed`), each counted at the call's worst case; unanswered and none in doubt,
its reservation is let go."""

_GATEWAY_TIMEOUTS = frozenset({408, 504})
"""Statuses that say a server between gave up waiting, not that the API refused the request: it may still run."""


def may_be_billed(error: BaseException) -> bool:
    """Whether an attempt of a live call that failed with `error`, after it was handed to the provider, may have been
    billed though no answer reached us: a timeout, a connection dropped once sent, a stream cut short, the call past
    its deadline or cancelled mid-flight, or an answer that could not be read. An error the API answered with (a
    status it sent: 400, 429, 500, 529, ...) was not billed, nor a connection never made, nor a refusal made before
    anything was sent (lowtide's or the provider's own checks)."""
    if isinstance(error, APIUnreachableError):
        return False
    if isinstance(error, APIConnectionError | StreamInterruptedError | DeadlineExceededError):
        return True
    if isinstance(error, APIError):
        return error.status_code in _GATEWAY_TIMEOUTS
    return not isinstance(error, ActorError)  # cancelled mid-flight, or an answer that failed to be read


class OwnedSpend(Protocol):
    """Who a live call's spend belongs to, kept where every process sees it."""

    async def admit(self, request: ActorRequest) -> Settle | None:
        """Reserve `request`'s worst case against its owner's caps before it is sent (refused, raising, when it would
        cross one); None when the call has no owner to charge."""
        ...


class SpendCap:
    def __init__(self, limit_usd: Decimal, scope: str) -> None:
        self.limit = limit_usd
        self.scope = scope
        self.spent = Decimal(0)
        self.reserved = Decimal(0)
        self._settled = asyncio.Condition()

    async def reserve(self, worst_case: Decimal) -> None:
        """Hold `worst_case` for a call about to start, waiting for calls in flight if it does not fit yet."""
        async with self._settled:
            while self.spent + self.reserved + worst_case > self.limit:
                if self.reserved == 0:
                    raise BudgetExceededError(
                        scope=self.scope, limit_usd=self.limit, spent_usd=self.spent, estimate_usd=worst_case
                    )
                await self._settled.wait()
            self.reserved += worst_case

    async def settle(self, worst_case: Decimal, cost: Decimal) -> None:
        """A call ended having cost `cost` (0 when it failed unanswered): its worst case is released."""
        async with self._settled:
            self.reserved -= worst_case
            self.spent += cost
            self._settled.notify_all()
