"""OpenRouter's Batch API in the emulator, free of HTTP: a batch's inline requests (`POST /api/v1/batches`: `endpoint`,
`model`, `completion_window`, `requests` of `{custom_id, body}`) run as one of OpenAI's batches underneath (an input
file made of them, on the emulator's clock and faults), whose id is the batch's; `GET /batches/{id}` shows it in
OpenRouter's shape (`request_counts`, and once it is terminal its `results`), `GET /batches` lists them newest first
(`limit`, `after` the previous page's `last_id`), without results. Raises `OpenAIError` (OpenRouter's error bodies are
`{"error": {...}}`, as the `openai` SDK reads them).

The emulator's reading, where OpenRouter's reference is silent: a result is `{custom_id, id, response: {status_code,
body, request_id}}` for an answer, `{custom_id, id, error: {message, type, param}}` for a request the provider refused;
a batch failed as a whole gives its reason in `error.message` and no results; only `/v1/chat/completions` batches are
emulated; a custom id given twice in one batch is refused (400). OpenRouter documents no cancel route: none is
served."""

from __future__ import annotations

import json
from typing import cast

from lowtide.emulator.core.jsonutil import JsonObject, as_object
from lowtide.emulator.openai.checks import require_object
from lowtide.emulator.openai.compat import CompatBackend
from lowtide.emulator.openai.errors import OpenAIError

__all__ = ["OpenRouterBatches"]

_CHAT = "/v1/chat/completions"
_DAY = 24 * 3600.0
_MOST_REQUESTS = 5_000
_TERMINAL = ("completed", "failed", "expired", "cancelled")
_ENDED_AT = ("completed_at", "failed_at", "expired_at", "cancelled_at")


class OpenRouterBatches:
    """The emulated workspace's batches, each one of `backend`'s (OpenAI's) batches underneath."""

    def __init__(self, backend: CompatBackend) -> None:
        self._backend = backend

    def submit(self, body: object) -> JsonObject:
        """A batch of the requests given inline, created at once (its create answers it validating)."""
        params = require_object(body)
        endpoint, model, requests = params.get("endpoint"), params.get("model"), params.get("requests")
        if endpoint != _CHAT:
            message = f"Invalid 'endpoint': {endpoint!r}. The emulator serves {_CHAT!r} batches."
            raise OpenAIError(400, message, param="endpoint")
        if not isinstance(model, str) or not model:
            raise OpenAIError(400, "Missing required parameter: 'model'.", param="model")
        if not isinstance(requests, list) or not requests:
            raise OpenAIError(400, "Missing required parameter: 'requests'.", param="requests")
        given = cast("list[object]", requests)
        if len(given) > _MOST_REQUESTS:
            message = f"A batch holds at most {_MOST_REQUESTS} requests; {len(given)} were given."
            raise OpenAIError(400, message, param="requests")
        lines: list[bytes] = []
        seen: set[str] = set()
        for index, item in enumerate(given):
            entry = as_object(item) or {}
            custom_id, request = entry.get("custom_id"), as_object(entry.get("body"))
            where = f"requests[{index}]"
            if not isinstance(custom_id, str) or not custom_id:
                raise OpenAIError(400, f"Missing required parameter: '{where}.custom_id'.", param=where)
            if custom_id in seen:
                raise OpenAIError(400, f"{where}: custom_id {custom_id!r} is in the batch already.", param=where)
            if request is None:
                raise OpenAIError(400, f"Missing required parameter: '{where}.body'.", param=where)
            seen.add(custom_id)
            line = {"custom_id": custom_id, "method": "POST", "url": _CHAT, "body": {**request, "model": model}}
            lines.append(json.dumps(line).encode())
        stored = self._backend.upload("openrouter-batch.jsonl", b"\n".join(lines), "batch", None)
        created = self._backend.create_compat_batch(
            {"input_file_id": stored["id"], "endpoint": _CHAT, "completion_window": "24h"}, window_seconds=_DAY
        )
        return self.render(created, model=model, results=False)

    def show(self, batch_id: str) -> JsonObject:
        shown = self._backend.retrieve_batch(batch_id)
        return self.render(shown, model=str(shown.get("model") or ""), results=True)

    def listing(self, params: dict[str, str]) -> JsonObject:
        page = self._backend.list_batches(after=params.get("after"), limit=params.get("limit"))
        listed = (as_object(item) or {} for item in cast("list[object]", page.get("data") or []))
        data = [self.render(dict(raw), model=str(raw.get("model") or ""), results=False) for raw in listed]
        return {**page, "data": cast("list[object]", data)}

    def render(self, batch: JsonObject, *, model: str, results: bool) -> JsonObject:
        """OpenAI's batch as OpenRouter shows it: its status, counts and times, its reason when it failed, and, when
        asked for and terminal, its results."""
        status = str(batch.get("status") or "validating")
        counts = as_object(batch.get("request_counts")) or {}
        errors = as_object(batch.get("errors")) or {}
        first = next((as_object(item) for item in cast("list[object]", errors.get("data") or [])), None) or {}
        ended = next((batch.get(key) for key in _ENDED_AT if batch.get(key) is not None), None)
        shown: JsonObject = {
            "id": batch["id"],
            "object": "batch",
            "endpoint": _CHAT,
            "model": model,
            "completion_window": "24h",
            "status": status,
            "provider": "emulated",
            "created_at": batch.get("created_at"),
            "expires_at": batch.get("expires_at"),
            "finalized_at": ended,
            "request_counts": {key: counts.get(key, 0) for key in ("total", "completed", "failed")},
            "error": {"message": str(first.get("message") or "The batch failed.")} if status == "failed" else None,
            "usage": None,
        }
        if results and status in _TERMINAL:
            shown["results"] = cast("list[object]", self._results(batch))
        return shown

    def _results(self, batch: JsonObject) -> list[JsonObject]:
        found: list[JsonObject] = []
        for key in ("output_file_id", "error_file_id"):
            file_id = batch.get(key)
            if isinstance(file_id, str) and file_id:
                content = b"".join(self._backend.file_content(file_id))
                found.extend(_result(raw) for raw in content.splitlines() if raw.strip())
        return found


def _result(raw: bytes) -> JsonObject:
    """One line of an OpenAI output or error file as one of OpenRouter's results."""
    line = as_object(json.loads(raw)) or {}
    response = as_object(line.get("response")) or {}
    body = as_object(response.get("body")) or {}
    result: JsonObject = {"custom_id": line.get("custom_id"), "id": line.get("id")}
    if response.get("status_code") == 200:
        result["response"] = {"status_code": 200, "body": body, "request_id": response.get("request_id")}
        return result
    error = as_object(line.get("error")) or as_object(body.get("error")) or {}
    result["error"] = {
        "message": str(error.get("message") or "The request failed."),
        "type": str(error.get("type") or error.get("code") or "invalid_request_error"),
        "param": error.get("param"),
    }
    return result
