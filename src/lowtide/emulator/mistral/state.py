"""The Mistral section of the emulator's state file (`MistralEmulation.saved()` gives it, under `"mistral"`):
uploaded files with their bytes, jobs with their requests, and the exactly-once counters. A job's rows and result
files are produced again from its requests after a restart."""

from __future__ import annotations

import base64
from collections import Counter
from typing import Any, cast

from lowtide.emulator.core.jsonutil import JsonObject, compact
from lowtide.emulator.mistral.backend import MistralBackend
from lowtide.emulator.mistral.files import MistralFile
from lowtide.emulator.mistral.jobs import MistralJob

__all__ = ["encode", "restore"]


def encode(backend: MistralBackend) -> str | None:
    """The section's JSON text; None when the Mistral side has nothing to keep."""
    files = backend.files.uploaded()
    if not files and not backend.jobs and not backend.created_batches:
        return None
    section: JsonObject = {
        "created_batches": backend.created_batches,
        "created_custom_ids": dict(backend.created_custom_ids),
        "deleted_files": sorted(backend.files.deleted),
        "files": [
            {
                "id": stored.id,
                "filename": stored.filename,
                "purpose": stored.purpose,
                "created_at": stored.created_at,
                "base64": base64.b64encode(stored.content or b"").decode(),
            }
            for stored in files
        ],
        "jobs": [
            {
                "id": job.id,
                "created_at": job.created_at,
                "model": job.model,
                "metadata": job.metadata,
                "requests": [[custom_id, body] for custom_id, body in job.requests],
                "input_files": job.input_files,
                "inline": job.inline,
                "timeout_hours": job.timeout_hours,
                "processing_seconds": job.processing_seconds,
                "cancel_seconds": job.cancel_seconds,
                "errors": job.errors,
                "cancel_at": job.cancel_at,
            }
            for job in backend.jobs.values()
        ],
    }
    return compact(section)


def restore(backend: MistralBackend, section: Any) -> None:
    """Take back what `encode` wrote (KeyError, TypeError or ValueError when it cannot)."""
    held = cast(JsonObject, section)
    backend.reset()
    backend.created_batches = int(held["created_batches"])
    backend.created_custom_ids = Counter({str(k): int(v) for k, v in held["created_custom_ids"].items()})
    for raw in held["files"]:
        backend.files.add(
            MistralFile(
                str(raw["id"]), str(raw["filename"]), str(raw["purpose"]), float(raw["created_at"]),
                content=base64.b64decode(raw["base64"]),
            )
        )  # fmt: skip
    backend.files.deleted.update(str(name) for name in held.get("deleted_files", []))
    for raw in held["jobs"]:
        job = MistralJob(
            id=str(raw["id"]),
            created_at=float(raw["created_at"]),
            model=str(raw["model"]),
            endpoint="/v1/chat/completions",
            metadata=raw["metadata"],
            requests=[(str(custom_id), body) for custom_id, body in raw["requests"]],
            input_files=list(raw["input_files"]),
            inline=bool(raw["inline"]),
            timeout_hours=int(raw["timeout_hours"]),
            processing_seconds=float(raw["processing_seconds"]),
            cancel_seconds=float(raw["cancel_seconds"]),
            errors=list(raw["errors"]),
            cancel_at=raw["cancel_at"],
        )
        backend.jobs[job.id] = job
