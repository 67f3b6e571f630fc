"""Calls whose requests another process gathered, handed to whatever the ledger says of them (`LeftOut`): watched
in the batch that took them, polled here if this engine works on it, or looked at again till the gathering process
writes its intent (or dies)."""

from __future__ import annotations

import asyncio

from lowtide.batching.backend import Settled
from lowtide.batching.engine.shared_state import REREAD_CHUNK
from lowtide.batching.engine.waiting import IN_BATCH, Waiting
from lowtide.batching.keys import owner_alive
from lowtide.ledger.records import KeyState
from lowtide.ledger.store import RequestState

__all__ = ["LeftOut"]

_FIRST_LOOK = 0.25
"""Seconds before calls another process gathered are looked at again (`LeftOut._attach_left_out`), doubled at each
look up to `watch_interval`: the intent that puts them in its batch follows its gathering."""


class LeftOut(Waiting):
    """The engine's waiting (`Waiting`), and the calls its batch's intent left out because another process's batch
    took their requests (`Submission` hands them here)."""

    async def _attach_left_out(self, calls: list[tuple[str, asyncio.Future[Settled]]]) -> None:
        """Hand calls whose requests another process's batch took (`_left_out`) to whatever the ledger says of them,
        read by state alone (a query per `REREAD_CHUNK` keys): those waiting on a batch the API has are polled here
        or watched (`_watched`) with no record read; those another live process gathered and has not put in its
        intent yet (pending, its: most of them, when its gathering and this engine's intent cross) are looked at
        again together until they are in its batch (as `_final` would look at each by itself), soon at first (its
        intent follows its gathering), then every `watch_interval`, by one of them per gathering process until it
        moves. When that one is in a batch, the calls that process gathered and that batch holds (`members_among`, no
        state read again) are watched in it from the results' cursor taken before their states were read; the rest,
        and the calls of a process whose look moved otherwise (it died), have their states read again. The others (a
        few) go through `_final_of`. A call whose caller gave up meanwhile is looked at no more (the gatherer's batch
        answers its request all the same, for whoever asks again)."""
        pause = min(_FIRST_LOOK, self.settings.watch_interval)
        while calls:
            _, since = await self.ledger.results_since("", None)  # before the states: what comes after the watch reads
            states: dict[str, KeyState] = {}
            keys = [key for key, _ in calls]
            for start in range(0, len(keys), REREAD_CHUNK):
                for found in await self.ledger.states_of(keys[start : start + REREAD_CHUNK]):
                    states[found.key] = found
            now = self._clock.now()
            by_batch: dict[str, list[tuple[str, asyncio.Future[Settled]]]] = {}
            gathered: list[tuple[str, asyncio.Future[Settled]]] = []
            for key, future in calls:
                found = states.get(key)
                if future.done():
                    continue
                if found is not None and found.state in IN_BATCH and found.batch_id is not None:
                    by_batch.setdefault(found.batch_id, []).append((key, future))
                elif found is not None and self._gathered_elsewhere(found, now):
                    gathered.append((key, future))
                else:
                    self._forward(self._final_of(key), future)
            await self._attach_in_batches(by_batch, since)
            calls = gathered
            while calls:
                await self._clock.sleep(pause)
                pause = min(pause * 2, self.settings.watch_interval)
                calls = [(key, future) for key, future in calls if not future.done()]  # given up: looked at no more
                # One call per gathering owner is looked at until it moves (its intent takes them all at once).
                owners = {key: states[key].owner or "" for key, _ in calls}
                into = await self._gatherers_moved({owner: key for key, owner in owners.items()}) if calls else None
                if into is not None:
                    calls = await self._attach_gathered(calls, owners, into, since)
                    break

    async def _attach_in_batches(
        self, by_batch: dict[str, list[tuple[str, asyncio.Future[Settled]]]], since: int
    ) -> None:
        """Calls found in batches (by batch): polled or reconciled here if this engine works on the batch now
        (`_taken_here`), else watched in it from the results' cursor `since`, taken before they were found there."""
        for batch_id, waiting in by_batch.items():
            if await self._taken_here(batch_id):
                for key, future in waiting:  # no await since the decision: its poller has settled none yet
                    self._wait_here(batch_id, key, future)
            else:
                for key, future in waiting:
                    if not future.done():
                        self._watched(key, batch_id, future, since)

    async def _attach_gathered(
        self, calls: list[tuple[str, asyncio.Future[Settled]]], owners: dict[str, str], into: dict[str, str], since: int
    ) -> list[tuple[str, asyncio.Future[Settled]]]:
        """Of `calls` (gathered by other processes: `owners`, key -> owner), those of an owner whose looked-at call is
        now in a batch (`into`, owner -> batch) that this batch holds, attached to it from the cursor `since` (taken
        before their states were read, while they were pending: the batch's every result comes after it); the others
        given back, to have their states read again."""
        by_batch: dict[str, list[tuple[str, asyncio.Future[Settled]]]] = {}
        again = [(key, future) for key, future in calls if owners[key] not in into]
        for owner, batch_id in into.items():
            mine = [(key, future) for key, future in calls if owners[key] == owner]
            keys, held = [key for key, _ in mine], set[str]()
            for start in range(0, len(keys), REREAD_CHUNK):
                held |= await self.ledger.members_among(batch_id, keys[start : start + REREAD_CHUNK])
            for key, future in mine:
                (by_batch.setdefault(batch_id, []) if key in held else again).append((key, future))
        await self._attach_in_batches(by_batch, since)
        return again

    async def _gatherers_moved(self, probes: dict[str, str]) -> dict[str, str] | None:
        """Whether any of `probes` (a key per owner that gathered calls of this engine's) is no longer pending in its
        live owner's hands: its intent was written (or it died), so the calls it gathered are looked at again. None if
        none moved; else owner -> the batch its probe is in now, of those whose probe is in one."""
        now = self._clock.now()
        found = {state.key: state for state in await self.ledger.states_of(list(probes.values()))}
        moved = [
            (owner, state)
            for owner, key in probes.items()
            if (state := found.get(key)) is None or state.owner != owner or not self._gathered_elsewhere(state, now)
        ]
        if not moved:
            return None
        return {
            owner: state.batch_id
            for owner, state in moved
            if state is not None and state.state in IN_BATCH and state.batch_id is not None
        }

    def _gathered_elsewhere(self, found: KeyState, now: float) -> bool:
        """Whether `found` is pending, owned by another live process (which gathered it for its next batch) and not
        queued or awaited here: what `_final` waits on by looking at the ledger again (`_watch`)."""
        return (
            found.state is RequestState.PENDING
            and found.owner not in (None, self.owner)
            and found.key not in self._futures
            and found.key not in self._queued_keys
            and owner_alive(found.owner, found.owner_until, now)
        )
