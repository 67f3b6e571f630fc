"""Which keys the ledger knows, asked by many calls at once: the keys asked in one turn of the event loop are read
in one query, so that thousands of calls arriving together take one connection of a remote store, not one each. A
local store (a file, memory) is read at once, inline: the answer is there before the caller awaits it."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from lowtide.batching.backend import Settled
from lowtide.batching.engine.shared_state import REREAD_CHUNK, EngineCore
from lowtide.batching.gc_tuning import MANY, freeze_survivors
from lowtide.errors import InternalError, classify
from lowtide.ledger.records import KeyState
from lowtide.ledger.store import RequestRecord, RequestState

__all__ = ["Lookups"]


class Lookups(EngineCore):
    def knows(self, key: str) -> asyncio.Future[bool]:
        """Whether the ledger has a request under `key` (read with every other key asked in this moment)."""
        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        local = self.ledger.inline
        if local is not None:
            try:
                answer.set_result(local.request(key) is not None)
            except Exception as exc:
                answer.set_exception(classify(exc, doing="reading the ledger"))
            return answer
        self._asked.setdefault(key, []).append(answer)
        if len(self._asked) % MANY == 0:
            freeze_survivors(MANY)  # thousands of calls arriving at once (a `gather`) wait here, then for a batch
        if self._reading is None:
            self._reading = self._spawn(self._read_asked(), waiters=[])
        return answer

    async def known(self, keys: Sequence[str]) -> dict[str, RequestRecord]:
        """The records of those of `keys` the ledger knows, read together (a query per `REREAD_CHUNK` keys): what
        one call asking for thousands of keys at once (`run_many`) reads, instead of a lookup each."""
        records: dict[str, RequestRecord] = {}
        try:
            for start in range(0, len(keys), REREAD_CHUNK):
                for record in await self.ledger.requests_for(keys[start : start + REREAD_CHUNK]):
                    records[record.key] = record
        except Exception as exc:  # a ledger that cannot be read: said as a call's own read would say it
            error = classify(exc, doing="reading the ledger")
            raise error from error.__cause__
        return records

    async def outcomes(self, keys: Sequence[str]) -> dict[str, asyncio.Future[Settled]]:
        """The final outcome of each key the ledger knows, waiting for its batch (or taking over dead work) if need
        be: a future per key, as `send_group` gives. Their states are read together (one query per `REREAD_CHUNK`
        keys), not one key at a time: a resumed bulk run attaches to tens of thousands of waiting items at once. A
        key waiting on a batch the API has needs nothing more to wait on it (its parameters nor its answer are read:
        `states_of`); the others (pending, submitting, final by now: a few) have their records read together."""
        states: dict[str, KeyState] = {}
        records: dict[str, RequestRecord] = {}
        futures: dict[str, asyncio.Future[Settled]] = {}
        try:
            for start in range(0, len(keys), REREAD_CHUNK):
                for found in await self.ledger.states_of(keys[start : start + REREAD_CHUNK]):
                    states[found.key] = found
            others = [key for key in keys if (found := states.get(key)) is not None and _batch_waited(found) is None]
            for start in range(0, len(others), REREAD_CHUNK):
                for record in await self.ledger.requests_for(others[start : start + REREAD_CHUNK]):
                    records[record.key] = record
        except Exception as exc:  # each call gets the error, as a read of its own would have given it
            error = classify(exc, doing="reading the ledger")
            for key in keys:
                futures[key] = failed = asyncio.get_running_loop().create_future()
                failed.set_exception(error)
            return futures
        waiting: dict[str, list[str]] = {}
        for key in keys:
            found = states.get(key)
            batch_id = _batch_waited(found) if found is not None else None
            record = records.get(key)
            if batch_id is not None:
                waiting.setdefault(batch_id, []).append(key)
            elif record is not None:
                futures[key] = asyncio.ensure_future(self._final(record))
            else:
                futures[key] = failed = asyncio.get_running_loop().create_future()
                failed.set_exception(InternalError(f"request {key} vanished from the ledger"))
        for batch_id, waiters in waiting.items():
            # Whether this engine polls the batch is decided once for all its waiters: polled here, each waits on the
            # future its collection settles (no task of its own: a resumed run attaches to tens of thousands), taken
            # as soon as the decision is known, while the batch is still polled here (its collection answers them
            # however late they come: `LateWaiters`); else (another live process polls it, or this one collected it
            # since the decision) each reads and watches its record.
            try:
                here = await self._poll_here(batch_id)
            except Exception as exc:  # each of its calls gets the error, as a wait of its own would have given it
                for key in waiters:
                    futures[key] = failed = asyncio.get_running_loop().create_future()
                    failed.set_exception(exc)
                continue
            if here and batch_id in self._pollers:  # its collection answers them, however late they come to wait
                for key in waiters:
                    futures[key] = self._future(key)
            else:
                for key in waiters:
                    futures[key] = asyncio.ensure_future(self._final_of(key))
        return futures

    async def _read_asked(self) -> None:
        await asyncio.sleep(0)  # every call of this moment asks first
        asked, self._asked, self._reading = self._asked, {}, None
        try:
            known = {record.key for record in await self.ledger.requests_for(list(asked))}
        except Exception as exc:  # a ledger that cannot be read: each call that asked says so
            error = classify(exc, doing="reading the ledger")
            for answers in asked.values():
                for answer in answers:
                    if not answer.done():
                        answer.set_exception(error)
            return
        for key, answers in asked.items():
            for answer in answers:
                if not answer.done():  # (a caller that gave up cancelled its own)
                    answer.set_result(key in known)


def _batch_waited(found: KeyState) -> str | None:
    """The batch a request waits on, when its state says it waits on one the API has."""
    return found.batch_id if found.state is RequestState.WAITING else None
