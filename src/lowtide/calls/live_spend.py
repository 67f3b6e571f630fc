"""`LedgerOwnedSpend`: an actor's live calls charged to their owner in its ledger (`calls.owners`), as its batch-mode
calls are: a call of a known owner has its live worst case reserved against the owner's caps before it is sent
(refused unsent with `SpendCapExceededError` when it would cross one), is settled to what its answer cost plus its
worst case for each attempt the provider may have billed unanswered (a timeout, a dropped connection: `may_be_billed`),
and is let go when it fails unanswered with none such. A call of no owner opens no ledger and costs nothing more."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from decimal import Decimal

from lowtide.calls.owners import cap_refusal, owner_of
from lowtide.config.actors import ActorConfiguration
from lowtide.core.clock import Clock
from lowtide.core.hosts import host_id
from lowtide.ledger.inline import async_ledger
from lowtide.ledger.spend_records import SpendEntry
from lowtide.ledger.store import LedgerStore
from lowtide.live.spend import Settle
from lowtide.types import ActorRequest, ActorResponse

__all__ = ["LedgerOwnedSpend", "live_spend_key"]


def live_spend_key() -> str:
    """The key a live call's spend is kept under: new for every call (each is paid for), never a request's key."""
    return f"live:{uuid.uuid4().hex}"


class LedgerOwnedSpend:
    """The `OwnedSpend` of one actor's live calls, in the ledger `ledger` opens (off the event loop, the first time)."""

    def __init__(
        self,
        configuration: Callable[[], ActorConfiguration],
        ledger: Callable[[], LedgerStore],
        clock: Clock,
        worst_case: Callable[[ActorRequest, ActorConfiguration], Decimal],
    ) -> None:
        self._configuration = configuration
        self._ledger = ledger
        self._clock = clock
        self._worst_case = worst_case
        self._store: LedgerStore | None = None

    async def admit(self, request: ActorRequest) -> Settle | None:
        configuration = self._configuration()
        owner = owner_of(configuration)
        if not owner.known:
            return None
        worst = self._worst_case(request, configuration)  # an unpriced model refused: its owner's caps could not hold
        store = self._store
        if store is None:  # opened off the event loop (a new file migrated, a database connected to)
            store = self._store = await asyncio.to_thread(self._ledger)
        spending = async_ledger(store).spending
        key = live_spend_key()
        entry = SpendEntry(key, owner, configuration.name, request.model, worst, self._clock.now(), host_id())
        refused = cap_refusal(await spending.reserve(entry))
        if refused is not None:
            raise refused

        async def settle(answer: ActorResponse[object] | None, in_doubt: int) -> None:
            if answer is None and not in_doubt:  # the API refused it, or it was never sent: nothing was billed
                await spending.release(key, at=self._clock.now(), host=host_id())
                return
            # An answer its provider did not price counts at its worst case; so does each attempt that may have been
            # billed without its answer reaching us (the API may have answered it after the client gave up).
            answered = Decimal(0) if answer is None else answer.cost.total_usd if answer.cost is not None else worst
            await spending.settle(key, answered + worst * in_doubt)

        return settle
