"""What of a bulk run's next batch may be sent: the part that fits the run's cost limit (`RunBudget`) and its
owner's team and project caps in the ledger (`calls.owners`), shared by every process and host. A group that does
not fit waits for the batches out to settle at their real cost; then what fits is reserved and sent, and only when
not one request fits, with nothing out, is the rest not run."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from decimal import Decimal

from lowtide.batching.engine.batch_engine import BatchEngine, GroupCall
from lowtide.bulk.progress.tally import BatchTally
from lowtide.bulk.running.budget import RunBudget
from lowtide.calls.owners import cap_refusal, owner_of
from lowtide.config.actors import ActorConfiguration
from lowtide.core.clock import Clock
from lowtide.core.hosts import host_id
from lowtide.cost.budget import within_limits
from lowtide.ledger.spend_records import Admission, SpendEntry

__all__ = ["Admitting"]


class Admitting:
    """The run's limit and its owner's caps, judged for each group before it is sent."""

    def __init__(
        self,
        configuration: ActorConfiguration,
        engine: BatchEngine,
        budget: RunBudget,
        tally: BatchTally,
        *,
        clock: Clock,
        changed: Callable[[], Awaitable[None]],
        stopping: Callable[[], bool],
    ) -> None:
        self._actor = configuration.name
        self._owner = owner_of(configuration)  # (the moment the run is made: inside `spend_owner`, its owner)
        self._engine = engine
        self._budget = budget
        self._tally = tally
        self._clock = clock
        self._changed = changed
        self._stopping = stopping
        self._refused: Admission | None = None

    async def fitting(self, calls: Sequence[GroupCall]) -> int:
        """How many of `calls`, in order, may be sent now: each reserved against the owner's caps when it has one.
        Waits, while batches are out, for what they really cost to make room."""
        while True:
            worst_cases = [call.worst_case_usd for call in calls]
            fits = self._budget.fitting(worst_cases)
            if fits == len(calls) or self._tally.out == 0 or self._stopping():
                admitted = await self._admit(calls[:fits])
                if admitted or self._tally.out == 0 or self._stopping():
                    return admitted
            await self._changed()

    def refusal(self, calls: Sequence[GroupCall]) -> str:
        """Why `calls` are not sent: the cap that refused them, or the run's cost limit."""
        error = cap_refusal(self._refused) if self._refused is not None else None
        if error is not None:
            return str(error)
        return self._budget.refusal(calls[0].worst_case_usd if calls else None)

    async def unsent(self, calls: Sequence[GroupCall]) -> None:
        """`calls` reserved but never recorded (their send failed before their claims were written, all in one
        transaction): their reservations let go, since nothing of them can be billed."""
        if self._owner.known and calls and not await self._engine.knows(calls[0].key):
            at = self._clock.now()
            await self._engine.ledger.spending.release_all([call.key for call in calls], at=at, host=host_id())

    async def _admit(self, calls: Sequence[GroupCall]) -> int:
        """How many of `calls`, in order, the owner's caps admit now, reserved (all: no owner)."""
        if not self._owner.known or not calls:
            return len(calls)
        entries = [self._entry(call) for call in calls]
        while entries:
            admission = await self._engine.ledger.spending.reserve_all(entries)
            if admission.admitted:
                return len(entries)
            self._refused = admission
            room = min(standing.left_usd for standing in admission.standings)
            fit, total = 0, Decimal(0)
            for entry in entries[:-1]:  # fewer than were refused: each try reserves less, so it ends
                total += entry.worst_case_usd
                if total > room:
                    break
                fit += 1
            entries = entries[:fit]
        return 0

    def _entry(self, call: GroupCall) -> SpendEntry:
        """A call's entry: its worst case is priced whenever its run has an owner (`RunRequests.budgeted`)."""
        if call.model is not None:
            model = call.model
        else:
            assert isinstance(call.params, dict), "a stored body travels with its model"
            model = self._engine.backend.codec.model_of(call.params)
        worst = within_limits(call.worst_case_usd, model, [])  # unpriced: its owner's caps could not be kept
        return SpendEntry(call.key, self._owner, self._actor, model, worst, self._clock.now(), host_id())
