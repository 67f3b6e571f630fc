"""The emulator's state in a file, so that an emulator started again on the same file still knows its batches.

What is kept is what the answers are computed from, never the answers themselves: each batch's requests, creation
time, timings, betas and cancel, the settlement of those whose end has been seen (result types, error details,
cache usage, the uploaded files they read), the uploaded files (bytes in base64), the prompt cache and the outcomes
armed by custom_id (which batches not yet settled will need), the counters, and the OpenAI section
(`lowtide.emulator.openai.state`). Call faults are not kept: they were armed for calls to the emulator that stopped.

The file is JSON, rewritten whole after every change: written beside its final name, then renamed over it, so that
a reader, or an emulator killed while writing, only ever finds a complete file. A batch's requests, a settled batch
as a whole, and an uploaded file never change, so each is encoded once and reused by every later write.
"""

from __future__ import annotations

import base64
import json
import os
import threading
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lowtide.emulator.batches import Batch, Settlement
from lowtide.emulator.cache import CacheUsage
from lowtide.emulator.jsonutil import compact
from lowtide.emulator.outcomes import Outcome, outcome_kind
from lowtide.emulator.stored_file import StoredFile

__all__ = ["SavedState", "StateFile", "StateFileError"]

FORMAT = "lowtide-emulator-state"
VERSION = 1


class StateFileError(ValueError):
    """The state file cannot be read, is not an emulator state file, or cannot be written."""


@dataclass
class SavedState:
    batches: list[Batch]
    calls: dict[str, int]
    created_batches: int
    created_custom_ids: dict[str, int]
    outcomes: dict[str, Outcome]
    cache: dict[str, float]
    files: list[StoredFile]
    openai: str | None = None
    """The OpenAI section's JSON text (`lowtide.emulator.openai.state`), or None when it has nothing to keep."""


class StateFile:
    """One emulator's state file. Writes are serialized: the server thread and a test thread may both save."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._requests: weakref.WeakKeyDictionary[Batch, str] = weakref.WeakKeyDictionary()
        self._settled: weakref.WeakKeyDictionary[Batch, str] = weakref.WeakKeyDictionary()
        self._files: weakref.WeakKeyDictionary[StoredFile, str] = weakref.WeakKeyDictionary()

    def read(self) -> SavedState | None:
        """The saved state, or None when there is no file yet."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as error:
            raise StateFileError(f"cannot read {self.path}: {error.strerror or error}") from None
        try:
            return _decode(json.loads(text))
        except (ValueError, TypeError, KeyError, AttributeError) as error:
            raise StateFileError(f"{self.path} is not a lowtide emulator state file ({error!r})") from None

    def write(self, state: SavedState) -> None:
        with self._lock:
            head = {
                "format": FORMAT,
                "version": VERSION,
                "calls": state.calls,
                "created_batches": state.created_batches,
                "created_custom_ids": state.created_custom_ids,
                "outcomes": {
                    custom_id: [outcome.kind, outcome.error_type, outcome.message]
                    for custom_id, outcome in state.outcomes.items()
                },
                "cache": state.cache,
            }
            batches = ",".join(self._encode_batch(batch) for batch in state.batches)
            files = ",".join(self._encode_file(file) for file in state.files)
            openai = f',"openai":{state.openai}' if state.openai is not None else ""
            text = f'{compact(head)[:-1]},"files":[{files}]{openai},"batches":[{batches}]}}\n'
            temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            try:
                temporary.write_text(text, encoding="utf-8")
                os.replace(temporary, self.path)
            except OSError as error:
                raise StateFileError(f"cannot write {self.path}: {error.strerror or error}") from None

    def _encode_file(self, file: StoredFile) -> str:
        encoded = self._files.get(file)
        if encoded is None:
            encoded = self._files[file] = compact(_file_record(file))
        return encoded

    def _encode_batch(self, batch: Batch) -> str:
        settled = self._settled.get(batch)
        if settled is not None:
            return settled
        requests = self._requests.get(batch)
        if requests is None:
            requests = self._requests[batch] = compact([[custom_id, params] for custom_id, params in batch.requests])
        head = {
            "id": batch.id,
            "created_at": batch.created_at,
            "processing_seconds": batch.processing_seconds,
            "cancel_seconds": batch.cancel_seconds,
            "cancel_initiated_at": batch.cancel_initiated_at,
            "betas": sorted(batch.betas),
            "settlement": _encode_settlement(batch.settlement) if batch.settlement is not None else None,
        }
        text = f'{compact(head)[:-1]},"requests":{requests}}}'
        if batch.settlement is not None:
            # Settled means ended: it can no longer be canceled, and its settlement is fixed.
            self._settled[batch] = text
            del self._requests[batch]
        return text


def _encode_settlement(settlement: Settlement) -> dict[str, Any]:
    return {
        "kinds": settlement.kinds,
        "errors": [[index, outcome.error_type, outcome.message] for index, outcome in settlement.errors.items()],
        "cache": [[index, usage.read, usage.created_5m, usage.created_1h] for index, usage in settlement.cache.items()],
        "files": [_file_record(file) for file in settlement.files.values()],
    }


def _file_record(file: StoredFile) -> dict[str, Any]:
    return {
        "id": file.id,
        "filename": file.filename,
        "mime_type": file.mime_type,
        "created_at": file.created_at,
        "downloadable": file.downloadable,
        "expires_at": file.expires_at,
        "content": base64.b64encode(file.content).decode(),
    }


def _decode_file(item: Any) -> StoredFile:
    return StoredFile(
        id=str(item["id"]),
        filename=str(item["filename"]),
        mime_type=str(item["mime_type"]),
        content=base64.b64decode(item["content"], validate=True),
        created_at=float(item["created_at"]),
        downloadable=bool(item["downloadable"]),
        expires_at=float(item["expires_at"]) if item["expires_at"] is not None else None,
    )


def _decode(data: Any) -> SavedState:
    if data.get("format") != FORMAT or data.get("version") != VERSION:
        raise ValueError(f"format {data.get('format')!r}, version {data.get('version')!r}")
    return SavedState(
        batches=[_decode_batch(item) for item in data["batches"]],
        calls={str(route): int(count) for route, count in data["calls"].items()},
        created_batches=int(data["created_batches"]),
        created_custom_ids={str(custom_id): int(count) for custom_id, count in data["created_custom_ids"].items()},
        outcomes={
            str(custom_id): Outcome(outcome_kind(kind), str(error_type), _text(message))
            for custom_id, (kind, error_type, message) in data["outcomes"].items()
        },
        cache={str(key): float(expiry) for key, expiry in data["cache"].items()},
        # Files written before the emulator had a Files API hold none.
        files=[_decode_file(item) for item in data.get("files", [])],
        openai=compact(data["openai"]) if data.get("openai") is not None else None,
    )


def _decode_batch(item: Any) -> Batch:
    settlement = item["settlement"]
    return Batch(
        id=str(item["id"]),
        created_at=float(item["created_at"]),
        requests=[(str(custom_id), dict(params)) for custom_id, params in item["requests"]],
        processing_seconds=float(item["processing_seconds"]),
        cancel_seconds=float(item["cancel_seconds"]),
        cancel_initiated_at=float(item["cancel_initiated_at"]) if item["cancel_initiated_at"] is not None else None,
        settlement=_decode_settlement(settlement) if settlement is not None else None,
        # Files written before batches kept their betas have none.
        betas=frozenset(str(beta) for beta in item.get("betas", [])),
    )


def _decode_settlement(data: Any) -> Settlement:
    return Settlement(
        kinds=[str(kind) for kind in data["kinds"]],
        errors={
            int(index): Outcome("errored", str(error_type), _text(message))
            for index, error_type, message in data["errors"]
        },
        cache={
            int(index): CacheUsage(read=int(read), created_5m=int(created_5m), created_1h=int(created_1h))
            for index, read, created_5m, created_1h in data["cache"]
        },
        files={file.id: file for file in (_decode_file(item) for item in data.get("files", []))},
    )


def _text(value: Any) -> str | None:
    return str(value) if value is not None else None
