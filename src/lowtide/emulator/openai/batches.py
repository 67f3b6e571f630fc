"""OpenAI batches: their life cycle, derived from the clock at every read (as the Anthropic side's), their store,
list pagination and the `Batch` object.

A batch spends the first tenth of its `processing_seconds` `validating`, the next eight tenths `in_progress`
(its requests finishing evenly spread, in file order), the last tenth `finalizing`, then is `completed`: so with
`processing_seconds=0` it is done at once, as an Anthropic batch is. An input file that fails validation makes it
`failed` when validation ends. A cancel makes it `cancelling` for `cancel_seconds`, then `cancelled`, keeping the
answers of the requests that finished before the cancel. A batch still processing 24 hours after its creation
`expired`: what finished is in its output file, the rest in its error file as `batch_expired`."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from lowtide.emulator.core.jsonutil import JsonObject
from lowtide.emulator.openai.errors import no_such
from lowtide.emulator.openai.ids import derived_alnum
from lowtide.emulator.openai.pages import list_limit

__all__ = [
    "BATCH_WINDOW",
    "BatchStatus",
    "OpenAIBatch",
    "OpenAIBatchStore",
    "RequestKind",
    "Settlement",
    "render_batch",
]

BATCH_WINDOW = 24 * 3600.0
_VALIDATING_SHARE = 0.1
_FINALIZING_SHARE = 0.1
_LIST_LIMIT_DEFAULT = 20
_LIST_LIMIT_MAX = 100

BatchStatus = Literal[
    "validating", "failed", "in_progress", "finalizing", "completed", "expired", "cancelling", "cancelled"
]
RequestKind = Literal["succeeded", "errored", "expired", "canceled", "unprocessed", "missing"]
"""How a request of an ended batch came out: answered (output file), failed with an HTTP error (error file),
expired or canceled (error file, `batch_expired` / `batch_cancelled`), never run because its batch was cancelled
(no file), or lost by a fault (no file, though counted as completed)."""


@dataclass
class Settlement:
    """Each request's kind, fixed when the batch's end is first observed; `errors` holds the HTTP status and error
    body of the `errored` ones."""

    kinds: list[RequestKind]
    errors: dict[int, tuple[int, JsonObject]] = field(default_factory=dict[int, tuple[int, JsonObject]])

    def counts(self) -> tuple[int, int]:
        """(completed, failed), as `request_counts` shows them."""
        completed = sum(kind in ("succeeded", "missing") for kind in self.kinds)
        failed = sum(kind in ("errored", "expired", "canceled") for kind in self.kinds)
        return completed, failed

    def has(self, *kinds: RequestKind) -> bool:
        return any(kind in kinds for kind in self.kinds)


@dataclass(eq=False)
class OpenAIBatch:
    id: str
    created_at: float
    input_file_id: str
    endpoint: str
    completion_window: str
    metadata: dict[str, str] | None
    requests: list[tuple[str, JsonObject]]
    model: str | None
    errors: list[JsonObject]
    processing_seconds: float
    cancel_seconds: float
    output_lifetime: float | None = None
    cancel_initiated_at: float | None = None
    settlement: Settlement | None = None
    deleted_files: set[str] = field(default_factory=set[str])
    expire_after: float | None = BATCH_WINDOW
    """Seconds after its creation at which a batch still processing expires; None: never (Azure's run on)."""

    @property
    def expires_at(self) -> float:
        """When the batch is due to end, as the API shows it (its 24-hour window)."""
        return self.created_at + BATCH_WINDOW

    @property
    def expiry(self) -> float:
        """When a batch still processing expires (never: infinity)."""
        return self.created_at + self.expire_after if self.expire_after is not None else math.inf

    @property
    def validated_at(self) -> float:
        return self.created_at + _VALIDATING_SHARE * self.processing_seconds

    @property
    def processed_at(self) -> float:
        """When the last request finishes (and finalizing starts)."""
        return self.created_at + (1 - _FINALIZING_SHARE) * self.processing_seconds

    def final_status(self) -> BatchStatus:
        if self.errors:
            return "failed"
        if self.cancel_initiated_at is not None:
            return "cancelled"
        return "expired" if self.processed_at > self.expiry else "completed"

    @property
    def ended_at(self) -> float:
        final = self.final_status()
        if final == "failed":
            return min(self.validated_at, self.expiry)
        if final == "cancelled":
            assert self.cancel_initiated_at is not None
            return self.cancel_initiated_at + self.cancel_seconds
        return self.expiry if final == "expired" else self.created_at + self.processing_seconds

    def status(self, now: float) -> BatchStatus:
        if now >= self.ended_at:
            return self.final_status()
        if self.cancel_initiated_at is not None:
            return "cancelling"
        if now < self.validated_at:
            return "validating"
        return "in_progress" if now < self.processed_at else "finalizing"

    def processed_count(self, now: float) -> int:
        """How many requests, taken in order, have finished by `now` (never past a cancel or the expiry)."""
        total = len(self.requests)
        cutoff = min(now, self.cancel_initiated_at if self.cancel_initiated_at is not None else math.inf)
        cutoff = min(cutoff, self.expiry)
        if self.processing_seconds <= 0:
            return total if cutoff >= self.created_at else 0
        window = self.processed_at - self.validated_at
        return max(0, min(total, math.floor((cutoff - self.validated_at) * total / window)))

    def finished_at(self, index: int) -> float:
        """When request `index` finished (if it did): its answer's creation time."""
        if self.processing_seconds <= 0:
            return self.created_at
        window = self.processed_at - self.validated_at
        return self.validated_at + (index + 1) * window / len(self.requests)

    def file_id(self, which: Literal["output", "error"]) -> str:
        return derived_alnum("file-", self.id, which)


class OpenAIBatchStore:
    """Batches by id, in creation order."""

    def __init__(self) -> None:
        self._batches: dict[str, OpenAIBatch] = {}

    def add(self, batch: OpenAIBatch) -> None:
        self._batches[batch.id] = batch

    def find(self, batch_id: str) -> OpenAIBatch:
        batch = self._batches.get(batch_id)
        if batch is None:
            raise no_such("Batch", batch_id)
        return batch

    def oldest_first(self) -> list[OpenAIBatch]:
        return list(self._batches.values())

    def restore(self, batches: Sequence[OpenAIBatch]) -> None:
        self._batches = {batch.id: batch for batch in batches}

    def clear(self) -> None:
        self._batches.clear()

    def __len__(self) -> int:
        return len(self._batches)

    def page(self, *, after: str | None, limit: str | None) -> tuple[list[OpenAIBatch], bool]:
        """One page of `GET /v1/batches`, newest first, and whether more follow."""
        size = _limit(limit)
        ids = list(reversed(self._batches))
        start = 0
        if after is not None:
            if after not in self._batches:
                raise no_such("Batch", after, "after")
            start = ids.index(after) + 1
        return [self._batches[batch_id] for batch_id in ids[start : start + size]], start + size < len(ids)


def render_batch(
    batch: OpenAIBatch,
    *,
    status: BatchStatus,
    now: float,
    counts: Callable[[], tuple[int, int]],
    files: tuple[str | None, str | None] = (None, None),
) -> JsonObject:
    """The `Batch` object as of `now`, shown as `status`; `counts` gives (completed, failed) so far, and `files` the
    output and error file ids, once the batch has ended."""
    validating = status in ("validating", "failed") or (
        batch.cancel_initiated_at is not None and batch.cancel_initiated_at < batch.validated_at
    )
    completed, failed = (0, 0) if validating else counts()
    started = not validating and now >= batch.validated_at
    return {
        "id": batch.id,
        "object": "batch",
        "endpoint": batch.endpoint,
        "model": batch.model if not validating else None,
        "errors": {"object": "list", "data": batch.errors} if status == "failed" else None,
        "input_file_id": batch.input_file_id,
        "completion_window": batch.completion_window,
        "status": status,
        "output_file_id": files[0],
        "error_file_id": files[1],
        "created_at": int(batch.created_at),
        "in_progress_at": int(batch.validated_at) if started else None,
        "expires_at": int(batch.expires_at),
        "finalizing_at": int(batch.processed_at) if status in ("finalizing", "completed") else None,
        "completed_at": int(batch.ended_at) if status == "completed" else None,
        "failed_at": int(batch.ended_at) if status == "failed" else None,
        "expired_at": int(batch.ended_at) if status == "expired" else None,
        "cancelling_at": int(batch.cancel_initiated_at) if batch.cancel_initiated_at is not None else None,
        "cancelled_at": int(batch.ended_at) if status == "cancelled" else None,
        "request_counts": {
            "total": 0 if validating else len(batch.requests),
            "completed": completed,
            "failed": failed,
        },
        "metadata": batch.metadata,
    }


def _limit(raw: str | None) -> int:
    return list_limit(raw, default=_LIST_LIMIT_DEFAULT, maximum=_LIST_LIMIT_MAX)
