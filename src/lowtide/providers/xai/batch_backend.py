"""xAI's Batch API as a `BatchBackend`: a batch is created empty under a name (`POST /v1/batches`), its requests are
added to it (`POST /v1/batches/{id}/requests`, each `{batch_request_id, batch_request: {chat_get_completion: body}}`),
it reports request counts rather than a status (`state.num_pending`, ...), and its results are pages of
`{batch_request_id, response | error_message}` (`GET /v1/batches/{id}/results`), not files. Every shape, state and
id rule of it stays here; its result lines are handed on as OpenAI's output and error lines, which the dialect's
codec (`ChatBatchCodec`) reads.

Exactly-once: the batch is named from the intent, `lowtide-<intent id>-<request count>`, and its id is recorded as
the create's `batch` step before its requests are added, in one call. A create whose outcome is unknown is found by
listing the batches for that name (`finds_by_intent`), and is the intent's only once it holds every request the name
counts; an intent given up has its (empty) batch canceled, so a batch whose add never landed costs nothing.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import AsyncGenerator, Callable, Mapping
from datetime import datetime
from typing import Any

from lowtide import NotFoundError, RateLimitError
from lowtide.providers import (
    Counts,
    CreateSteps,
    Phase,
    RemoteBatch,
    ResultLine,
    UnreadableLine,
    json_object,
    json_objects,
)
from lowtide.providers.openai.codec import CANCELED_CODE
from lowtide.providers.openai_compatible.batch import ChatBatchCodec
from lowtide.providers.openai_compatible.json_batches import JsonBatchBackend
from lowtide.providers.xai.dialect import XAI
from lowtide.providers.xai.sdk import XAI_SDK

__all__ = ["BATCH_STEP", "XaiBatchBackend", "batch_name"]

log = logging.getLogger(__name__)

BATCH_STEP = "batch"
"""The create's step that records the named batch's id, before its requests are added."""
_NAME = re.compile(r"^lowtide-(.+)-([0-9]+)$")
_PAGE = 100


def batch_name(intent_id: str, count: int) -> str:
    """The name an intent's batch is created under: its intent id and how many requests it holds."""
    return f"lowtide-{intent_id}-{count}"


def _named(name: object) -> tuple[str | None, int]:
    matched = _NAME.match(name) if isinstance(name, str) else None
    return (matched.group(1), int(matched.group(2))) if matched else (None, 0)


def _epoch(moment: object) -> float | None:
    if not isinstance(moment, str) or not moment:
        return None
    return datetime.fromisoformat(moment.replace("Z", "+00:00")).timestamp()


def _count(state: Mapping[str, object], key: str) -> int:
    value = state.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def result_line(result: Mapping[str, object]) -> ResultLine | UnreadableLine:
    """One of xAI's results as OpenAI's output (an answer) or error line (an error message), by its
    `batch_request_id`."""
    custom_id = result.get("batch_request_id")
    if not isinstance(custom_id, str):
        return UnreadableLine(json.dumps(result).encode(), "a result without its batch_request_id")
    outcome = json_object(result.get("batch_result", result))
    answer = json_object(json_object(outcome.get("response")).get("chat_get_completion"))
    if answer:
        return {"custom_id": custom_id, "response": {"status_code": 200, "body": answer}}
    message = outcome.get("error_message")
    text = (
        message if isinstance(message, str) and message else "xAI answered the request with neither result nor error."
    )
    return {"custom_id": custom_id, "error": {"code": "xai_request_failed", "message": text}}


class XaiBatchBackend(JsonBatchBackend):
    """The Batch API through one `openai` client at xAI's base URL (its own retries off: lowtide decides what is
    retried)."""

    codec = ChatBatchCodec(XAI)
    sdk = XAI_SDK
    finds_by_intent = True
    input_step = BATCH_STEP
    list_page = _PAGE

    # The batch's life.

    async def create(self, body: bytes, count: int, *, intent_id: str, steps: CreateSteps) -> RemoteBatch:
        """Create the named batch, record its id, then add every request in one call."""
        requests = [_batch_request(json.loads(line)) for line in body.splitlines() if line.strip()]

        async def create() -> Mapping[str, object]:
            return await self._post("/batches", {"name": batch_name(intent_id, count)})

        # Retried only when refused outright (a rate limit): a create on doubt is reconciled, never blindly resent.
        made = await self._retrying(create, retry_on=(RateLimitError,))
        batch_id = str(made.get("batch_id") or "")
        await steps.done(BATCH_STEP, batch_id)
        await self._retrying(
            lambda: self._post(f"/batches/{batch_id}/requests", {"batch_requests": requests}),
            retry_on=(RateLimitError,),
        )
        log.info("Submitted xAI batch %s with %d request(s).", batch_id, count)
        return await self.retrieve(batch_id)

    def resumable(self, steps: Mapping[str, str]) -> bool:
        """Never: a batch's requests are sent with the add, not uploaded before it, so an intent whose add never
        landed is given up (its empty batch canceled) and its requests go in another batch."""
        return False

    async def _delete_input(self, uploaded: str) -> None:
        """An intent given up: its batch, empty unless its add landed unseen, is canceled so that nothing of it runs."""
        try:
            await self.cancel(uploaded)
        except NotFoundError:
            return

    async def find_by_intent(self, intent_id: str, *, created_after: float) -> RemoteBatch | None:
        """The batch named for the intent, once it holds every request the name counts (one whose add has not
        landed is not the intent's yet)."""
        for batch in await self.recent(created_after=created_after):
            if batch.intent_id == intent_id:
                _, count = _named(json_object(batch.handle).get("name"))
                if batch.counts.total == count:
                    return batch
        return None

    async def recent(self, *, created_after: float) -> list[RemoteBatch]:
        return await self._newest_since(self.listed, created_after)

    async def listed(self) -> AsyncGenerator[RemoteBatch, None]:
        """Every batch of the team, page after page, newest first."""
        async for page in self._pages("/batches", self.list_page):
            for raw in json_objects(page.get("batches")):
                yield self._remote(raw)

    async def retrieve(self, batch_id: str) -> RemoteBatch:
        return self._remote(await self._retrying(lambda: self._get(f"/batches/{batch_id}")))

    async def stream_results(
        self, batch: RemoteBatch, handle: Callable[[ResultLine | UnreadableLine], None], *, expected: int | None = None
    ) -> None:
        """The batch's results, page after page (each page retried on its own: a page is read again as it was)."""
        async for page in self._pages(f"/batches/{batch.id}/results", _PAGE):
            for result in json_objects(page.get("results")):
                handle(result_line(result))

    def unanswered_line(self, batch: RemoteBatch, custom_id: str) -> ResultLine | None:
        """A canceled batch's requests that never ran have no result."""
        if batch.cancel_requested:
            return {"custom_id": custom_id, "error": {"code": CANCELED_CODE, "message": "The batch was cancelled."}}
        return None

    async def cancel(self, batch_id: str) -> RemoteBatch:
        raw = await self._retrying(lambda: self._post(f"/batches/{batch_id}:cancel", {}))
        log.info("Cancellation of xAI batch %s requested.", batch_id)
        return self._remote(raw)

    async def finished(self, batch: RemoteBatch) -> None:
        """Nothing to delete: xAI keeps no uploaded input."""

    # Inside.

    def _remote(self, raw: Mapping[str, object]) -> RemoteBatch:
        """The neutral record of an xAI batch: ended once none of its requests is pending (a canceled one too)."""
        state = json_object(raw.get("state"))
        pending = _count(state, "num_pending")
        canceling = bool(raw.get("cancel_time"))
        held = _count(state, "num_requests")
        ended = pending == 0 and (held > 0 or canceling)
        counts = Counts(
            processing=pending,
            succeeded=_count(state, "num_success"),
            errored=_count(state, "num_error"),
            canceled=_count(state, "num_cancelled"),
        )
        created = _epoch(raw.get("create_time")) or 0.0
        intent_id, _ = _named(raw.get("name"))
        return RemoteBatch(
            id=str(raw.get("batch_id") or ""),
            phase=Phase.ENDED if ended else Phase.RUNNING,
            status=("cancelled" if canceling else "ended") if ended else ("cancelling" if canceling else "processing"),
            created_at=created,
            counts=counts,
            ended_at=(_epoch(raw.get("cancel_time")) or self._clock.now()) if ended else None,
            cancel_requested=canceling,
            intent_id=intent_id,
            handle=dict(raw),
        )

    async def _pages(self, path: str, size: int) -> AsyncGenerator[Mapping[str, object], None]:
        """The pages of a listing, each asked for by the token the one before gave (transient failures retried)."""
        token: str | None = None
        while True:
            params: dict[str, object] = {"limit": size, **({"pagination_token": token} if token else {})}
            page = await self._retrying(functools.partial(self._get, path, params))
            yield page
            given = page.get("pagination_token")
            if not isinstance(given, str) or not given:
                return
            token = given


def _batch_request(line: Mapping[str, Any]) -> dict[str, object]:
    """One line of the codec's input file (OpenAI's: `custom_id`, `body`) as the request xAI adds to a batch."""
    return {"batch_request_id": line["custom_id"], "batch_request": {"chat_get_completion": line["body"]}}
