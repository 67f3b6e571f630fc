"""Calls that come to wait on a batch's collection late: after it handed their outcome out (the line handled and its
outcome given to whoever waited then), or after it skipped their result (stored by a collection before, cut short).
A call reads its record, then waits on the batch's poller if this engine polls it (`Waiting._final`, a resumed run's
attach in `Lookups.outcomes`): between the two, the collection may have passed its key. `_settle` answers only the
futures there at that moment, so the collection answers the late ones from the ledger: those of skipped keys at each
chunk it stores, and every member's still waiting at its end (`_answer_late`), before its poller is let go, with no
await between the last look and the letting go; a call that comes after that sees no poller and reads the ledger."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence

from lowtide.batching.backend import Settled
from lowtide.batching.engine.shared_state import REREAD_CHUNK, EngineCore
from lowtide.batching.policy import stored_outcome

__all__ = ["LateWaiters"]

log = logging.getLogger("lowtide.batching.engine.batch_engine")


class LateWaiters(EngineCore):
    async def _stored_before(self, batch_id: str, attempts: Mapping[str, tuple[int, int]]) -> set[str]:
        """The keys of the requests now in `batch_id` whose final result from it the ledger holds already; the calls
        waiting here on any of them are handed what is stored (another process collected part of the batch, then
        stopped)."""
        done = await self.ledger.stored_finals(batch_id)
        if not done:
            return done
        done.intersection_update(attempts)
        # (a record whose result is not final after all is collected as any other: its line is read again)
        done -= await self._answer_stored([key for key in done if key in self._futures])
        return done

    async def _answer_stored(self, keys: Sequence[str]) -> set[str]:
        """The calls waiting on those of `keys` whose record is final, handed what is stored (a query per
        `REREAD_CHUNK` keys); the keys whose record is not final."""
        not_final: set[str] = set()
        for start in range(0, len(keys), REREAD_CHUNK):
            records = await self.ledger.requests_for(keys[start : start + REREAD_CHUNK])
            not_final.update(record.key for record in records if not record.state.final)
            self._settle([(record.key, stored_outcome(record)) for record in records if record.state.final])
        return not_final

    async def _answer_skipped(self, done: set[str], since: int) -> int:
        """The calls that came to wait on a key of `done` (its result stored before this collection, its line
        skipped) since the engine's registration count was `since`, handed what is stored; the count now. Nothing is
        looked at while no call came to wait (most chunks: a resumed run's calls wait before the collection starts)."""
        registered = self._registered
        if registered == since or not done:
            return registered
        futures = self._futures
        among = done if len(done) <= len(futures) else list(futures)
        late = [key for key in among if key in done and (future := futures.get(key)) is not None and not future.done()]
        await self._answer_stored(late)
        return registered

    async def _answer_late(self, members: Mapping[str, str]) -> None:
        """At the end of a batch's collection, before its poller is let go: every call still waiting on one of its
        members (`members`: custom id -> key) whose record is final is handed the stored outcome. A call may come to
        wait while the ledger is read: the members are looked at again until a look finds no call waiting that was
        not looked at; the caller lets the poller go at once (no await between). Keys queued again for another batch
        (not final) keep their calls, which that batch's collection answers; so do those still waiting on this batch
        after a collection that failed (their calls get its error). The states are read first (`states_of`, light),
        the records of the final ones alone, `REREAD_CHUNK` keys a query: a few keys, at the end of most
        collections."""
        futures = self._futures
        looked: dict[str, asyncio.Future[Settled]] = {}
        """Keys found not final, with the future that waited then (one that came since is looked at again)."""
        while True:
            late = [
                key
                for key in members.values()
                if (future := futures.get(key)) is not None and not future.done() and looked.get(key) is not future
            ]
            if not late:
                return
            for start in range(0, len(late), REREAD_CHUNK):
                chunk = late[start : start + REREAD_CHUNK]
                final = [state.key for state in await self.ledger.states_of(chunk) if state.state.final]
                if final:
                    await self._answer_stored(final)
                for key in chunk:
                    future = futures.get(key)
                    if future is not None and not future.done():
                        looked[key] = future

    async def _answer_late_or_reread(self, members: Mapping[str, str]) -> None:
        """`_answer_late`; should the ledger fail it, each call still waiting on a member reads its record again once
        the poller is let go (as a call that comes after it would), rather than wait on a future nothing settles."""
        try:
            await self._answer_late(members)
        except Exception as exc:
            log.warning("Could not read the ledger for the calls that came late to a collection: %s", exc)
            for key in members.values():
                future = self._futures.get(key)
                if future is not None and not future.done():
                    self._forward(self._final_of(key), future)
