"""Gemini batch jobs: their life cycle, derived from the emulator's clock at every read (as the other emulations'
batches), their store, list pages and the long-running `Operation` the API answers with.

A job is `BATCH_STATE_PENDING` for the first tenth of its `processing_seconds`, then `BATCH_STATE_RUNNING` (its
requests finishing evenly spread, in order, `batchStats` counting them), then `BATCH_STATE_SUCCEEDED`: so with
`processing_seconds=0` it is done at once. A job whose input could not be read (a file line that is not a request)
ends `BATCH_STATE_FAILED` when its pending time ends, with the operation's `error`. A cancel makes it
`BATCH_STATE_CANCELLED` `cancel_seconds` later (still running meanwhile). A job still pending or running 48 hours
after its creation is `BATCH_STATE_EXPIRED`. Jobs that did not succeed have no output; a succeeded one holds every
row's answer or error (a failed row does not fail the job)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from lowtide.emulator.core.jsonutil import JsonObject
from lowtide.emulator.gemini.errors import GeminiError, invalid_argument, not_found
from lowtide.emulator.gemini.names import timestamp
from lowtide.emulator.gemini.pages import token_page
from lowtide.emulator.gemini.wire import RpcStatus

__all__ = ["BATCH_WINDOW", "BatchRequest", "BatchState", "GeminiBatch", "GeminiBatchStore", "Row", "render_batch"]

BATCH_WINDOW = 48 * 3600.0
_PENDING_SHARE = 0.1
_LIST_DEFAULT = 50
_LIST_MAX = 1000
_BATCH_TYPE = "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch"
_OUTPUT_TYPE = "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput"

BatchState = Literal[
    "BATCH_STATE_PENDING",
    "BATCH_STATE_RUNNING",
    "BATCH_STATE_SUCCEEDED",
    "BATCH_STATE_FAILED",
    "BATCH_STATE_CANCELLED",
    "BATCH_STATE_EXPIRED",
]
_ENDED: tuple[BatchState, ...] = (
    "BATCH_STATE_SUCCEEDED",
    "BATCH_STATE_FAILED",
    "BATCH_STATE_CANCELLED",
    "BATCH_STATE_EXPIRED",
)


@dataclass(frozen=True)
class BatchRequest:
    """One request of a job: its key (an inline request's `metadata.key`, a file line's `key`), the inline
    request's `metadata` as sent (echoed with its answer), and the `GenerateContentRequest` body."""

    key: str | None
    metadata: JsonObject | None
    body: JsonObject


@dataclass(frozen=True)
class Row:
    """How one request came out: answered (`response`), failed (`error`), or lost by a fault (neither)."""

    response: JsonObject | None = None
    error: RpcStatus | None = None


@dataclass(eq=False)
class GeminiBatch:
    id: str
    model: str
    display_name: str | None
    created_at: float
    requests: list[BatchRequest]
    input_file: str | None
    processing_seconds: float
    cancel_seconds: float
    failure: RpcStatus | None = None
    priority: int = 0
    cancel_at: float | None = None
    result_deleted: bool = False
    rows: list[Row] | None = field(default=None, repr=False)
    webhook_uris: tuple[str, ...] = ()
    """Where the job sends its end besides the account's endpoints (`webhook_config.uris`)."""
    user_metadata: JsonObject | None = None
    """What its webhook events echo (`webhook_config.user_metadata`)."""
    webhooks_sent: bool = False
    """Whether its end's webhooks were sent (each answered 2xx, or given up): a restarted emulator sends them if not."""

    @property
    def name(self) -> str:
        return f"batches/{self.id}"

    @property
    def started_at(self) -> float:
        return self.created_at + _PENDING_SHARE * self.processing_seconds

    @property
    def processed_at(self) -> float:
        return self.created_at + self.processing_seconds

    @property
    def expires_at(self) -> float:
        return self.created_at + BATCH_WINDOW

    def final_state(self) -> BatchState:
        if self.failure is not None:
            return "BATCH_STATE_FAILED"
        if self.cancel_at is not None:
            return "BATCH_STATE_CANCELLED"
        return "BATCH_STATE_EXPIRED" if self.processed_at > self.expires_at else "BATCH_STATE_SUCCEEDED"

    @property
    def ended_at(self) -> float:
        final = self.final_state()
        if final == "BATCH_STATE_FAILED":
            return min(self.started_at, self.expires_at)
        if final == "BATCH_STATE_CANCELLED":
            assert self.cancel_at is not None
            return min(self.cancel_at + self.cancel_seconds, self.expires_at)
        return self.expires_at if final == "BATCH_STATE_EXPIRED" else self.processed_at

    def state(self, now: float) -> BatchState:
        if now >= self.ended_at:
            return self.final_state()
        return "BATCH_STATE_PENDING" if now < self.started_at else "BATCH_STATE_RUNNING"

    def processed_count(self, now: float) -> int:
        """How many requests, in order, have finished by `now` (none past a cancel or the expiry)."""
        if self.failure is not None:
            return 0
        total = len(self.requests)
        cutoff = min(now, self.cancel_at if self.cancel_at is not None else math.inf, self.expires_at)
        if self.processing_seconds <= 0:
            return total if cutoff >= self.created_at else 0
        window = self.processed_at - self.started_at
        return max(0, min(total, math.floor((cutoff - self.started_at) * total / window)))


class GeminiBatchStore:
    """Jobs by id, in creation order."""

    def __init__(self) -> None:
        self._batches: dict[str, GeminiBatch] = {}

    def add(self, batch: GeminiBatch) -> None:
        self._batches[batch.id] = batch

    def find(self, batch_id: str) -> GeminiBatch:
        batch = self._batches.get(batch_id)
        if batch is None:
            raise not_found(f"Batch batches/{batch_id} not found.")
        return batch

    def delete(self, batch_id: str) -> None:
        self.find(batch_id)
        del self._batches[batch_id]

    def oldest_first(self) -> list[GeminiBatch]:
        return list(self._batches.values())

    def clear(self) -> None:
        self._batches.clear()

    def __len__(self) -> int:
        return len(self._batches)

    def page(self, page_size: str | None, page_token: str | None) -> tuple[list[GeminiBatch], str | None]:
        """One page of `GET /{version}/batches`, newest first, and the next page's token (the last job shown)."""
        size = _page_size(page_size)
        return token_page(list(reversed(self._batches.values())), lambda item: item.id, size, page_token)


def _page_size(raw: str | None) -> int:
    if raw is None or raw == "":
        return _LIST_DEFAULT
    if not raw.lstrip("-").isdigit():
        raise GeminiError(400, f"Invalid value at 'page_size' (TYPE_INT32), \"{raw[:40]}\"")
    size = int(raw)
    if size < 0:
        raise invalid_argument("page_size must not be negative.")
    return min(size or _LIST_DEFAULT, _LIST_MAX)


def _count(value: int) -> str:
    """An int64 as the API's JSON writes it: a string."""
    return str(value)


def render_batch(batch: GeminiBatch, now: float, *, rows: list[Row] | None, output: JsonObject | None) -> JsonObject:
    """The job as the API answers it, as of `now`: an `Operation` whose `metadata` is the `GenerateContentBatch`.
    `rows` are the outcomes of the requests that finished (for the counts), `output` the succeeded job's output."""
    state = batch.state(now)
    ended = state in _ENDED
    done = batch.processed_count(min(now, batch.ended_at))
    finished = (rows or [])[:done]
    failed = sum(row.error is not None for row in finished)
    stats: JsonObject = {
        "requestCount": _count(len(batch.requests)),
        "successfulRequestCount": _count(len(finished) - failed),
        "failedRequestCount": _count(failed),
        "pendingRequestCount": _count(0 if ended else len(batch.requests) - len(finished)),
    }
    updated = batch.ended_at if ended else (batch.started_at if state == "BATCH_STATE_RUNNING" else batch.created_at)
    metadata: JsonObject = {"@type": _BATCH_TYPE, "model": f"models/{batch.model}"}
    if batch.display_name is not None:
        metadata["displayName"] = batch.display_name
    if batch.input_file is not None:
        metadata["inputConfig"] = {"fileName": batch.input_file}
    if output is not None and state == "BATCH_STATE_SUCCEEDED":
        metadata["output"] = output
    metadata["createTime"] = timestamp(batch.created_at)
    if ended:
        metadata["endTime"] = timestamp(batch.ended_at)
    metadata["updateTime"] = timestamp(max(updated, batch.created_at))
    metadata["batchStats"] = stats
    metadata["state"] = state
    metadata["name"] = batch.name
    if batch.priority:
        metadata["priority"] = str(batch.priority)
    operation: JsonObject = {"name": batch.name, "metadata": metadata}
    if ended:
        operation["done"] = True
    if state == "BATCH_STATE_FAILED":
        assert batch.failure is not None
        operation["error"] = dict(batch.failure)
    elif state == "BATCH_STATE_SUCCEEDED" and output is not None:
        operation["response"] = {"@type": _OUTPUT_TYPE, **output}
    return operation
