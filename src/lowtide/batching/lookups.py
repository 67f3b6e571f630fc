"""Which keys the ledger knows, asked by many calls at once: the keys asked in one turn of the event loop are read
in one query, so that thousands of calls arriving together take one connection of a remote store, not one each. A
local store (a file, memory) is read at once, inline: the answer is there before the caller awaits it."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from lowtide.batching.core import REREAD_CHUNK, EngineCore
from lowtide.errors import classify
from lowtide.ledger.store import RequestRecord

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
