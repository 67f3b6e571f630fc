"""What a provider hands the neutral receiver of a webhook it verified (`BatchEvent`), or the refusal it raises
(`WebhookRefused`), through its `Provider.webhook_verifier`: nothing outside the provider reads an event's shape."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

__all__ = ["DEFAULT_TOLERANCE", "LEDGER_METADATA", "BatchEvent", "WebhookRefused", "WebhookVerifier"]

LEDGER_METADATA = "lowtide_ledger"
"""The key under which a batch created with a webhook of its own carries the identity of its ledger, in metadata the
provider echoes in the batch's events (Gemini's `webhook_config.user_metadata`)."""

DEFAULT_TOLERANCE = 300.0
"""Seconds a webhook's signed moment may be from now, either way, before it is refused as stale (OpenAI's and the
Standard Webhooks' own default)."""


@dataclass(frozen=True, slots=True)
class BatchEvent:
    """A verified event saying that a batch of the provider's ended (completed, failed, expired or cancelled)."""

    event_id: str
    """The provider's id of the event, the same on each delivery of it."""
    delivery: str
    """What tells one delivery from another: the moment it was signed. The same event and moment twice is a replay."""
    provider_batch_id: str
    kind: str
    """The provider's name of what happened (`batch.completed`), for the log."""
    ledger: str | None = None
    """The identity of the ledger whose batch it is, where the batch carries it back in its event (`LEDGER_METADATA`
    in metadata a batch's own webhook echoes): another ledger's event is ignored. None: not said (looked up)."""


class WebhookRefused(Exception):
    """A webhook that is not to be believed or not to be read: unsigned, wrongly signed, stale, not what it says.
    `status` is what the receiver answers (401: its signature; 400: the rest); the message never holds the body."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class WebhookVerifier(Protocol):
    """A provider's reading of its own webhooks."""

    @property
    def names(self) -> str:
        """Where the secret comes from (an environment variable's name), for the server's first line."""
        ...

    def verify(self, body: bytes, headers: Mapping[str, str], *, tolerance: float) -> BatchEvent | None:
        """The batch event `body` carries, once its signature (with `headers`) is verified and its signed moment is
        within `tolerance` seconds of now; None for a verified event of another kind (not a batch's end). Raises
        `WebhookRefused` for anything else. Called on the event loop, or in a thread where the verifier has a
        `may_block(headers) -> bool` that says a request's check may block (its keys read over the network)."""
        ...
