"""Webhooks out: a signed notice (Standard Webhooks) POSTed to the user's URL when a batch ends (`batch.ended`) or a
bulk run ends (`run.ended`), configured by `batch.notify`; a delivery not answered 2xx is tried again with backoff on
the actor's clock. A notice says what ended and how it came out: ids, states and counts, never a key, prompt or
answer."""

from __future__ import annotations

import asyncio
import logging
import os
import time
import uuid
from collections.abc import Mapping

import httpx
import orjson

from lowtide.batching.backend import RemoteBatch
from lowtide.config.settings import NotifySettings
from lowtide.core.clock import Clock
from lowtide.core.run_reports import RunReport
from lowtide.errors import ConfigurationError
from lowtide.ledger.records import BatchRecord
from lowtide.webhooks.signing import check_secret, signed_headers

__all__ = ["Notifier", "batch_notice", "notifier_for", "run_notice"]

_log = logging.getLogger("lowtide.webhooks.notify")


def batch_notice(record: BatchRecord, ended: RemoteBatch) -> dict[str, object]:
    """What a `batch.ended` notice says of the batch `record`, which the API said ended as `ended`."""
    return {
        "batch_id": record.id,
        "provider": record.provider,
        "provider_batch_id": ended.id,
        "status": ended.status,
        "requests": record.request_count,
        "counts": ended.counts.as_dict(),
    }


def run_notice(report: RunReport, actor: str) -> dict[str, object]:
    """What a `run.ended` notice says of a go at a bulk run, as its `report` sums it."""
    return {
        "run_id": report.run_id,
        "actor": actor,
        "mode": report.mode,
        "items": report.items,
        "counts": report.counts(),
        "cost_usd": str(report.cost_usd) if report.cost_usd is not None else None,
        "interrupted": report.interrupted,
    }


def notifier_for(
    settings: NotifySettings | None, clock: Clock, *, transport: httpx.AsyncBaseTransport | None = None
) -> Notifier | None:
    """The notifier `settings` configure (None: no notices). `ConfigurationError` when its secret's variable is not
    set or is not a `whsec_` secret."""
    if settings is None:
        return None
    secret = os.environ.get(settings.secret_env, "")
    try:
        check_secret(secret)
    except ValueError:
        raise ConfigurationError(
            f"batch.notify: set ${settings.secret_env} to the secret its notices are signed with: whsec_ and base64 "
            "(Standard Webhooks), as your receiver verifies them.",
            field="batch.notify",
        ) from None
    return Notifier(settings, secret, clock, transport=transport)


class Notifier:
    """Sends the notices of one actor. `send` returns once the notice is delivered or given up; `soon` sends it in
    the background (`drain` waits for those)."""

    def __init__(
        self,
        settings: NotifySettings,
        secret: str,
        clock: Clock,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._settings = settings
        self._secret = secret
        self._clock = clock
        self._transport = transport
        self._sending: set[asyncio.Task[bool]] = set()

    def soon(self, kind: str, data: Mapping[str, object]) -> None:
        """Send the notice in the background (a batch's end must not wait on the user's server)."""
        if kind not in self._settings.events:
            return
        task = asyncio.ensure_future(self.send(kind, data))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def drain(self) -> None:
        """Wait for the notices sent in the background."""
        while self._sending:
            await asyncio.gather(*list(self._sending), return_exceptions=True)

    async def send(self, kind: str, data: Mapping[str, object]) -> bool:
        """POST the notice `kind` (`batch.ended`, `run.ended`) about `data`, trying again `retries` times, `backoff`
        seconds after the first try and twice as long after each next; whether it was delivered."""
        settings = self._settings
        if kind not in settings.events:
            return False
        msg_id = f"msg_{uuid.uuid4().hex}"  # one per notice, on every try: the receiver's key for "seen it"
        body = orjson.dumps({"type": kind, "timestamp": self._clock.now(), "data": dict(data)})
        wait = settings.backoff
        for attempt in range(settings.retries + 1):
            if attempt:
                await self._clock.sleep(wait)
                wait *= 2
            # Signed with the wall clock's time: the receiver checks the moment against its own clock.
            headers = signed_headers(body, self._secret, msg_id=msg_id, at=time.time())
            try:
                async with httpx.AsyncClient(timeout=settings.timeout, transport=self._transport) as client:
                    answer = await client.post(settings.url, content=body, headers=headers)
            except httpx.HTTPError as error:
                _log.info("Notice %s (%s) not delivered: %s", msg_id, kind, type(error).__name__)
                continue
            if answer.is_success:
                return True
            _log.info("Notice %s (%s) answered %d", msg_id, kind, answer.status_code)
        _log.warning("Notice %s (%s) given up after %d tries.", msg_id, kind, settings.retries + 1)
        return False
