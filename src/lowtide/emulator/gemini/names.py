"""Resource names and times as the Gemini API writes them: `files/` and `batches/` followed by lowercase letters and
digits (random for what is created; derived from a batch for its result file), and RFC 3339 timestamps in UTC with a
`Z` (`2026-11-25T04:00:00.000000Z`), from the emulator's clock."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime

__all__ = ["new_batch_id", "new_file_id", "new_upload_id", "result_file_id", "timestamp"]

_LOWER = "abcdefghijklmnopqrstuvwxyz0123456789"


def _random(length: int) -> str:
    return "".join(secrets.choice(_LOWER) for _ in range(length))


def new_file_id() -> str:
    """A file's id (its name without `files/`): 12 lowercase letters and digits, as the API gives."""
    return _random(12)


def new_batch_id() -> str:
    """A batch's id (its name without `batches/`)."""
    return _random(40)


def new_upload_id() -> str:
    """The `upload_id` of a resumable upload session (its URL's credential)."""
    return "ABgVH" + secrets.token_urlsafe(48)


def result_file_id(batch_id: str) -> str:
    """The id of the file holding a file-sourced batch's responses."""
    return f"batch-{batch_id}"


def timestamp(seconds: float) -> str:
    """A time on the emulator's clock as the API's JSON writes a `google.protobuf.Timestamp`."""
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
