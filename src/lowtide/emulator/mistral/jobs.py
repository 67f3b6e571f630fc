"""Mistral batch jobs on the emulator's clock: a job is `QUEUED` for the first tenth of `processing_seconds`, then
`RUNNING` (its requests finishing evenly, in order, the counts growing), then `SUCCESS`; a cancel makes it
`CANCELLATION_REQUESTED` for `cancel_seconds`, then `CANCELLED` with the answers done before it; a job still running
when its `timeout_hours` end is `TIMEOUT_EXCEEDED`, with what finished; a job armed to fail
(`MistralEmulation.fail_jobs`), or whose input file holds a line that is not a request, is `FAILED` when its queued
time ends, with its `errors`. The job's rows (each request's outcome) are fixed when its end is first read."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from lowtide.emulator.core.jsonutil import JsonObject
from lowtide.emulator.mistral.errors import MistralError

__all__ = ["JobStatus", "MistralJob", "Row", "render_job"]

JobStatus = Literal["QUEUED", "RUNNING", "SUCCESS", "FAILED", "TIMEOUT_EXCEEDED", "CANCELLATION_REQUESTED", "CANCELLED"]
_QUEUED_SHARE = 0.1


@dataclass
class Row:
    """How one request came out: answered (`status` 200 and the completion), refused (its status and Mistral's error
    body), failed without a status (`error`), or lost (nothing, though counted as succeeded)."""

    status: int | None = None
    body: JsonObject | None = None
    error: JsonObject | None = None

    @property
    def succeeded(self) -> bool:
        return self.status == 200 or (self.status is None and self.error is None)


@dataclass(eq=False)
class MistralJob:
    id: str
    created_at: float
    model: str
    endpoint: str
    metadata: dict[str, str] | None
    requests: list[tuple[str, JsonObject]]
    input_files: list[str]
    inline: bool
    timeout_hours: int
    processing_seconds: float
    cancel_seconds: float
    errors: list[JsonObject] = field(default_factory=list[JsonObject])
    cancel_at: float | None = None
    rows: list[Row] | None = None

    @property
    def deadline(self) -> float:
        return self.created_at + self.timeout_hours * 3600.0

    @property
    def started_at(self) -> float:
        return self.created_at + _QUEUED_SHARE * self.processing_seconds

    @property
    def processed_at(self) -> float:
        return self.created_at + self.processing_seconds

    def final_status(self) -> JobStatus:
        if self.errors:
            return "FAILED"
        if self.cancel_at is not None:
            return "CANCELLED"
        return "TIMEOUT_EXCEEDED" if self.processed_at > self.deadline else "SUCCESS"

    @property
    def ended_at(self) -> float:
        final = self.final_status()
        if final == "FAILED":
            return self.started_at
        if final == "CANCELLED":
            assert self.cancel_at is not None
            return self.cancel_at + self.cancel_seconds
        return self.deadline if final == "TIMEOUT_EXCEEDED" else self.processed_at

    def status(self, now: float) -> JobStatus:
        if now >= self.ended_at:
            return self.final_status()
        if self.cancel_at is not None:
            return "CANCELLATION_REQUESTED"
        return "QUEUED" if now < self.started_at else "RUNNING"

    def processed_count(self, now: float) -> int:
        """How many requests, taken in order, have finished by `now` (never past a cancel or the timeout). Asked only
        of a job that started: one that failed before it ran never renders rows nor files."""
        total = len(self.requests)
        cutoff = min(now, self.cancel_at if self.cancel_at is not None else math.inf, self.deadline)
        if self.processing_seconds <= 0:
            return total if cutoff >= self.created_at else 0
        window = self.processed_at - self.started_at
        return max(0, min(total, math.floor((cutoff - self.started_at) * total / window)))

    def cancel(self, now: float, cancel_seconds: float) -> None:
        status = self.status(now)
        if status in ("QUEUED", "RUNNING"):  # a job asked to cancel is CANCELLATION_REQUESTED until it ends
            self.cancel_at = now
            self.cancel_seconds = cancel_seconds
            return
        if status != "CANCELLATION_REQUESTED":
            raise MistralError(400, f"Job {self.id} has ended ({status}) and cannot be cancelled.")


def render_job(
    job: MistralJob,
    now: float,
    *,
    rows: list[Row] | None,
    files: tuple[str | None, str | None],
    status: JobStatus | None = None,
) -> JsonObject:
    """The `BatchJob` as of `now` (shown as `status` when given): counts from the rows of the requests finished so
    far."""
    status = status or job.status(now)
    done = job.processed_count(now) if rows is not None else 0
    finished = rows[:done] if rows is not None else []
    succeeded = sum(1 for row in finished if row.succeeded)
    failed = len(finished) - succeeded
    ended = status in ("SUCCESS", "FAILED", "TIMEOUT_EXCEEDED", "CANCELLED")
    return {
        "id": job.id,
        "object": "batch",
        "input_files": job.input_files,
        "metadata": job.metadata,
        "endpoint": job.endpoint,
        "model": job.model,
        "agent_id": None,
        "output_file": files[0],
        "error_file": files[1],
        "errors": job.errors,
        "outputs": None,
        "status": status,
        "created_at": int(job.created_at),
        "total_requests": len(job.requests),
        "completed_requests": succeeded + failed,
        "succeeded_requests": succeeded,
        "failed_requests": failed,
        "started_at": int(job.started_at) if now >= job.started_at and not job.errors else None,
        "completed_at": int(job.ended_at) if ended else None,
    }
