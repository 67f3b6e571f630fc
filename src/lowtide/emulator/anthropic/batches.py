"""Message batches: their life cycle (derived from the clock at every read, never advanced by a timer, so a
`ManualClock` moves them exactly as far as a test advances time), their store, list pagination and JSON form."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from lowtide.emulator.anthropic.stored_file import StoredFile
from lowtide.emulator.core.cache import CacheUsage
from lowtide.emulator.core.errors import invalid_request
from lowtide.emulator.core.jsonutil import JsonObject
from lowtide.emulator.core.outcomes import Outcome

__all__ = [
    "BATCH_LIFETIME",
    "Batch",
    "BatchSnapshot",
    "BatchStore",
    "Page",
    "ProcessingStatus",
    "Settlement",
    "list_limit",
    "paginate",
    "render_batch",
    "rfc3339",
]

BATCH_LIFETIME = 24 * 3600.0
RESULT_KINDS = ("succeeded", "errored", "canceled", "expired")
_LIST_LIMIT_DEFAULT = 20
_LIST_LIMIT_MAX = 1000

ProcessingStatus = Literal["in_progress", "canceling", "ended"]


@dataclass
class Settlement:
    """How each request of an ended batch came out, fixed when the end is first observed.

    `kinds[i]` is request i's result type; `errors` and `cache` hold details only for the requests that need them,
    so a 100,000-request batch costs little more than its list of kinds.
    """

    kinds: list[str]
    errors: dict[int, Outcome] = field(default_factory=dict[int, Outcome])
    cache: dict[int, CacheUsage] = field(default_factory=dict[int, CacheUsage])
    files: dict[str, StoredFile] = field(default_factory=dict[str, StoredFile])
    """The uploaded files the batch's requests read when they ran, kept for its results whatever becomes of them."""
    prompt_tokens: dict[int, int] = field(default_factory=dict[int, int], compare=False)
    """Each succeeded request's input tokens, as settling counted them, so that its results need not count again.
    Not saved with the emulator's state: a settlement read back counts them as its results stream."""

    def counts(self) -> dict[str, int]:
        tally: dict[str, int] = dict.fromkeys(RESULT_KINDS, 0)
        for kind in self.kinds:
            tally[kind] += 1
        return tally


@dataclass(eq=False)
class Batch:
    """A stored batch. Requests finish evenly spread over `processing_seconds`, in request order, which decides
    which of them a cancel or the 24 hour expiry cuts off."""

    id: str
    created_at: float
    requests: list[tuple[str, JsonObject]]
    processing_seconds: float
    cancel_seconds: float
    cancel_initiated_at: float | None = None
    settlement: Settlement | None = None
    betas: frozenset[str] = frozenset()
    """The `anthropic-beta` values of the create call, which apply to every request of the batch."""

    @property
    def expires_at(self) -> float:
        return self.created_at + BATCH_LIFETIME

    @property
    def ended_at(self) -> float:
        if self.cancel_initiated_at is not None:
            return min(self.cancel_initiated_at + self.cancel_seconds, self.expires_at)
        return min(self.created_at + self.processing_seconds, self.expires_at)

    def status(self, now: float) -> ProcessingStatus:
        if now >= self.ended_at:
            return "ended"
        return "canceling" if self.cancel_initiated_at is not None else "in_progress"

    def processed_count(self) -> int:
        """How many requests, taken in order, finished before a cancel or the expiry stopped the batch."""
        total = len(self.requests)
        cutoff = min(self.cancel_initiated_at if self.cancel_initiated_at is not None else math.inf, self.expires_at)
        if self.processing_seconds <= 0:
            return total
        done = math.floor((cutoff - self.created_at) * total / self.processing_seconds)
        return max(0, min(total, done))


@dataclass(frozen=True)
class BatchSnapshot:
    """A batch as a test sees it through `Emulator.batch()`; `outcomes` maps custom_id to result type once ended."""

    id: str
    processing_status: ProcessingStatus
    created_at: float
    expires_at: float
    ended_at: float | None
    cancel_initiated_at: float | None
    requests: Sequence[tuple[str, JsonObject]]
    request_counts: Mapping[str, int]
    outcomes: Mapping[str, str] | None


class BatchStore:
    """Batches by id, in creation order."""

    def __init__(self) -> None:
        self._batches: dict[str, Batch] = {}

    def add(self, batch: Batch) -> None:
        self._batches[batch.id] = batch

    def get(self, batch_id: str) -> Batch | None:
        return self._batches.get(batch_id)

    def delete(self, batch_id: str) -> None:
        del self._batches[batch_id]

    def newest_first(self) -> list[str]:
        return list(reversed(self._batches))

    def oldest_first(self) -> list[Batch]:
        return list(self._batches.values())

    def restore(self, batches: list[Batch]) -> None:
        """Replace every batch with `batches`, given oldest first."""
        self._batches = {batch.id: batch for batch in batches}

    def clear(self) -> None:
        self._batches.clear()

    def __len__(self) -> int:
        return len(self._batches)


@dataclass(frozen=True)
class Page:
    ids: list[str]
    has_more: bool


def list_limit(raw: str | None) -> int:
    """A list's `limit` query parameter: 1 to 1000, 20 when absent."""
    if raw is None:
        return _LIST_LIMIT_DEFAULT
    try:
        limit = int(raw)
    except ValueError:
        raise invalid_request("limit: Input should be a valid integer") from None
    if not 1 <= limit <= _LIST_LIMIT_MAX:
        raise invalid_request(f"limit: Input should be between 1 and {_LIST_LIMIT_MAX}")
    return limit


def paginate(ids: Sequence[str], *, limit: int, after_id: str | None, before_id: str | None) -> Page:
    """One page of `ids` (newest first), as `anthropic.pagination.AsyncPage` walks them.

    `after_id` pages toward older items; `before_id` returns the `limit` items just newer than it, and the SDK
    keeps asking with the page's `first_id` until `has_more` is false. Unknown cursors are the caller's check.
    """
    if after_id is not None:
        start = ids.index(after_id) + 1
        return Page(list(ids[start : start + limit]), start + limit < len(ids))
    if before_id is not None:
        end = ids.index(before_id)
        start = max(0, end - limit)
        return Page(list(ids[start:end]), start > 0)
    return Page(list(ids[:limit]), limit < len(ids))


def rfc3339(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def render_batch(
    batch: Batch,
    *,
    status: ProcessingStatus,
    counts: Mapping[str, int] | None,
    base_url: str,
) -> JsonObject:
    """The `MessageBatch` object. Counts stay all `processing` until the end, as the API documents."""
    ended = status == "ended"
    tally = {"processing": 0, **counts} if ended and counts is not None else {"processing": len(batch.requests)}
    return {
        "id": batch.id,
        "type": "message_batch",
        "processing_status": status,
        "request_counts": {key: tally.get(key, 0) for key in ("processing", *RESULT_KINDS)},
        "ended_at": rfc3339(batch.ended_at) if ended else None,
        "created_at": rfc3339(batch.created_at),
        "expires_at": rfc3339(batch.expires_at),
        "archived_at": None,
        "cancel_initiated_at": rfc3339(batch.cancel_initiated_at) if batch.cancel_initiated_at is not None else None,
        # Absolute, from the incoming request's base URL: the SDK fetches results from exactly this address.
        "results_url": f"{base_url.rstrip('/')}/v1/messages/batches/{batch.id}/results" if ended else None,
    }
