"""The Anthropic API's part of the emulator's state file (`lowtide.emulator.core.state` writes the rest), at the
file's top level as it always was: each batch's requests, creation time, timings, betas and cancel, the settlement
of those whose end has been seen (result types, error details, cache usage, the uploaded files they read), the
uploaded files (bytes in base64), and the exactly-once counters. A batch's requests, a settled batch as a whole, and
an uploaded file never change, so each is encoded once and reused by every later write."""

from __future__ import annotations

import base64
import weakref
from collections.abc import Mapping
from typing import Any

from lowtide.emulator.anthropic.batches import Batch, Settlement
from lowtide.emulator.anthropic.stored_file import StoredFile
from lowtide.emulator.core.cache import CacheUsage
from lowtide.emulator.core.jsonutil import compact
from lowtide.emulator.core.outcomes import Outcome

__all__ = ["AnthropicSaved", "AnthropicStateCodec"]


class AnthropicSaved:
    """The section as read back: batches, files and counters."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self.batches = [_decode_batch(item) for item in document["batches"]]
        self.created_batches = int(document["created_batches"])
        self.created_custom_ids = {
            str(custom_id): int(count) for custom_id, count in document["created_custom_ids"].items()
        }
        # Files written before the emulator had a Files API hold none.
        self.files = [_decode_file(item) for item in document.get("files", [])]


class AnthropicStateCodec:
    """Encodes one emulation's section, keeping the encodings of what never changes."""

    def __init__(self) -> None:
        self._requests: weakref.WeakKeyDictionary[Batch, str] = weakref.WeakKeyDictionary()
        self._settled: weakref.WeakKeyDictionary[Batch, str] = weakref.WeakKeyDictionary()
        self._files: weakref.WeakKeyDictionary[StoredFile, str] = weakref.WeakKeyDictionary()

    def encode(
        self, *, batches: list[Batch], files: list[StoredFile], created_batches: int, created_custom_ids: dict[str, int]
    ) -> dict[str, str]:
        return {
            "created_batches": compact(created_batches),
            "created_custom_ids": compact(created_custom_ids),
            "files": f"[{','.join(self._encode_file(file) for file in files)}]",
            "batches": f"[{','.join(self._encode_batch(batch) for batch in batches)}]",
        }

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


def _encode_settlement(settlement: Settlement) -> dict[str, object]:
    return {
        "kinds": settlement.kinds,
        "errors": [
            [index, outcome.error_type, outcome.message, outcome.refused]
            for index, outcome in settlement.errors.items()
        ],
        "cache": [[index, usage.read, usage.created_5m, usage.created_1h] for index, usage in settlement.cache.items()],
        "files": [_file_record(file) for file in settlement.files.values()],
    }


def _file_record(file: StoredFile) -> dict[str, object]:
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
        # Files written before errors were marked refused have three fields to an error.
        errors={
            int(error[0]): Outcome("errored", str(error[1]), _text(error[2]), refused=len(error) > 3 and bool(error[3]))
            for error in data["errors"]
        },
        cache={
            int(index): CacheUsage(read=int(read), created_5m=int(created_5m), created_1h=int(created_1h))
            for index, read, created_5m, created_1h in data["cache"]
        },
        files={file.id: file for file in (_decode_file(item) for item in data.get("files", []))},
    )


def _text(value: object) -> str | None:
    return str(value) if value is not None else None
