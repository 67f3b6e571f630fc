"""An emulated API's batch webhooks (Standard Webhooks, as OpenAI and the Gemini API send them): when a batch ends (on
the emulator's clock) its event is POSTed to each endpoint configured, signed with the endpoint's `whsec_` secret
(`webhook-id`, `webhook-timestamp`, `webhook-signature` over `id.timestamp.body` with HMAC-SHA256), retried with
backoff until answered 2xx. The API's emulation says when a batch ends and what its event says (`WebhookEvents`), and
where a batch created with its own webhooks (Gemini's `webhook_config`) sends its end besides: those deliveries are
signed with the emulator's own RS256 key instead (`job_tokens.JobTokens`, its JWKS served by the admin routes)."""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from lowtide.core.clock import Clock
from lowtide.emulator.core.job_tokens import JobTokens
from lowtide.webhooks.signing import check_secret, signed_headers

if TYPE_CHECKING:
    import httpx

__all__ = ["RETRY_BACKOFF", "WebhookEndpoint", "WebhookEvents", "WebhookSender"]

RETRY_BACKOFF = (1.0, 2.0, 4.0, 8.0, 16.0)
"""Seconds (on the emulator's clock) before each new try of a delivery not answered 2xx: six tries in all. The APIs
retry for a day or three; an emulator's receiver is up within seconds or not at all."""

_log = logging.getLogger("lowtide.emulator.webhooks")


class WebhookEvents(Protocol):
    """What one API's webhooks say: when a batch ends, and the event its end is (built when it comes)."""

    user_agent: str

    def ended_at(self, batch_id: str) -> float:
        """When (on the emulator's clock) the batch `batch_id` ends, as things stand."""
        ...

    def event(self, batch_id: str) -> dict[str, object]:
        """The event the API sends when the batch `batch_id` has ended."""
        ...

    def job_uris(self, batch_id: str) -> Sequence[str]:
        """The URLs the batch `batch_id` was created to send its end to, besides the account's endpoints."""
        ...

    def sent(self, batch_id: str) -> None:
        """The end of the batch `batch_id` was sent (every delivery answered 2xx, or given up)."""
        ...


@dataclass(frozen=True)
class WebhookEndpoint:
    """Where the account's batch events go, and the secret (`whsec_<base64>`) they are signed with; `transport`
    reaches `url` without a socket (a receiver in the same process), by default the network."""

    url: str
    secret: str = field(repr=False)
    transport: httpx.AsyncBaseTransport | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise ValueError(f"a webhook endpoint is an http(s) URL, not {self.url!r}")
        check_secret(self.secret)


_Signer = Callable[[str, float], dict[str, str]]
"""The headers of one try of a delivery: its `webhook-id` and the Unix time it is signed at."""


def _hmac_signer(body: bytes, secret: str, agent: str) -> _Signer:
    def sign(msg_id: str, at: float) -> dict[str, str]:
        return {**signed_headers(body, secret, msg_id=msg_id, at=at), "user-agent": agent}

    return sign


def _jwt_signer(tokens: JobTokens, uri: str, agent: str) -> _Signer:
    def sign(msg_id: str, at: float) -> dict[str, str]:
        return {**tokens.headers(msg_id=msg_id, at=at, audience=uri), "user-agent": agent}

    return sign


class WebhookSender:
    """Sends each batch's end to the configured endpoints, once per endpoint (a delivery retried until answered 2xx
    carries the same event and `webhook-id`, signed again), on the emulator's clock. `drop_next(n)` loses the next `n`
    deliveries (a fault: the event is never sent); `sent` counts the deliveries answered 2xx."""

    def __init__(self, clock: Clock, events: WebhookEvents) -> None:
        self._clock = clock
        self._events = events
        self.endpoints: list[WebhookEndpoint] = []
        self.sent = 0
        self._dropping = 0
        self._watching: dict[str, asyncio.Task[None]] = {}
        self._resuming: list[str] = []
        """Batches given to `watch` with no event loop running (restored from the state file): watched by `resume`."""
        self.tokens = JobTokens()
        """The key per-job deliveries are signed with."""

    def add(self, url: str, secret: str, *, transport: httpx.AsyncBaseTransport | None = None) -> WebhookEndpoint:
        """Send every batch's end to `url` from now on, signed with `secret`; ValueError for a bad one."""
        endpoint = WebhookEndpoint(url, secret, transport)
        self.endpoints.append(endpoint)
        return endpoint

    def drop_next(self, times: int = 1) -> None:
        self._dropping += times

    def reset(self) -> None:
        """Forget the batches watched and the counts; the endpoints stay (the emulator's command line set them)."""
        for task in self._watching.values():
            task.cancel()
        self._watching.clear()
        self._resuming.clear()
        self.sent = 0
        self._dropping = 0

    def watch(self, batch_id: str) -> None:
        """Send `batch_id`'s end when it comes (again from its start after a cancel, which moves its end); with no event
        loop running (a batch restored from the state file as the emulator starts), once `resume` is called on one."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self._resuming.append(batch_id)
            return
        if not self.endpoints and not self._events.job_uris(batch_id):
            return
        running = self._watching.pop(batch_id, None)
        if running is not None:
            running.cancel()
        task = asyncio.ensure_future(self._deliver_at_end(batch_id))
        self._watching[batch_id] = task
        task.add_done_callback(lambda done: self._watching.pop(batch_id, None) if done is task else None)

    def resume(self) -> None:
        """Watch, on the running event loop, the batches `watch` was given before one ran: a restarted emulator still
        sends the end of each batch open when it stopped, to the endpoints and to the batch's own URLs."""
        waiting, self._resuming = self._resuming, []
        for batch_id in waiting:
            self.watch(batch_id)

    async def _deliver_at_end(self, batch_id: str) -> None:
        while (wait := self._events.ended_at(batch_id) - self._clock.now()) > 0:
            await self._clock.sleep(wait)
        event = self._events.event(batch_id)
        body = json.dumps(event, separators=(",", ":")).encode()
        kind, agent = str(event.get("type")), self._events.user_agent
        await asyncio.gather(
            *(self._deliver(e.url, kind, body, e.transport, _hmac_signer(body, e.secret, agent))
              for e in self.endpoints),
            *(self._deliver(uri, kind, body, None, _jwt_signer(self.tokens, uri, agent))
              for uri in self._events.job_uris(batch_id)),
        )  # fmt: skip
        self._events.sent(batch_id)

    async def _deliver(
        self,
        url: str,
        kind: str,
        body: bytes,
        transport: httpx.AsyncBaseTransport | None,
        sign: _Signer,
    ) -> None:
        msg_id = f"wh_{uuid.uuid4().hex}"  # one per event and endpoint, as Standard Webhooks' `webhook-id` is
        if self._dropping > 0:
            self._dropping -= 1
            _log.info("Dropped the webhook %s (%s) for %s: a fault.", msg_id, kind, url)
            return
        import httpx  # here: an emulator with no endpoint loads no HTTP client (httpx's import loads its CLI's rich)

        for wait in (0.0, *RETRY_BACKOFF):
            if wait:
                await self._clock.sleep(wait)
            # Signed with the wall clock's time, whatever the emulator's clock says: receivers check against theirs.
            headers = sign(msg_id, time.time())
            try:
                # A client per try: the emulator may serve several event loops in turn (a test's each), never two.
                async with httpx.AsyncClient(timeout=10.0, transport=transport) as client:
                    answer = await client.post(url, content=body, headers=headers)
            except httpx.HTTPError as error:
                _log.info("Webhook %s (%s) to %s not delivered: %s", msg_id, kind, url, type(error).__name__)
                continue
            if answer.is_success:
                self.sent += 1
                return
            _log.info("Webhook %s (%s) to %s answered %d", msg_id, kind, url, answer.status_code)
        _log.warning("Webhook %s (%s) to %s given up after %d tries.", msg_id, kind, url,
                     len(RETRY_BACKOFF) + 1)  # fmt: skip
