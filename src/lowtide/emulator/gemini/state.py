"""The Gemini section of the emulator's state file (`GeminiEmulation.saved()` gives it, under `"gemini"`): uploaded
files with their bytes, batch jobs with their requests and their own webhooks (`webhook_config`: the URLs, the
metadata their events echo, whether their end was sent), and the exactly-once counters. A restarted emulator sends
the end of a job still open, or ended while it was stopped, its webhooks unsent. A job's rows and responses file are
not kept: they are produced again from its requests. An uploaded file, and a job's requests, never change, so each is
encoded once and reused by later writes. Upload sessions under way are not kept (a restart ends them)."""

from __future__ import annotations

import base64
import weakref
from typing import Any, cast

from lowtide.emulator.core.jsonutil import JsonObject, compact
from lowtide.emulator.gemini.backend import GeminiBackend
from lowtide.emulator.gemini.batches import BatchRequest, GeminiBatch
from lowtide.emulator.gemini.files import GeminiFile
from lowtide.emulator.gemini.wire import RpcStatus

__all__ = ["GeminiStateCodec", "restore"]


class GeminiStateCodec:
    """Encodes one backend's section, keeping the encodings of what never changes."""

    def __init__(self) -> None:
        self._files: weakref.WeakKeyDictionary[GeminiFile, str] = weakref.WeakKeyDictionary()
        self._requests: weakref.WeakKeyDictionary[GeminiBatch, str] = weakref.WeakKeyDictionary()

    def encode(self, backend: GeminiBackend) -> str | None:
        """The section's JSON text; None when the Gemini side has nothing to keep."""
        files = backend.files.uploaded()
        batches = backend.batches.oldest_first()
        if not files and not batches and not backend.created_batches:
            return None
        head = {"created_batches": backend.created_batches, "created_custom_ids": dict(backend.created_custom_ids)}
        encoded_files = ",".join(self._file(stored) for stored in files)
        encoded_batches = ",".join(self._batch(batch) for batch in batches)
        return f'{compact(head)[:-1]},"files":[{encoded_files}],"batches":[{encoded_batches}]}}'

    def _file(self, stored: GeminiFile) -> str:
        found = self._files.get(stored)
        if found is None:
            content = stored.content or b""
            head: JsonObject = {
                "id": stored.id,
                "display_name": stored.display_name,
                "mime_type": stored.mime_type,
                "created_at": stored.created_at,
                "base64": base64.b64encode(content).decode(),
            }
            found = self._files[stored] = compact(head)
        return found

    def _batch(self, batch: GeminiBatch) -> str:
        requests = self._requests.get(batch)
        if requests is None:
            rows = [[request.key, request.metadata, request.body] for request in batch.requests]
            requests = self._requests[batch] = compact(rows)
        head = {
            "id": batch.id,
            "model": batch.model,
            "display_name": batch.display_name,
            "created_at": batch.created_at,
            "input_file": batch.input_file,
            "processing_seconds": batch.processing_seconds,
            "cancel_seconds": batch.cancel_seconds,
            "failure": batch.failure,
            "priority": batch.priority,
            "cancel_at": batch.cancel_at,
            "result_deleted": batch.result_deleted,
            "webhook_uris": list(batch.webhook_uris),
            "user_metadata": batch.user_metadata,
            "webhooks_sent": batch.webhooks_sent,
        }
        return f'{compact(head)[:-1]},"requests":{requests}}}'


def restore(backend: GeminiBackend, data: Any) -> None:
    """Put the section `data` (decoded JSON) back into `backend`."""
    backend.created_batches = int(data["created_batches"])
    backend.created_custom_ids.update({str(key): int(count) for key, count in data["created_custom_ids"].items()})
    for item in data["files"]:
        backend.files.add(
            GeminiFile(
                id=str(item["id"]),
                display_name=item["display_name"],
                mime_type=str(item["mime_type"]),
                created_at=float(item["created_at"]),
                content=base64.b64decode(item["base64"]),
            )
        )
    for item in data["batches"]:
        cancel_at = item["cancel_at"]
        echoed = item.get("user_metadata")  # .get: a file written before jobs' webhooks were kept
        batch = GeminiBatch(
            id=str(item["id"]),
            model=str(item["model"]),
            display_name=item["display_name"],
            created_at=float(item["created_at"]),
            requests=[BatchRequest(key, metadata, dict(body)) for key, metadata, body in item["requests"]],
            input_file=item["input_file"],
            processing_seconds=float(item["processing_seconds"]),
            cancel_seconds=float(item["cancel_seconds"]),
            failure=cast(RpcStatus | None, item["failure"]),
            priority=int(item["priority"]),
            cancel_at=float(cancel_at) if cancel_at is not None else None,
            result_deleted=bool(item["result_deleted"]),
            webhook_uris=tuple(str(uri) for uri in item.get("webhook_uris", ())),
            user_metadata=cast(JsonObject, echoed) if isinstance(echoed, dict) else None,
            webhooks_sent=bool(item.get("webhooks_sent", True)),
        )
        backend.batches.add(batch)
        # Its end still to come, or come and not sent to the job's own URLs (the emulator stopped first): sent once it
        # runs again. A job ended before with no URL of its own sends nothing to endpoints added since.
        if not batch.webhooks_sent and (batch.ended_at > backend.now() or batch.webhook_uris):
            backend.webhooks.watch(batch.id)
