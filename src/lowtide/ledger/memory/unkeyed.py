"""A `MemoryLedger`'s rebuilt requests whose keys are not known (`records.UNKEYED`), taken over by the claims whose
custom ids are theirs (`LedgerStore.adopt_unkeyed`): the request, its memberships, its results and its trace moved to
the claim's key, under the ledger's lock."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from lowtide.ledger.memory.tables import MemoryTables
from lowtide.ledger.records import UNKEYED, NewRequest

__all__ = ["adopt_unkeyed", "unkeyed_keys"]


def unkeyed_keys(t: MemoryTables) -> set[str]:
    """The keys of the rebuilt requests whose own keys are not known yet."""
    return {key for key in t.requests if key.startswith(UNKEYED)}


def adopt_unkeyed(t: MemoryTables, unkeyed: set[str], requests: Sequence[NewRequest]) -> bool:
    """Each request of `requests` whose key the ledger does not know and whose custom id is that of one of the
    `unkeyed` (changed in place) takes it over; whether any is left."""
    for r in requests:
        held = UNKEYED + r.custom_id
        if held not in unkeyed or r.key in t.requests:
            continue
        unkeyed.discard(held)
        _rename(t, held, r.key)
    return bool(unkeyed)


def _rename(t: MemoryTables, old: str, new: str) -> None:
    request = t.requests.pop(old)
    request.key = new
    t.requests[new] = request
    batches = t.batches_of_key.pop(old, [])
    t.batches_of_key[new] = batches
    for batch_id in batches:
        members = t.members.get(batch_id, {})
        for custom_id, key in members.items():
            if key == old:
                members[custom_id] = new
        result = t.latest.pop((batch_id, old), None)
        if result is not None:
            t.latest[(batch_id, new)] = dataclasses.replace(result, key=new)
    if old in t.traces:
        t.traces[new] = t.traces.pop(old)
