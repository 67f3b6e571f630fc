"""What a rebuild finds at the providers (`lowtide ledger rebuild`): with no identity, the identities the custom ids
of each account's batches carry (`survey`), for the user to choose the lost ledger's; with one, every batch of that
ledger the APIs still hold, read whole (`look`), waiting for the batches whose requests cannot be read until they end
when asked to (`wait`), and the rows that record them (`rows.rebuilt_rows`).

A batch still running whose requests the API does not show (Anthropic's, whose requests only its results name; a
Gemini job; a Mistral job sent inline) cannot be told to be the lost ledger's or not, nor which requests it holds: a
rerun that did not know them would send them again. So a rebuild records nothing while such a batch runs
(`Plan.unseen`), unless it waits for them to end (`--wait`) and reads their results.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from lowtide.batching.backend import Phase, RemoteBatch
from lowtide.core.clock import Clock
from lowtide.rebuild.found import FoundBatch, Owner, Source
from lowtide.rebuild.reading import Reader
from lowtide.rebuild.rows import Rebuilt, rebuilt_rows

__all__ = ["Counted", "Plan", "Survey", "look", "survey"]

log = logging.getLogger(__name__)


@dataclass
class Counted:
    """Batches of one kind (an identity's, the hashed ones, ...): how many, their requests, the newest's time."""

    batches: int = 0
    requests: int = 0
    newest: float | None = None

    def add(self, batch: RemoteBatch, shown: int = 0) -> None:
        """Count `batch`, with the requests its counts say or, when more, the `shown` its input or results were read
        to hold: a batch still validating counts none yet (OpenAI's `request_counts` are 0 until it is validated)."""
        self.batches += 1
        self.requests += max(batch.counts.total, shown)
        self.newest = batch.created_at if self.newest is None else max(self.newest, batch.created_at)


@dataclass
class Survey:
    """What the custom ids of one account's batches say of their ledgers."""

    source: Source
    identities: dict[str, Counted] = field(default_factory=dict[str, Counted])
    others: dict[Owner, Counted] = field(default_factory=dict[Owner, Counted])
    """The batches whose ledger cannot be read (hashed ids, still running unseen, gone), by why; not lowtide's
    batches (`Owner.FOREIGN`) are left out."""


async def survey(sources: Sequence[Source]) -> list[Survey]:
    """The identities found in the custom ids of each account's batches, with their counts."""
    found: list[Survey] = []
    for source in sources:
        seen = Survey(source)
        reader = Reader(source)
        async for batch in reader.batches():
            owner, read = await reader.owner(batch)
            shown = len(read.custom_ids()) if read is not None else 0
            if isinstance(owner, Owner):
                if owner is not Owner.FOREIGN:
                    seen.others.setdefault(owner, Counted()).add(batch, shown)
            else:
                seen.identities.setdefault(owner, Counted()).add(batch, shown)
        found.append(seen)
    return found


@dataclass
class Plan:
    """What a rebuild of the ledger of `identity` records, and what it cannot."""

    identity: str
    found: list[FoundBatch] = field(default_factory=list[FoundBatch])
    """The batches of that ledger the APIs still hold, read whole (and those whose ids are all hashed)."""
    unseen: list[tuple[Source, RemoteBatch]] = field(default_factory=list[tuple[Source, RemoteBatch]])
    """Batches still running whose requests cannot be read until they end: nothing is recorded while any is left."""
    gone: list[tuple[Source, RemoteBatch]] = field(default_factory=list[tuple[Source, RemoteBatch]])
    """Ended batches of which nothing can be read any more (past the API's retention): whose they were is unknown,
    and their requests, if they were the lost ledger's, are sent again by a rerun."""
    others: dict[str, Counted] = field(default_factory=dict[str, Counted])
    """The batches of other ledgers (other identities) on the same accounts, left alone."""
    rebuilt: Rebuilt = field(default_factory=Rebuilt)

    @property
    def hashed(self) -> list[FoundBatch]:
        return [batch for batch in self.found if batch.owner is Owner.HASHED]


async def look(
    sources: Sequence[Source],
    identity: str,
    *,
    clock: Clock,
    wait: bool = False,
    said: Callable[[str], None] | None = None,
) -> Plan:
    """Every batch of the ledger of `identity` the accounts of `sources` still hold, read whole, and the rows that
    record them. `wait`: the batches still running whose requests cannot be read yet are looked at every
    `poll_interval` (the least of their sources') until they end, then read; `said` hears what is waited for."""
    plan = Plan(identity)
    for source in sources:
        reader = Reader(source)
        async for batch in reader.batches():
            await _place(plan, reader, batch)
    if wait and plan.unseen:
        await _wait(plan, clock, said)
    plan.rebuilt = rebuilt_rows(plan.found, now=clock.now())
    return plan


async def _place(plan: Plan, reader: Reader, batch: RemoteBatch) -> None:
    owner, read = await reader.owner(batch)
    if owner == plan.identity or owner is Owner.HASHED:
        plan.found.append(await reader.read(batch, owner, read))
    elif owner is Owner.UNSEEN:
        plan.unseen.append((reader.source, batch))
    elif owner is Owner.GONE:
        plan.gone.append((reader.source, batch))
    elif not isinstance(owner, Owner):
        plan.others.setdefault(owner, Counted()).add(batch)


async def _wait(plan: Plan, clock: Clock, said: Callable[[str], None] | None) -> None:
    """Look at the unseen batches until each has ended, then read it."""
    waiting, plan.unseen = plan.unseen, []
    interval = min(source.poll_interval for source, _ in waiting)
    while waiting:
        if said is not None:
            requests = sum(batch.counts.total for _, batch in waiting)
            said(f"Waiting for {len(waiting)} running batch(es) ({requests} request(s)) to end, looking every"
                 f" {interval:g} s: {', '.join(batch.id for _, batch in waiting)}.")  # fmt: skip
        await clock.sleep(interval)
        still: list[tuple[Source, RemoteBatch]] = []
        for source, batch in waiting:
            now = await source.backend.retrieve(batch.id)
            if now.phase is Phase.ENDED:
                await _place(plan, Reader(source), now)
            else:
                still.append((source, now))
        waiting = still
