"""The Together half of the emulator's state and operations, free of HTTP: OpenAI's files, batches and chat answers
(`CompatBackend`) in Together's dialect (`TOGETHER`: its models and body keys), its three-step upload (start, put the
bytes, preprocess; an upload of bytes already held answered with a conflict naming that file), and its batch jobs
(upper-case statuses, dates, a progress percentage). Raises `OpenAIError` (Together's error bodies are OpenAI's),
`UploadRedirect` and `UploadConflict`."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

from lowtide.core.clock import Clock
from lowtide.emulator.core.cache import PromptCache
from lowtide.emulator.core.faults import Faults
from lowtide.emulator.core.jsonutil import JsonObject, as_object
from lowtide.emulator.core.settings import Settings
from lowtide.emulator.openai.checks import require_object, required
from lowtide.emulator.openai.compat import CompatBackend
from lowtide.emulator.openai.errors import OpenAIError, invalid_value, no_such
from lowtide.emulator.openai.files import StoredFile, file_fields
from lowtide.emulator.together.dialect import TOGETHER

__all__ = ["PURPOSES", "TogetherBackend", "UploadConflict", "UploadRedirect"]

PURPOSES = ("fine-tune", "calibration", "eval", "batch-api")
FILE_TYPES = ("jsonl", "parquet", "csv")
_DAY = 24 * 3600.0
_STATUSES = {
    "validating": "VALIDATING",
    "in_progress": "IN_PROGRESS",
    "finalizing": "IN_PROGRESS",
    "cancelling": "IN_PROGRESS",
    "completed": "COMPLETED",
    "failed": "FAILED",
    "expired": "EXPIRED",
    "cancelled": "CANCELLED",
}
"""OpenAI's statuses as Together's: it shows neither finalizing nor cancelling."""


class UploadRedirect(Exception):
    """The first step of an upload: go and put the bytes at `location` (a 302 naming the file's id)."""

    def __init__(self, location: str, file_id: str) -> None:
        super().__init__(location)
        self.location = location
        self.file_id = file_id


class UploadConflict(Exception):
    """An upload of bytes the account holds already (a 409 naming that file)."""

    def __init__(self, file_id: str) -> None:
        super().__init__(file_id)
        self.file_id = file_id


@dataclass
class _Pending:
    filename: str
    purpose: str
    checksum: str
    content: bytes | None = None


def _when(seconds: object) -> str | None:
    return datetime.fromtimestamp(seconds, UTC).isoformat() if isinstance(seconds, int | float) else None


class TogetherBackend(CompatBackend):
    """Files, batch jobs and the exactly-once counters of the emulated Together account. `checksums` holds each
    uploaded file's checksum (in the emulation's state file section)."""

    def __init__(self, clock: Clock, settings: Settings, faults: Faults, cache: PromptCache) -> None:
        super().__init__(clock, settings, faults, cache, TOGETHER)
        self.checksums: dict[str, str] = {}
        self.purposes: dict[str, str] = {}
        self._pending: dict[str, _Pending] = {}

    def reset(self) -> None:
        super().reset()
        self.checksums.clear()
        self.purposes.clear()
        self._pending.clear()

    # -- files ---------------------------------------------------------------------------------------------------

    def start_upload(self, fields: dict[str, str], base_url: str) -> None:
        """Raise the redirect to the address the bytes go to, or the conflict naming a live file of the same bytes
        and purpose."""
        purpose = fields.get("purpose")
        if purpose not in PURPOSES:
            raise invalid_value("purpose", purpose, PURPOSES)
        if fields.get("file_type") not in FILE_TYPES:
            raise invalid_value("file_type", fields.get("file_type"), FILE_TYPES)
        filename, checksum = fields.get("file_name"), fields.get("checksum")
        if not filename:
            raise OpenAIError(400, "Missing required parameter: 'file_name'.", param="file_name")
        if not checksum:
            raise OpenAIError(400, "Missing required parameter: 'checksum'.", param="checksum")
        now = self.clock.now()
        for file_id, held in self.checksums.items():
            if held == checksum and self.purposes.get(file_id) == purpose and self.files.get(file_id, now):
                raise UploadConflict(file_id)
        file_id = f"file-{uuid.uuid4()}"
        self._pending[file_id] = _Pending(filename, purpose, checksum)
        raise UploadRedirect(f"{base_url.rstrip('/')}/together-uploads/{file_id}", file_id)

    def put_upload(self, file_id: str, content: bytes) -> JsonObject:
        pending = self._pending.get(file_id)
        if pending is None:
            raise no_such("upload", file_id)
        pending.content = content
        return {}

    def preprocess(self, file_id: str) -> JsonObject:
        """The uploaded file, stored (again: a preprocess asked twice answers the same file)."""
        now = self.clock.now()
        stored = self.files.get(file_id, now)
        if stored is not None:
            return self.render_file(stored)
        pending = self._pending.get(file_id)
        if pending is None or pending.content is None:
            raise no_such("file", file_id)
        del self._pending[file_id]
        # Held as OpenAI's backend takes a batch's input (`batch`); shown with Together's purpose.
        stored = StoredFile(
            id=file_id,
            filename=pending.filename,
            purpose="batch" if pending.purpose == "batch-api" else pending.purpose,
            created_at=now,
            expires_at=None,
            content=pending.content,
        )
        self.files.add(stored)
        self.checksums[file_id] = pending.checksum
        self.purposes[file_id] = pending.purpose
        return self.render_file(stored)

    def render_file(self, stored: StoredFile) -> JsonObject:
        return {
            **file_fields(stored),
            "FileType": stored.filename.rsplit(".", 1)[-1] if "." in stored.filename else "jsonl",
            "purpose": self.purposes.get(stored.id, "batch-api" if stored.purpose == "batch" else stored.purpose),
            "processing_status": "COMPLETED",
        }

    def together_file(self, file_id: str) -> JsonObject:
        stored = self.files.get(file_id, self.clock.now())
        if stored is None:
            raise no_such("file", file_id)
        return self.render_file(stored)

    def together_files(self) -> JsonObject:
        """Every live file, newest first (batch outputs too, once their batch has ended)."""
        now = self.clock.now()
        for batch in self.batches.oldest_first():
            if batch.settlement is None and now >= batch.ended_at:
                self.retrieve_batch(batch.id)  # settles it: its files exist from then on
        ids = self.files.order()
        alive = [stored for file_id in reversed(ids) if (stored := self.files.get(file_id, now)) is not None]
        return {"data": [self.render_file(stored) for stored in alive]}

    # -- batch jobs ----------------------------------------------------------------------------------------------

    def create_job(self, body: object) -> JsonObject:
        params = require_object(body)
        endpoint = required(params, "endpoint")
        input_file_id = required(params, "input_file_id")
        if endpoint not in TOGETHER.endpoints:
            raise invalid_value("endpoint", endpoint, TOGETHER.endpoints)
        window = params.get("completion_window")
        if window not in (None, "24h"):
            raise invalid_value("completion_window", window, ("24h",))
        priority = params.get("priority")
        if priority is not None and (not isinstance(priority, int) or isinstance(priority, bool)):
            raise OpenAIError(400, "Invalid 'priority': expected an integer.", param="priority")
        created = self.create_compat_batch(
            {"input_file_id": input_file_id, "endpoint": endpoint, "completion_window": "24h"}, window_seconds=_DAY
        )
        return {"job": self.job_of(created), "warning": None}

    def job(self, batch_id: str) -> JsonObject:
        return self.job_of(self.retrieve_batch(batch_id))

    def jobs(self) -> list[JsonObject]:
        return [self.job(batch.id) for batch in reversed(self.batches.oldest_first())]

    def cancel_job(self, batch_id: str) -> JsonObject:
        self.cancel_batch(batch_id)
        return self.job(batch_id)

    def job_of(self, shown: JsonObject) -> JsonObject:
        """A batch as OpenAI's backend shows it (with the model asked for), as Together's `BatchJob`."""
        status = _STATUSES.get(str(shown.get("status")), "IN_PROGRESS")
        counts = as_object(shown.get("request_counts")) or {}
        total, done = counts.get("total") or 0, (counts.get("completed") or 0) + (counts.get("failed") or 0)
        progress = 100.0 if status == "COMPLETED" else (100.0 * done / total if total else 0.0)
        ended = shown.get("completed_at") or shown.get("failed_at") or shown.get("expired_at")
        ended = ended or shown.get("cancelled_at")
        errors = as_object(shown.get("errors")) or {}
        first = next(iter(errors.get("data") or []), None)
        stored = self.files.get(str(shown.get("input_file_id")), self.clock.now())
        return {
            "id": shown.get("id"),
            "status": status,
            "endpoint": shown.get("endpoint"),
            "input_file_id": shown.get("input_file_id"),
            "output_file_id": shown.get("output_file_id"),
            "error_file_id": shown.get("error_file_id"),
            "file_size_bytes": stored.size if stored is not None else None,
            "created_at": _when(shown.get("created_at")),
            "completed_at": _when(ended) if status in ("COMPLETED", "FAILED", "EXPIRED", "CANCELLED") else None,
            "job_deadline": _when(shown.get("expires_at")),
            "progress": round(progress, 2),
            "model_id": shown.get("model"),
            "error": (as_object(first) or {}).get("message") if status == "FAILED" else None,
            "user_id": "emulated-user",
        }
