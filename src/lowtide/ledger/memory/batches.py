"""The batches of a `MemoryLedger` as the engine reads and leases them: a batch by its id (or the API's), batches by
state, unresolved intents, the steps of a create, members, and the lease (`claim_batch`) one process polls a batch
under. Every read and change under the ledger's one lock (`ledger.py` holds the writes of a batch's life)."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence

from lowtide.ledger.memory.tables import MemoryTables, batch_record
from lowtide.ledger.records import BatchClaim, BatchRecord, BatchState, KeyAnswer

__all__ = ["UNRESOLVED", "MemoryBatches"]

UNRESOLVED = (BatchState.INTENT, BatchState.UNKNOWN)
"""A create whose outcome is not known yet: an intent, or one a crash or an unclear answer left unknown."""


class MemoryBatches:
    """The batch reads and leases of `MemoryLedger`, over its tables and under its lock."""

    lock: threading.RLock
    tables: MemoryTables

    def claim_batch(self, claim: BatchClaim) -> bool:
        with self.lock:
            b = self.tables.batches.get(claim.batch_id)
            if b is None or not b.state.outstanding or not claim.free(b.owner, b.owner_until):
                return False
            b.owner, b.owner_until = claim.owner, claim.until
            return True

    def release_batch(self, batch_id: str, *, owner: str) -> None:
        with self.lock:
            b = self.tables.batches.get(batch_id)
            if b is not None and b.owner == owner:
                b.owner, b.owner_until = None, None

    def batch(self, batch_id: str) -> BatchRecord | None:
        t = self.tables
        with self.lock:
            b = t.batches.get(batch_id) or t.batches.get(t.by_provider_id.get(batch_id, ""))
            return batch_record(b) if b is not None else None

    def batches(self, *, states: Iterable[BatchState] | None = None) -> list[BatchRecord]:
        wanted = {BatchState(s) for s in states} if states is not None else None
        with self.lock:
            found = [batch_record(b) for b in self.tables.batches.values() if wanted is None or b.state in wanted]
        return sorted(found, key=lambda b: (b.intent_at, b.id))

    def batch_durations(
        self, provider: str, *, last: int, endpoint: str | None = None, requests: tuple[int, int] | None = None
    ) -> list[float]:
        ended = (BatchState.ENDED, BatchState.COLLECTED)
        fewest, most = requests if requests is not None else (0, None)
        with self.lock:
            found = [
                (b.ended_at, b.ended_at - b.submitted_at)
                for b in self.tables.batches.values()
                if b.provider == provider
                and b.state in ended
                and b.submitted_at is not None
                and b.ended_at is not None
                and (endpoint is None or b.endpoint == endpoint)
                and fewest <= b.request_count
                and (most is None or b.request_count <= most)
            ]
        return [max(0.0, seconds) for _, seconds in sorted(found, reverse=True)[:last]]

    def record_create_step(self, batch_id: str, step: str, value: str) -> None:
        with self.lock:
            b = self.tables.batches.get(batch_id)
            if b is not None:
                b.create_steps[step] = value

    def create_steps(self, batch_id: str) -> dict[str, str]:
        with self.lock:
            b = self.tables.batches.get(batch_id)
            return dict(b.create_steps) if b is not None else {}

    def unresolved(self, *, provider: str, endpoint: str) -> list[BatchRecord]:
        with self.lock:
            found = [
                batch_record(b)
                for b in self.tables.batches.values()
                if b.state in UNRESOLVED
                and b.provider_batch_id is None
                and b.provider == provider
                and b.endpoint == endpoint
            ]
        return sorted(found, key=lambda b: (b.intent_at, b.id))

    def batch_holding(self, custom_id: str, among: Sequence[str]) -> str | None:
        with self.lock:
            return next((b for b in among if custom_id in self.tables.members.get(b, {})), None)

    def members_and_attempts(self, batch_id: str) -> tuple[dict[str, str], dict[str, tuple[int, int]]]:
        with self.lock:
            return self.tables.members_and_attempts(batch_id)

    def stored_finals(self, batch_id: str) -> set[str]:
        with self.lock:
            return self.tables.stored_finals(batch_id)

    def results_since(self, batch_id: str, after: int | None) -> tuple[list[str], int]:
        with self.lock:
            return self.tables.results_since(batch_id, after)

    def members_among(self, batch_id: str, keys: Sequence[str]) -> set[str]:
        with self.lock:
            requests = self.tables.requests
            return {key for key in keys if (r := requests.get(key)) is not None and r.batch_id == batch_id}

    def answers_of(self, batch_id: str, keys: Sequence[str]) -> list[KeyAnswer]:
        with self.lock:
            return self.tables.answers_of(batch_id, keys)
