"""Webhooks out: a signed notice (Standard Webhooks) POSTed to the user's URL when a batch ends (`batch.ended`), a key's
answer is stored from its batch (`key.answered`, when named), or a bulk run ends (`run.ended`), configured by
`batch.notify`. A notice says what ended and how it came out: ids, states and counts, never a prompt or answer, and a
key only when `include_keys` asks (else its SHA-256).

A notice is kept in the ledger's outbox (`roles.Outbox`) before its first try, once by its event id (derived from what
it tells, so a batch collected again tells nothing again): the process that made it tries it `retries` more times
with backoff on the actor's clock, and a notice still not taken is left there, to be tried again by whichever process
sweeps the outbox next (`sweep`: every engine with `batch.notify` set, while it runs) until `deliver_for` after it was
made. Every try of a notice carries the same `webhook-id`: a receiver that keeps the ids it took takes it once."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import time
import uuid
from collections.abc import Callable, Mapping

import httpx
import orjson

from lowtide.batching.backend import RemoteBatch
from lowtide.batching.wakeups import sleep_or_woken
from lowtide.config.settings import NotifySettings
from lowtide.core.clock import Clock
from lowtide.core.run_reports import RunReport, format_duration
from lowtide.errors import ConfigurationError
from lowtide.ledger.aio_roles import AsyncOutbox
from lowtide.ledger.outbox_records import Notice
from lowtide.ledger.records import BatchRecord, KeyState
from lowtide.webhooks.signing import check_secret, signed_headers

__all__ = ["SWEEP_SECONDS", "Notifier", "batch_notice", "deliver_due", "key_notice", "notifier_for", "run_notice"]

_log = logging.getLogger("lowtide.webhooks.notify")

SWEEP_SECONDS = 60.0
"""How often an engine with `batch.notify` looks for notices due in its ledger's outbox."""
_SWEEP_BACKOFF_CAP = 3600.0
"""A swept notice's next try comes at most an hour after its last."""
_SWEEP_BATCH = 50
"""The most notices one sweep claims at once."""


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


def key_notice(state: KeyState, record: BatchRecord, *, include_key: bool) -> dict[str, object]:
    """What a `key.answered` notice says of the key `state` names, answered from the batch `record`: the key's SHA-256
    (the key too with `include_key`), how it was answered, and the batch."""
    data: dict[str, object] = {
        "key_sha256": hashlib.sha256(state.key.encode()).hexdigest(),
        "state": state.state.value,
        "batch_id": record.id,
        "provider": record.provider,
        "provider_batch_id": record.provider_batch_id,
    }
    if include_key:
        data["key"] = state.key
    return data


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
    settings: NotifySettings | None,
    clock: Clock,
    *,
    outbox: AsyncOutbox | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> Notifier | None:
    """The notifier `settings` configure (None: no notices), keeping its notices in `outbox` (a ledger's) when given.
    `ConfigurationError` when its secret's variable is not set or is not a `whsec_` secret."""
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
    return Notifier(settings, secret, clock, outbox=outbox, transport=transport)


def event_id(kind: str, subject: str) -> str:
    """The `webhook-id` of the notice `kind` about `subject` (a ledger's batch id, a run's go): the same from every
    process that would tell it."""
    return "msg_" + hashlib.sha256(f"lowtide-notice\n{kind}\n{subject}".encode()).hexdigest()[:32]


async def post(notice: Notice, secret: str, *, seconds: float, transport: httpx.AsyncBaseTransport | None) -> bool:
    """One try of `notice`, signed with `secret` at this moment: whether the receiver took it (answered 2xx)."""
    # Signed with the wall clock's time: the receiver checks the moment against its own clock.
    headers = signed_headers(notice.body, secret, msg_id=notice.event_id, at=time.time())
    try:
        async with httpx.AsyncClient(timeout=seconds, transport=transport) as client:
            answer = await client.post(notice.url, content=notice.body, headers=headers)
    except httpx.HTTPError as error:
        _log.info("Notice %s (%s) not delivered: %s", notice.event_id, notice.kind, type(error).__name__)
        return False
    if answer.is_success:
        return True
    _log.info("Notice %s (%s) answered %d", notice.event_id, notice.kind, answer.status_code)
    return False


async def deliver_due(
    outbox: AsyncOutbox,
    clock: Clock,
    *,
    owner: str,
    seconds: float = 10.0,
    secret_of: Callable[[str], str | None] = os.environ.get,
    transport: httpx.AsyncBaseTransport | None = None,
) -> int:
    """Try once each notice of `outbox` that is due (claimed for `owner` while it is tried), signed with the secret
    its variable holds here (`secret_of`), each try `seconds` at most; a notice not taken is due again after twice
    its last wait (at most an hour), or given up past its `give_up_at`. How many were delivered."""
    now = clock.now()
    due = await outbox.due_notices(owner=owner, now=now, until=now + seconds * 2 * _SWEEP_BATCH, limit=_SWEEP_BATCH)
    delivered = 0
    for notice in due:
        if clock.now() > notice.give_up_at:  # left too long (no process swept it): given up untried
            _log.warning("Notice %s (%s) given up after %d tries: not taken within its time.", notice.event_id,
                         notice.kind, notice.tries)  # fmt: skip
            await outbox.notice_tried(notice.event_id, owner=owner, now=clock.now(), tries=0, delivered=False,
                                      next_at=None)  # fmt: skip
            continue
        secret = secret_of(notice.secret_env) or ""
        try:
            check_secret(secret)
        except ValueError:
            _log.warning("Notice %s (%s) not tried: $%s does not hold its secret here.", notice.event_id,
                         notice.kind, notice.secret_env)  # fmt: skip
            taken = False
        else:
            taken = await post(notice, secret, seconds=seconds, transport=transport)
        delivered += taken
        now = clock.now()
        next_at = now + min(_SWEEP_BACKOFF_CAP, 2.0 * 2 ** (notice.tries + 1))
        if not taken and next_at > notice.give_up_at:
            _log.warning("Notice %s (%s) given up after %d tries.", notice.event_id, notice.kind, notice.tries + 1)
        await outbox.notice_tried(
            notice.event_id, owner=owner, now=now, tries=1, delivered=taken,
            next_at=None if taken or next_at > notice.give_up_at else next_at,
        )  # fmt: skip
    return delivered


class Notifier:
    """Sends the notices of one actor. `send` returns once the notice is delivered or left to the outbox (or given
    up); `soon` sends it in the background (`drain` waits for those); `sweep` tries the outbox's due notices, in the
    background, until `drain`."""

    def __init__(
        self,
        settings: NotifySettings,
        secret: str,
        clock: Clock,
        *,
        outbox: AsyncOutbox | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._settings = settings
        self._secret = secret
        self._clock = clock
        self._outbox = outbox
        self._transport = transport
        self._owner = f"notifier-{uuid.uuid4().hex}"
        """Whose lease a notice this notifier tries is held under."""
        self._sending: set[asyncio.Task[bool]] = set()
        self._sweeping: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()
        self._drained = False
        """Set by `drain`, which also sets `_stopping` to wake a sweep's sleep (`sleep_or_woken` clears that event
        after, so this flag is what says the notifier is drained)."""

    def soon(self, kind: str, data: Mapping[str, object], *, subject: str) -> None:
        """Send the notice in the background (a batch's end must not wait on the user's server)."""
        if kind not in self._settings.events:
            return
        task = asyncio.ensure_future(self.send(kind, data, subject=subject))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    def tells(self, kind: str) -> bool:
        """Whether notices of `kind` are sent."""
        return kind in self._settings.events

    def keys_answered(self, record: BatchRecord, states: list[KeyState]) -> None:
        """Send, in the background and one after another, a `key.answered` notice for each key of `states` whose answer
        the batch `record` stored (a key queued again for another batch is told when that one answers it)."""
        if not self.tells("key.answered"):
            return
        include = self._settings.include_keys
        told = [(key_notice(state, record, include_key=include), f"{record.id}/{state.key}")
                for state in states if state.state.final and state.batch_id == record.id]  # fmt: skip
        if told:
            task = asyncio.ensure_future(self._send_each("key.answered", told))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

    async def _send_each(self, kind: str, told: list[tuple[dict[str, object], str]]) -> bool:
        # One at a time: a batch of ten thousand keys is not ten thousand connections to the user's server at once.
        taken = True
        for data, subject in told:
            taken = await self.send(kind, data, subject=subject) and taken
        return taken

    def sweep(self) -> None:
        """Try the outbox's due notices now and every `SWEEP_SECONDS`, in the background, until `drain` (what
        another process left, or this one's own left earlier)."""
        if self._outbox is None or self._sweeping is not None or self._drained:
            return
        self._sweeping = asyncio.ensure_future(self._sweep(self._outbox))

    async def _sweep(self, outbox: AsyncOutbox) -> None:
        while True:  # the first pass made even when drained at once: a short-lived program's engine sweeps once
            try:
                await deliver_due(outbox, self._clock, owner=self._owner, seconds=self._settings.timeout,
                                  transport=self._transport)  # fmt: skip
            except Exception as error:  # a store's outage: the next sweep tries again
                _log.warning("The notices' outbox could not be swept: %s", error)
            if self._drained:
                return
            await sleep_or_woken(asyncio.ensure_future(self._clock.sleep(SWEEP_SECONDS)), [self._stopping])

    async def drain(self) -> None:
        """Wait for the notices sent in the background, and for a sweep's pass under way (its tries recorded): no
        sweep after."""
        self._drained = True
        self._stopping.set()
        if self._sweeping is not None:
            await asyncio.gather(self._sweeping, return_exceptions=True)
        while self._sending:
            await asyncio.gather(*list(self._sending), return_exceptions=True)

    async def send(self, kind: str, data: Mapping[str, object], *, subject: str) -> bool:
        """POST the notice `kind` (`batch.ended`, `run.ended`) about `data` (`subject`: what it is about, which makes
        its id), trying again `retries` times, `backoff` seconds after the first try and twice as long after each
        next; whether it was delivered. Kept in the outbox first: one not taken is left there for a later sweep, and
        one the outbox holds already (another process's, or this subject's told before) is not sent again."""
        settings = self._settings
        if kind not in settings.events:
            return False
        now = self._clock.now()
        body = orjson.dumps({"type": kind, "timestamp": now, "data": dict(data)})
        notice = Notice(event_id(kind, subject), kind, settings.url, settings.secret_env, body, now,
                        give_up_at=now + settings.deliver_for, next_at=now)  # fmt: skip
        outbox = self._outbox
        # Held for as long as this process's tries could take: no sweep tries it meanwhile.
        held = settings.backoff * 2 ** (settings.retries + 1) + settings.timeout * (settings.retries + 1)
        if outbox is not None and not await outbox.add_notice(notice, owner=self._owner, until=now + held):
            _log.info("Notice %s (%s) is in the outbox already: not sent again.", notice.event_id, kind)
            return False
        wait = settings.backoff
        taken = False
        tries = 0
        while not taken and tries <= settings.retries:
            if tries:
                await self._clock.sleep(wait)
                wait *= 2
            taken = await post(notice, self._secret, seconds=settings.timeout, transport=self._transport)
            tries += 1
        next_at = self._clock.now() + wait
        kept = not taken and outbox is not None and next_at <= notice.give_up_at
        if not taken and not kept:
            _log.warning("Notice %s (%s) given up after %d tries.", notice.event_id, kind, tries)
        elif kept:
            _log.warning("Notice %s (%s) not taken after %d tries: left in the ledger's outbox, tried again by the "
                         "next sweep for up to %s.", notice.event_id, kind, tries,
                         format_duration(notice.give_up_at - self._clock.now()))  # fmt: skip
        if outbox is not None:
            await outbox.notice_tried(notice.event_id, owner=self._owner, now=self._clock.now(), tries=tries,
                                      delivered=taken, next_at=next_at if kept else None)  # fmt: skip
        return taken
