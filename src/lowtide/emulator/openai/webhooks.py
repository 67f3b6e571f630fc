"""The emulated OpenAI account's batch webhooks: when a batch ends, `batch.completed`, `batch.failed`,
`batch.expired` or `batch.cancelled`, its `id` an event id and its `data.id` the batch's, sent as OpenAI sends them
(`lowtide.emulator.core.webhooks`)."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from lowtide.core.clock import Clock
from lowtide.emulator.core.webhooks import WebhookSender
from lowtide.emulator.openai.batches import BatchStatus, OpenAIBatch

__all__ = ["OpenAIWebhookEvents", "openai_webhooks"]

_EVENTS: dict[BatchStatus, str] = {
    "completed": "batch.completed",
    "failed": "batch.failed",
    "expired": "batch.expired",
    "cancelled": "batch.cancelled",
}


class OpenAIWebhookEvents:
    """OpenAI's batch events, of the batches `find` finds."""

    user_agent = "OpenAI/1.0 (+https://platform.openai.com/docs/webhooks)"

    def __init__(self, clock: Clock, find: Callable[[str], OpenAIBatch]) -> None:
        self._clock = clock
        self._find = find

    def ended_at(self, batch_id: str) -> float:
        return self._find(batch_id).ended_at

    def event(self, batch_id: str) -> dict[str, object]:
        return {
            "id": f"evt_{uuid.uuid4().hex}",
            "object": "event",
            "created_at": int(self._clock.now()),
            "type": _EVENTS[self._find(batch_id).final_status()],
            "data": {"id": batch_id},
        }

    def job_uris(self, batch_id: str) -> tuple[str, ...]:
        """None: OpenAI's batches send their ends to the project's endpoints alone."""
        return ()

    def sent(self, batch_id: str) -> None:
        return


def openai_webhooks(clock: Clock, find: Callable[[str], OpenAIBatch]) -> WebhookSender:
    """The sender of OpenAI's batch webhooks for the batches `find` finds."""
    return WebhookSender(clock, OpenAIWebhookEvents(clock, find))
