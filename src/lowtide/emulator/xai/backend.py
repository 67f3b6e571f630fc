"""The xAI half of the emulator's state and operations, free of HTTP: OpenAI's chat answers and models
(`CompatBackend`) in xAI's dialect, and xAI's batches: a batch is made empty under a name, each add of requests runs
as one of OpenAI's batches underneath (an input file made of them, on the emulator's clock and faults), and the
batch's state and results are those parts' summed and joined. Raises `OpenAIError` (xAI's error bodies are OpenAI's
`{"error": ...}` shape, as the `openai` SDK reads them).

The emulator's reading, where xAI's REST reference is silent: a `batch_request_id` given twice in one batch is
refused (400), as is an add to a canceled batch; a result is `{batch_request_id, response: {chat_get_completion}}`
or `{batch_request_id, error_message}`; pages are `limit` (at most 100) and an opaque `pagination_token`."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import cast

from lowtide.core.clock import Clock
from lowtide.emulator.core.cache import PromptCache
from lowtide.emulator.core.faults import Faults
from lowtide.emulator.core.jsonutil import JsonObject, as_object
from lowtide.emulator.core.settings import Settings
from lowtide.emulator.openai.checks import require_object
from lowtide.emulator.openai.compat import CompatBackend
from lowtide.emulator.openai.dialect import Catalogue, Dialect
from lowtide.emulator.openai.errors import OpenAIError, no_such

__all__ = ["XAI", "XaiBackend", "XaiBatch"]

XAI = Dialect(
    name="xai",
    catalogue=Catalogue.read("lowtide.emulator.xai"),
    own_keys={"reasoning_effort": ("low", "high"), "search_parameters": ()},
    served=("chat.completions.create", "models.list", "models.retrieve"),
    prefix="/xai",
    batch_section="xai_parts",
)
"""What xAI changes of OpenAI's API: its models and body keys, OpenAI's chat and model routes under `/xai/v1/`; its
batches are its own (`XaiBackend`)."""

_DAY = 24 * 3600.0
_ENDED = ("completed", "expired", "failed", "cancelled")
"""The statuses of an OpenAI batch whose files are written."""
_MOST_PAGE = 100
_CHAT = "/v1/chat/completions"


@dataclass
class XaiBatch:
    """One named batch: the OpenAI batches its adds made, and the request ids it holds."""

    batch_id: str
    name: str
    created_at: float
    parts: list[str] = field(default_factory=list[str])
    """The OpenAI batches its adds ran as, each with the number of requests it holds (OpenAI's count is 0 until
    the batch is validated)."""
    sizes: list[int] = field(default_factory=list[int])
    request_ids: list[str] = field(default_factory=list[str])
    cancel_time: float | None = None

    def kept(self) -> JsonObject:
        return {
            "batch_id": self.batch_id,
            "name": self.name,
            "created_at": self.created_at,
            "parts": list(self.parts),
            "sizes": list(self.sizes),
            "request_ids": list(self.request_ids),
            "cancel_time": self.cancel_time,
        }

    @classmethod
    def from_kept(cls, kept: JsonObject) -> XaiBatch:
        cancel = kept.get("cancel_time")
        return cls(
            batch_id=str(kept["batch_id"]),
            name=str(kept["name"]),
            created_at=float(str(kept["created_at"])),
            parts=_strings(kept.get("parts")),
            sizes=[int(size) for size in _strings(kept.get("sizes"))],
            request_ids=_strings(kept.get("request_ids")),
            cancel_time=float(str(cancel)) if cancel is not None else None,
        )


def _strings(value: object) -> list[str]:
    return [str(item) for item in cast("list[object]", value)] if isinstance(value, list) else []


def _when(seconds: float | None) -> str | None:
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z") if seconds is not None else None


def _page_of(params: dict[str, str]) -> tuple[int, int]:
    """The (offset, size) a `pagination_token` and `limit` ask for."""
    token, limit = params.get("pagination_token") or "0", params.get("limit") or str(_MOST_PAGE)
    if not token.isdigit():
        raise OpenAIError(400, f"Invalid 'pagination_token': {token!r}.", param="pagination_token")
    if not limit.isdigit() or not 1 <= int(limit) <= _MOST_PAGE:
        raise OpenAIError(400, f"Invalid 'limit': {limit!r}. Expected 1 to {_MOST_PAGE}.", param="limit")
    return int(token), int(limit)


def _paged(items: list[JsonObject], key: str, params: dict[str, str]) -> JsonObject:
    start, size = _page_of(params)
    end = start + size
    return {key: items[start:end], "pagination_token": str(end) if end < len(items) else None}


class XaiBackend(CompatBackend):
    """Chat answers, models and the named batches of the emulated xAI team (`xai_batches`, in the emulation's state
    file section)."""

    def __init__(self, clock: Clock, settings: Settings, faults: Faults, cache: PromptCache) -> None:
        super().__init__(clock, settings, faults, cache, XAI)
        self.xai_batches: dict[str, XaiBatch] = {}

    def reset(self) -> None:
        super().reset()
        self.xai_batches.clear()

    def create_named(self, body: object) -> JsonObject:
        params = require_object(body)
        name = params.get("name")
        if not isinstance(name, str) or not name:
            raise OpenAIError(400, "Missing required parameter: 'name'.", param="name")
        batch = XaiBatch(batch_id=f"batch_{uuid.uuid4()}", name=name, created_at=self.clock.now())
        self.xai_batches[batch.batch_id] = batch
        return self.render(batch)

    def named(self, batch_id: str) -> XaiBatch:
        batch = self.xai_batches.get(batch_id)
        if batch is None:
            raise no_such("batch", batch_id)
        return batch

    def add_requests(self, batch_id: str, body: object) -> JsonObject:
        """The requests added as one of OpenAI's batches, from an input file of them (refused whole when one is
        wrong: an id given twice, a request that is no chat completion)."""
        batch = self.named(batch_id)
        if batch.cancel_time is not None:
            raise OpenAIError(400, f"Batch {batch_id} was cancelled: no request can be added to it.")
        given = require_object(body).get("batch_requests")
        if not isinstance(given, list) or not given:
            raise OpenAIError(400, "Missing required parameter: 'batch_requests'.", param="batch_requests")
        lines: list[bytes] = []
        ids: list[str] = []
        for index, item in enumerate(cast("list[object]", given)):
            entry = as_object(item) or {}
            request_id = entry.get("batch_request_id")
            chat = as_object((as_object(entry.get("batch_request")) or {}).get("chat_get_completion"))
            where = f"batch_requests[{index}]"
            if not isinstance(request_id, str) or not request_id:
                raise OpenAIError(400, f"Missing required parameter: '{where}.batch_request_id'.", param=where)
            if chat is None:
                raise OpenAIError(400, f"{where}: only chat_get_completion requests are emulated.", param=where)
            if request_id in batch.request_ids or request_id in ids:
                raise OpenAIError(400, f"{where}: batch_request_id {request_id!r} is in the batch already.")
            ids.append(request_id)
            line = {"custom_id": request_id, "method": "POST", "url": _CHAT, "body": chat}
            lines.append(json.dumps(line).encode())
        stored = self.upload(f"xai-{batch_id}-{len(batch.parts)}.jsonl", b"\n".join(lines), "batch", None)
        created = self.create_compat_batch(
            {"input_file_id": stored["id"], "endpoint": _CHAT, "completion_window": "24h"}, window_seconds=_DAY
        )
        batch.parts.append(str(created["id"]))
        batch.sizes.append(len(ids))
        batch.request_ids.extend(ids)
        return {}

    def render(self, batch: XaiBatch) -> JsonObject:
        """The batch as xAI shows it: its name, times and request counts, summed over its parts."""
        pending = success = error = cancelled = 0
        for part, total in zip(batch.parts, batch.sizes, strict=True):
            shown = self.retrieve_batch(part)
            status = shown.get("status")
            if status not in _ENDED:
                # A request counts as done only once its result can be read: the part's files are written at its
                # end (while it finalizes, every request may be done and none readable yet).
                pending += total
                continue
            counts = as_object(shown.get("request_counts")) or {}
            done, failed = (int(str(counts.get(key) or 0)) for key in ("completed", "failed"))
            success, error = success + done, error + failed
            if status == "cancelled":
                cancelled += total - done - failed
            elif status in ("expired", "failed"):
                error += total - done - failed
        return {
            "batch_id": batch.batch_id,
            "name": batch.name,
            "create_time": _when(batch.created_at),
            "expire_time": _when(batch.created_at + _DAY),
            "create_api_key_id": "emulated-key",
            "cancel_time": _when(batch.cancel_time),
            "state": {
                "num_requests": len(batch.request_ids),
                "num_pending": pending,
                "num_success": success,
                "num_error": error,
                "num_cancelled": cancelled,
            },
        }

    def show(self, batch_id: str) -> JsonObject:
        return self.render(self.named(batch_id))

    def list_named(self, params: dict[str, str]) -> JsonObject:
        newest = sorted(self.xai_batches.values(), key=lambda batch: batch.created_at, reverse=True)
        return _paged([self.render(batch) for batch in newest], "batches", params)

    def cancel_named(self, batch_id: str) -> JsonObject:
        batch = self.named(batch_id)
        if batch.cancel_time is None:
            batch.cancel_time = self.clock.now()
        for part in batch.parts:
            if self.retrieve_batch(part).get("status") in ("validating", "in_progress"):
                self.cancel_batch(part)
        return self.render(batch)

    def results(self, batch_id: str, params: dict[str, str]) -> JsonObject:
        """The results of the batch's ended parts, in the order their lines were written."""
        batch = self.named(batch_id)
        found: list[JsonObject] = []
        for part in batch.parts:
            shown = self.retrieve_batch(part)
            for key in ("output_file_id", "error_file_id"):
                file_id = shown.get(key)
                if isinstance(file_id, str) and file_id:
                    found.extend(_result(line) for line in b"".join(self.file_content(file_id)).splitlines() if line)
        return _paged(found, "results", params)

    def requests_of(self, batch_id: str, params: dict[str, str]) -> JsonObject:
        items: list[JsonObject] = [{"batch_request_id": rid} for rid in self.named(batch_id).request_ids]
        return _paged(items, "batch_request_metadata", params)


def _result(raw: bytes) -> JsonObject:
    """One line of an OpenAI output or error file as xAI's result."""
    line = as_object(json.loads(raw)) or {}
    custom_id = line.get("custom_id")
    response = as_object(line.get("response")) or {}
    body = as_object(response.get("body")) or {}
    if response.get("status_code") == 200:
        return {"batch_request_id": custom_id, "response": {"chat_get_completion": body}}
    error = as_object(line.get("error")) or as_object(body.get("error")) or {}
    return {"batch_request_id": custom_id, "error_message": str(error.get("message") or "The request failed.")}
