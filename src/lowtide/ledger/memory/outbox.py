"""`MemoryOutbox`: the notices a `MemoryLedger` keeps to send (`roles.Outbox`), under the ledger's one lock, with the
meaning the SQLite store's `notice_outbox` table gives them."""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass

from lowtide.ledger.outbox_records import Notice

__all__ = ["MemoryOutbox"]


_Row = tuple[object, ...]


@dataclass(slots=True)
class _Kept:
    notice: Notice
    owner: str | None
    until: float
    delivered_at: float | None = None
    given_up_at: float | None = None

    @property
    def ended(self) -> bool:
        """Delivered or given up."""
        return self.delivered_at is not None or self.given_up_at is not None


class MemoryOutbox:
    """Each notice by its event id, with the lease of the process trying it."""

    lock: threading.RLock

    def __init__(self) -> None:
        self._outbox: dict[str, _Kept] = {}

    def add_notice(self, notice: Notice, *, owner: str, until: float) -> bool:
        with self.lock:
            kept = self._outbox.get(notice.event_id)
            if kept is not None:
                return kept.owner == owner and not kept.ended
            self._outbox[notice.event_id] = _Kept(notice, owner, until)
            return True

    def due_notices(self, *, owner: str, now: float, until: float, limit: int) -> list[Notice]:
        with self.lock:
            due = sorted(
                (kept for kept in self._outbox.values()
                 if not kept.ended and kept.notice.next_at <= now and (kept.owner is None or kept.until <= now)),
                key=lambda kept: (kept.notice.next_at, kept.notice.event_id),
            )[:limit]  # fmt: skip
            for kept in due:
                kept.owner, kept.until = owner, until
            return [kept.notice for kept in due]

    def notice_tried(
        self, event_id: str, *, owner: str, now: float, tries: int, delivered: bool, next_at: float | None
    ) -> None:
        with self.lock:
            kept = self._outbox.get(event_id)
            if kept is None or kept.owner != owner or kept.ended:
                return
            notice = kept.notice
            due = now if next_at is None else next_at
            kept.notice = dataclasses.replace(notice, tries=notice.tries + tries, next_at=due)
            kept.owner, kept.until = None, 0.0
            if delivered:
                kept.delivered_at = now
            elif next_at is None:
                kept.given_up_at = now

    def outbox_rows(self) -> list[_Row]:
        """Every notice as `records.COPIED["notice_outbox"]` lists its columns, by event id."""
        with self.lock:
            return [
                (n.event_id, n.kind, n.url, n.secret_env, n.body, n.made_at, n.give_up_at, n.tries, n.next_at,
                 kept.delivered_at, kept.given_up_at)
                for kept in sorted(self._outbox.values(), key=lambda kept: kept.notice.event_id)
                for n in (kept.notice,)
            ]  # fmt: skip

    def load_notice(self, notice: Notice, *, delivered_at: float | None, given_up_at: float | None) -> None:
        """Keep a copied notice as its ledger had it, tried by no process."""
        with self.lock:
            self._outbox[notice.event_id] = _Kept(notice, None, 0.0, delivered_at, given_up_at)
