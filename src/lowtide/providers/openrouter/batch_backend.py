"""OpenRouter's Batch API as a `BatchBackend`: one `POST /batches` holds every request inline (`endpoint` and `model`
before `requests`, each `{custom_id, body}`), answered `202` with `status: "validating"`; `GET /batches/{id}` reports
its status and `request_counts`, and, once it is terminal, its `results` (each `{custom_id, response: {status_code,
body}}` or `{custom_id, error: {message}}`); `GET /batches` lists the workspace's batches newest first (`after` the
previous page's `last_id`), without their results. Every shape and status name of it stays here; its results are
handed on as OpenAI's output and error lines, which the dialect's codec (`ChatBatchCodec`) reads.

Exactly-once: OpenRouter keeps no metadata and takes no idempotency key or client-chosen id, so a create whose answer
was lost is reconciled as Anthropic's is (`batching/reconcile.py`): by the listing (a batch created since the intent,
of as many requests, that no ledger record has claimed) and, where more than one intent or batch could match, by the
custom ids in the ended candidates' results, which name lowtide's requests and ledger (`first_custom_id`). A create is
never sent again while a batch that may hold its requests is listed.

OpenRouter has no cancel (its API deletes only a batch that has ended): `cancel` is refused, saying so, and the batch
runs until it ends, its answers collected as any others."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any

from lowtide import InvalidRequestError, RateLimitError
from lowtide.providers import (
    Counts,
    CreateSteps,
    EndedAs,
    Phase,
    RemoteBatch,
    ResultLine,
    UnreadableLine,
    ended_counts,
    json_object,
    json_objects,
)
from lowtide.providers.openai.codec import CANCELED_CODE
from lowtide.providers.openai_compatible.batch import ChatBatchCodec
from lowtide.providers.openai_compatible.json_batches import JsonBatchBackend
from lowtide.providers.openrouter.dialect import OPENROUTER
from lowtide.providers.openrouter.live import OPENROUTER_SDK

__all__ = ["OpenRouterBatchBackend", "result_line"]

log = logging.getLogger(__name__)

_CHAT = "/v1/chat/completions"
_PAGE = 100
_ENDED: Mapping[str, EndedAs] = {
    "completed": "succeeded",
    "failed": "failed",
    "expired": "expired",
    "cancelled": "canceled",
}
"""Every other status (validating, in_progress, finalizing, cancelling) is running."""
_FAILED_CODE = "batch_failed"
_EXPIRED_CODE = "batch_expired"


def _count(counts: Mapping[str, object], key: str) -> int:
    value = counts.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _epoch(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def result_line(result: Mapping[str, object]) -> ResultLine | UnreadableLine:
    """One of OpenRouter's results as OpenAI's output line (an answer) or error line, by its `custom_id`."""
    custom_id = result.get("custom_id")
    if not isinstance(custom_id, str):
        return UnreadableLine(json.dumps(result).encode(), "a result without its custom_id")
    response = json_object(result.get("response"))
    body = json_object(response.get("body"))
    if body and response.get("status_code") in (200, None) and not result.get("error"):
        return {"custom_id": custom_id, "response": {"status_code": 200, "body": dict(body)}}
    error = json_object(result.get("error")) or json_object(body.get("error"))
    message = error.get("message")
    text = message if isinstance(message, str) and message else "OpenRouter answered the request with an error."
    code = str(error.get("type") or "openrouter_request_failed")
    return {"custom_id": custom_id, "error": {"code": code, "message": text}}


class OpenRouterBatchBackend(JsonBatchBackend):
    """The Batch API through one `openai` client at OpenRouter's base URL (its own retries off: lowtide decides what
    is retried)."""

    codec = ChatBatchCodec(OPENROUTER)
    sdk = OPENROUTER_SDK
    list_page = _PAGE

    # The batch's life.

    async def create(self, body: bytes, count: int, *, intent_id: str, steps: CreateSteps) -> RemoteBatch:
        """Every request inline in one create (the endpoint and model first, as OpenRouter reads them before the
        requests)."""
        lines = [json.loads(line) for line in body.splitlines() if line.strip()]
        model = str(lines[0]["body"].get("model", "")) if lines else ""
        submitted = {
            "endpoint": _CHAT,
            "model": model,
            "completion_window": "24h",
            "requests": [_request(line) for line in lines],
        }
        # Retried only when refused outright (a rate limit): a create on doubt is reconciled, never blindly resent.
        made = await self._retrying(lambda: self._post("/batches", submitted), retry_on=(RateLimitError,))
        batch = self._remote(made)
        log.info("Submitted OpenRouter batch %s with %d request(s).", batch.id, count)
        return batch

    async def recent(self, *, created_after: float) -> list[RemoteBatch]:
        return await self._newest_since(self.listed, created_after)

    async def listed(self) -> AsyncGenerator[RemoteBatch, None]:
        """Every batch of the key's workspace, page after page, newest first (without their results)."""
        after: str | None = None
        while True:
            params: dict[str, object] = {"limit": self.list_page, **({"after": after} if after else {})}
            page = await self._retrying(functools.partial(self._get, "/batches", params))
            for raw in json_objects(page.get("data")):
                yield self._remote(raw)
            last = page.get("last_id")
            if not page.get("has_more") or not isinstance(last, str) or not last:
                return
            after = last

    async def retrieve(self, batch_id: str) -> RemoteBatch:
        return self._remote(await self._retrying(lambda: self._get(f"/batches/{batch_id}")))

    async def stream_results(
        self, batch: RemoteBatch, handle: Callable[[ResultLine | UnreadableLine], None], *, expected: int | None = None
    ) -> None:
        """The ended batch's results, as its own record holds them (read again when it was listed without them)."""
        for result in await self._results(batch):
            handle(result_line(result))

    async def first_custom_id(self, batch: RemoteBatch) -> str | None:
        """The custom id of the ended batch's first result: whose batch it is."""
        for result in await self._results(batch):
            custom_id = result.get("custom_id")
            if isinstance(custom_id, str):
                return custom_id
        return None

    def unanswered_line(self, batch: RemoteBatch, custom_id: str) -> ResultLine | None:
        """A batch that failed, expired or was cancelled (in OpenRouter's dashboard) leaves out what it did not run."""
        if batch.status == "cancelled":
            return {"custom_id": custom_id, "error": {"code": CANCELED_CODE, "message": "The batch was cancelled."}}
        if batch.status == "expired":
            return {"custom_id": custom_id, "error": {"code": _EXPIRED_CODE, "message": "The batch expired first."}}
        if batch.status == "failed":
            reason = json_object(json_object(batch.handle).get("error")).get("message")
            text = reason if isinstance(reason, str) and reason else "The batch failed."
            return {"custom_id": custom_id, "error": {"code": _FAILED_CODE, "message": text}}
        return None

    async def cancel(self, batch_id: str) -> RemoteBatch:
        """Refused: OpenRouter's Batch API has no cancel."""
        raise InvalidRequestError(
            f"OpenRouter's Batch API has no cancel: batch {batch_id} runs until it ends (within its 24-hour window), "
            "and its answers are collected and paid for as any others. Nothing was changed."
        )

    async def finished(self, batch: RemoteBatch) -> None:
        """Nothing to delete: the requests were sent inline, and the batch's results stay listed for a rebuild."""

    # Inside.

    async def _results(self, batch: RemoteBatch) -> list[Mapping[str, object]]:
        raw = json_object(batch.handle)
        if "results" not in raw:
            raw = await self._retrying(lambda: self._get(f"/batches/{batch.id}"))
        return list(json_objects(raw.get("results")))

    def _remote(self, raw: Mapping[str, object]) -> RemoteBatch:
        """The neutral record of an OpenRouter batch: its status, and its counts from `request_counts`."""
        status = str(raw.get("status") or "validating")
        counts = json_object(raw.get("request_counts"))
        total, done, failed = (_count(counts, key) for key in ("total", "completed", "failed"))
        rest = max(total - done - failed, 0)
        ended_as = _ENDED.get(status)
        if ended_as is None:
            phase = Phase.CANCELING if status == "cancelling" else Phase.RUNNING
            tally = Counts(processing=rest, succeeded=done, errored=failed)
        else:
            phase = Phase.ENDED
            tally = ended_counts(ended_as, succeeded=done, errored=failed, rest=rest)
        created = _epoch(raw.get("created_at")) or 0.0
        return RemoteBatch(
            id=str(raw.get("id") or ""),
            phase=phase,
            status=status,
            created_at=created,
            counts=tally,
            ended_at=(_epoch(raw.get("finalized_at")) or self._clock.now()) if phase is Phase.ENDED else None,
            cancel_requested=status in ("cancelling", "cancelled"),
            handle=dict(raw),
        )


def _request(line: Mapping[str, Any]) -> dict[str, object]:
    """One line of the codec's input file (OpenAI's: `custom_id`, `body`) as a request of OpenRouter's batch."""
    return {"custom_id": line["custom_id"], "body": line["body"]}
