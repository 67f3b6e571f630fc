"""The OpenAI section of the emulator's state file (`OpenAIEmulation.saved()` gives it, under `"openai"`): uploaded
files with their bytes, batches with their requests, settlements and deleted output files, the exactly-once
counters, the custom ids armed to go missing, and what the account keeps (stored responses and chat completions,
fine-tuned models: each key written only when it holds something). Output and error files are not kept: they are
produced from their batch. An uploaded file, and a batch's requests, never change, so each is encoded once and reused
by later writes."""

from __future__ import annotations

import base64
import weakref
from typing import Any, cast

from lowtide.emulator.core.jsonutil import JsonObject, compact
from lowtide.emulator.openai.backend import OpenAIBackend
from lowtide.emulator.openai.batches import BATCH_WINDOW, OpenAIBatch, RequestKind, Settlement
from lowtide.emulator.openai.catalogue import OpenAIModel
from lowtide.emulator.openai.files import StoredFile

__all__ = ["OpenAIStateCodec", "restore"]


class OpenAIStateCodec:
    """Encodes one backend's section, keeping the encodings of what never changes."""

    def __init__(self) -> None:
        self._files: weakref.WeakKeyDictionary[StoredFile, str] = weakref.WeakKeyDictionary()
        self._requests: weakref.WeakKeyDictionary[OpenAIBatch, str] = weakref.WeakKeyDictionary()

    def encode(self, backend: OpenAIBackend) -> str | None:
        """The section's JSON text; None when the OpenAI side has nothing to keep."""
        files = backend.files.uploaded()
        batches = backend.batches.oldest_first()
        lost = sorted(backend.faults.lost())
        kept = _kept(backend)
        if not files and not batches and not lost and not backend.created_batches and not kept:
            return None
        head = {
            "created_batches": backend.created_batches,
            "created_custom_ids": dict(backend.created_custom_ids),
            "lost": lost,
            "order": backend.files.order(),
        }
        encoded_files = ",".join(self._file(stored) for stored in files)
        encoded_batches = ",".join(self._batch(batch) for batch in batches)
        extra = f",{compact(kept)[1:-1]}" if kept else ""
        return f'{compact(head)[:-1]},"files":[{encoded_files}],"batches":[{encoded_batches}]{extra}}}'

    def _file(self, stored: StoredFile) -> str:
        found = self._files.get(stored)
        if found is None:
            content = stored.content or b""
            try:
                body: JsonObject = {"text": content.decode("utf-8")}
            except UnicodeDecodeError:
                body = {"base64": base64.b64encode(content).decode()}
            head = {
                "id": stored.id,
                "filename": stored.filename,
                "purpose": stored.purpose,
                "created_at": stored.created_at,
                "expires_at": stored.expires_at,
            }
            found = self._files[stored] = compact({**head, **body})
        return found

    def _batch(self, batch: OpenAIBatch) -> str:
        requests = self._requests.get(batch)
        if requests is None:
            requests = self._requests[batch] = compact([[custom_id, body] for custom_id, body in batch.requests])
        settlement = batch.settlement
        head = {
            "id": batch.id,
            "created_at": batch.created_at,
            "input_file_id": batch.input_file_id,
            "endpoint": batch.endpoint,
            "metadata": batch.metadata,
            "model": batch.model,
            "errors": batch.errors,
            "processing_seconds": batch.processing_seconds,
            "cancel_seconds": batch.cancel_seconds,
            "output_lifetime": batch.output_lifetime,
            "cancel_initiated_at": batch.cancel_initiated_at,
            "deleted_files": sorted(batch.deleted_files),
            "settlement": {
                "kinds": settlement.kinds,
                "errors": [[index, status, body] for index, (status, body) in settlement.errors.items()],
            }
            if settlement is not None
            else None,
        }
        if batch.expire_after != BATCH_WINDOW:  # kept only when not OpenAI's 24 hours (Azure's: never)
            head["expire_after"] = batch.expire_after
        return f'{compact(head)[:-1]},"requests":{requests}}}'


def _kept(backend: OpenAIBackend) -> JsonObject:
    kept: JsonObject = {}
    if len(backend.responses):
        kept["responses"] = backend.responses.state()
    if len(backend.completions):
        kept["completions"] = backend.completions.state()
    if backend.fine_tuned:
        kept["fine_tuned"] = [[m.id, m.created, m.window, m.owned_by] for m in backend.fine_tuned.values()]
    return kept


def restore(backend: OpenAIBackend, data: Any) -> None:
    """Put the section `data` (decoded JSON) back into `backend`, whose batch files are produced again from their
    batches."""
    backend.created_batches = int(data["created_batches"])
    backend.created_custom_ids.update({str(key): int(count) for key, count in data["created_custom_ids"].items()})
    backend.faults.restore_lost({str(custom_id) for custom_id in data["lost"]})
    backend.files.restore(_decode_file(item) for item in data["files"])
    batches = [_decode_batch(item) for item in data["batches"]]
    backend.batches.restore(batches)
    for batch in batches:
        if batch.settlement is not None:
            backend.add_batch_files(batch)
    backend.files.reorder(str(file_id) for file_id in data["order"])
    backend.responses.restore(list(data.get("responses", [])))
    backend.completions.restore(list(data.get("completions", [])))
    backend.fine_tuned = {
        str(model_id): OpenAIModel(
            str(model_id), int(created), int(window) if window is not None else None, owned_by=str(owner)
        )
        for model_id, created, window, owner in data.get("fine_tuned", [])
    }


def _decode_file(item: Any) -> StoredFile:
    content = item["text"].encode("utf-8") if "text" in item else base64.b64decode(item["base64"])
    expires_at = item["expires_at"]
    return StoredFile(
        id=str(item["id"]),
        filename=str(item["filename"]),
        purpose=str(item["purpose"]),
        created_at=float(item["created_at"]),
        expires_at=float(expires_at) if expires_at is not None else None,
        content=content,
    )


def _decode_batch(item: Any) -> OpenAIBatch:
    settlement = item["settlement"]
    cancel, lifetime = item["cancel_initiated_at"], item["output_lifetime"]
    return OpenAIBatch(
        id=str(item["id"]),
        created_at=float(item["created_at"]),
        input_file_id=str(item["input_file_id"]),
        endpoint=str(item["endpoint"]),
        completion_window="24h",
        metadata=item["metadata"],
        requests=[(str(custom_id), dict(body)) for custom_id, body in item["requests"]],
        model=item["model"],
        errors=list(item["errors"]),
        processing_seconds=float(item["processing_seconds"]),
        cancel_seconds=float(item["cancel_seconds"]),
        output_lifetime=float(lifetime) if lifetime is not None else None,
        cancel_initiated_at=float(cancel) if cancel is not None else None,
        settlement=Settlement(
            kinds=[cast(RequestKind, str(kind)) for kind in settlement["kinds"]],
            errors={int(index): (int(status), dict(body)) for index, status, body in settlement["errors"]},
        )
        if settlement is not None
        else None,
        deleted_files={str(file_id) for file_id in item["deleted_files"]},
        expire_after=_expire_after(item),
    )


def _expire_after(item: Any) -> float | None:
    """A batch's expiry (files written before it was kept: OpenAI's 24 hours)."""
    if "expire_after" not in item:
        return BATCH_WINDOW
    value = item["expire_after"]
    return float(value) if value is not None else None
