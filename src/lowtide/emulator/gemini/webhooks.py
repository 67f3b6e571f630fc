"""The emulated Gemini API's batch webhooks, as the Gemini API sends a project's static (WebhookService) endpoints
them: when a job ends, `batch.succeeded`, `batch.failed`, `batch.cancelled` or `batch.expired`, a thin event
(`type`, `version`, `timestamp`, `data.id` the job's name, a failure's `error_code` and `error_message`), the
Standard Webhooks `webhook-id` its event id (`lowtide.emulator.core.webhooks`). A job created with its own
`webhook_config` sends the same event to its `uris` too, `data.user_metadata` echoing the job's, signed with the
emulator's RS256 key (`job_tokens`)."""

from __future__ import annotations

from collections.abc import Callable

from lowtide.core.clock import Clock
from lowtide.emulator.core.webhooks import WebhookSender
from lowtide.emulator.gemini.batches import BatchState, GeminiBatch
from lowtide.emulator.gemini.names import timestamp

__all__ = ["GeminiWebhookEvents", "gemini_webhooks"]

_EVENTS: dict[BatchState, str] = {
    "BATCH_STATE_SUCCEEDED": "batch.succeeded",
    "BATCH_STATE_FAILED": "batch.failed",
    "BATCH_STATE_CANCELLED": "batch.cancelled",
    "BATCH_STATE_EXPIRED": "batch.expired",
}


class GeminiWebhookEvents:
    """The Gemini API's batch events, of the jobs `find` finds."""

    user_agent = "Google-Gemini-Webhooks/1.0"

    def __init__(self, clock: Clock, find: Callable[[str], GeminiBatch]) -> None:
        self._clock = clock
        self._find = find

    def ended_at(self, batch_id: str) -> float:
        return self._find(batch_id).ended_at

    def event(self, batch_id: str) -> dict[str, object]:
        batch = self._find(batch_id)
        data: dict[str, object] = {"id": batch.name}
        if batch.failure is not None:
            data["error_code"] = batch.failure["code"]
            data["error_message"] = batch.failure["message"]
        if batch.user_metadata is not None:
            data["user_metadata"] = batch.user_metadata
        return {
            "type": _EVENTS[batch.final_state()],
            "version": "v1",
            "timestamp": timestamp(self._clock.now()),
            "data": data,
        }

    def job_uris(self, batch_id: str) -> tuple[str, ...]:
        return self._find(batch_id).webhook_uris

    def sent(self, batch_id: str) -> None:
        self._find(batch_id).webhooks_sent = True


def gemini_webhooks(clock: Clock, find: Callable[[str], GeminiBatch]) -> WebhookSender:
    """The sender of the Gemini API's batch webhooks for the jobs `find` finds."""
    return WebhookSender(clock, GeminiWebhookEvents(clock, find))
