"""An OpenAI-shaped batch as lowtide's neutral `RemoteBatch`: its statuses, request counts, end times, the intent id in
its metadata, and why one that failed whole failed. Read through the shape alone (`BatchShape`), so that the OpenAI
SDK's `Batch` and the batch models of the APIs that copy it (Groq's) are read alike, and no SDK is imported here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Generic, Protocol, TypeVar, cast

from lowtide.batching.backend import Counts, Phase, RemoteBatch
from lowtide.providers.sdk_backend import EndedAs, ended_counts

__all__ = ["ENDED_STATUSES", "INTENT_KEY", "BatchShape", "OpenAIShapedHooks", "failure_of", "remote_batch"]

INTENT_KEY = "lowtide_intent"
"""The batch metadata key that carries lowtide's intent id."""

_PHASES = {
    "validating": Phase.RUNNING,
    "in_progress": Phase.RUNNING,
    "finalizing": Phase.RUNNING,
    "cancelling": Phase.CANCELING,
    "completed": Phase.ENDED,
    "failed": Phase.ENDED,
    "expired": Phase.ENDED,
    "cancelled": Phase.ENDED,
}
_ENDED_AS: dict[str, EndedAs] = {"expired": "expired", "cancelled": "canceled"}
"""How a batch of an ended status ended; any other (`failed` validation, `completed` short of its total) failed."""
ENDED_STATUSES = frozenset(status for status, phase in _PHASES.items() if phase is Phase.ENDED)


class _RequestCounts(Protocol):
    @property
    def total(self) -> int: ...

    @property
    def completed(self) -> int: ...

    @property
    def failed(self) -> int: ...


class _ErrorData(Protocol):
    @property
    def code(self) -> str | None: ...

    @property
    def line(self) -> int | None: ...

    @property
    def message(self) -> str | None: ...


class _Errors(Protocol):
    @property
    def data(self) -> Sequence[_ErrorData] | None: ...


class BatchShape(Protocol):
    """What lowtide reads of a batch of OpenAI's shape (OpenAI's `Batch`, Groq's batch responses)."""

    @property
    def id(self) -> str: ...

    @property
    def status(self) -> str: ...

    @property
    def created_at(self) -> int: ...

    @property
    def completed_at(self) -> int | None: ...

    @property
    def failed_at(self) -> int | None: ...

    @property
    def expired_at(self) -> int | None: ...

    @property
    def cancelled_at(self) -> int | None: ...

    @property
    def cancelling_at(self) -> int | None: ...

    @property
    def metadata(self) -> object: ...

    @property
    def request_counts(self) -> _RequestCounts | None: ...

    @property
    def errors(self) -> _Errors | None: ...


def remote_batch(batch: BatchShape) -> RemoteBatch:
    """The neutral record of a batch. Requests an ended batch did not finish are counted as it ended them: expired,
    canceled, or (a batch that failed validation) errored."""
    counts = batch.request_counts
    total = counts.total if counts is not None else 0
    done = counts.completed if counts is not None else 0
    failed = counts.failed if counts is not None else 0
    rest = max(0, total - done - failed)
    phase = _PHASES.get(batch.status, Phase.RUNNING)
    if phase is not Phase.ENDED:
        neutral = Counts(processing=rest, succeeded=done, errored=failed)
    else:
        neutral = ended_counts(_ENDED_AS.get(batch.status, "failed"), succeeded=done, errored=failed, rest=rest)
    ended = batch.completed_at or batch.failed_at or batch.expired_at or batch.cancelled_at
    metadata: object = batch.metadata
    intent_id = cast("Mapping[str, object]", metadata).get(INTENT_KEY) if isinstance(metadata, Mapping) else None
    request_id = getattr(batch, "_request_id", None)
    return RemoteBatch(
        id=batch.id,
        phase=phase,
        status=batch.status,
        created_at=float(batch.created_at),
        counts=neutral,
        ended_at=float(ended) if ended is not None and phase is Phase.ENDED else None,
        cancel_requested=batch.cancelling_at is not None or batch.status in ("cancelling", "cancelled"),
        request_id=request_id if isinstance(request_id, str) else None,
        intent_id=intent_id if isinstance(intent_id, str) else None,
        handle=batch,
    )


def failure_of(batch: BatchShape | None) -> tuple[str, str]:
    """The code and message of a batch that failed as a whole (its input file did not pass validation)."""
    listed = batch.errors if batch is not None else None
    errors: Sequence[_ErrorData] = listed.data or () if listed is not None else ()
    if not errors:
        return "batch_failed", "The batch failed before any request ran."
    first = errors[0]
    where = f" (line {first.line})" if first.line is not None else ""
    return first.code or "batch_failed", f"{first.message or 'The batch failed.'}{where}"


S = TypeVar("S", bound=BatchShape)


class OpenAIShapedHooks(Generic[S]):
    """The hooks of `FileBatchBackend` that read a batch of OpenAI's shape (OpenAI's, Azure's, Groq's), for a backend
    to take before the base among its bases."""

    async def _remote(self, raw: S) -> RemoteBatch:
        return remote_batch(raw)

    def _has_ended(self, raw: S) -> bool:
        return raw.status in ENDED_STATUSES

    def _finished(self, batch: RemoteBatch, known: S) -> int:
        counts = known.request_counts
        return counts.completed + counts.failed if counts is not None else 0

    def _failure(self, known: S | None) -> tuple[str, str]:
        return failure_of(known)
