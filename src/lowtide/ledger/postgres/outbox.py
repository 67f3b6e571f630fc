"""The notices a PostgreSQL ledger keeps to send (`roles.Outbox`), as operations (`steps.Op`) its sync and async faces
both run: each notice once by its event id, claimed by one host at a time (`FOR UPDATE SKIP LOCKED`: two hosts
sweeping at once take different notices, and neither waits on the other)."""

from __future__ import annotations

from typing import Any, LiteralString

from lowtide.ledger.outbox_records import Notice
from lowtide.ledger.postgres.steps import Op, Sql

__all__ = ["add_notice", "due_notices", "notice_tried"]

_COLUMNS: LiteralString = "event_id, kind, url, secret_env, body, made_at, give_up_at, tries, next_at"


def _notice(row: tuple[Any, ...]) -> Notice:
    event_id, kind, url, secret_env, body, made_at, give_up_at, tries, next_at = row
    return Notice(event_id, kind, url, secret_env, bytes(body), made_at, give_up_at, tries, next_at)


def add_notice(notice: Notice, owner: str, until: float) -> Op[bool]:
    n = notice
    reply = yield Sql(
        f"INSERT INTO notice_outbox ({_COLUMNS}, owner, lease_until)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (event_id) DO NOTHING RETURNING 1",
        (n.event_id, n.kind, n.url, n.secret_env, n.body, n.made_at, n.give_up_at, n.tries, n.next_at, owner, until),
    )
    if reply.one() is not None:
        return True
    # Kept before: this owner's own add, made again after a commit whose answer was lost, finds its lease.
    row = (
        yield Sql(
            "SELECT owner = %s AND delivered_at IS NULL AND given_up_at IS NULL FROM notice_outbox WHERE event_id = %s",
            (owner, n.event_id),
        )
    ).one()
    return bool(row is not None and row[0])


def due_notices(owner: str, now: float, until: float, limit: int) -> Op[list[Notice]]:
    reply = yield Sql(
        f"UPDATE notice_outbox SET owner = %s, lease_until = %s WHERE event_id IN ("
        " SELECT event_id FROM notice_outbox WHERE delivered_at IS NULL AND given_up_at IS NULL AND next_at <= %s"
        " AND (owner IS NULL OR lease_until <= %s) ORDER BY next_at, event_id LIMIT %s FOR UPDATE SKIP LOCKED)"
        f" RETURNING {_COLUMNS}",
        (owner, until, now, now, limit),
    )
    return sorted((_notice(row) for row in reply.rows), key=lambda notice: (notice.next_at, notice.event_id))


def notice_tried(event_id: str, owner: str, now: float, tries: int, delivered: bool, next_at: float | None) -> Op[None]:
    yield Sql(
        "UPDATE notice_outbox SET tries = tries + %s, owner = NULL, lease_until = 0,"
        " next_at = COALESCE(%s, next_at), delivered_at = CASE WHEN %s THEN %s END,"
        " given_up_at = CASE WHEN %s THEN %s END"
        " WHERE event_id = %s AND owner = %s AND delivered_at IS NULL AND given_up_at IS NULL",
        (tries, next_at, delivered, now, not delivered and next_at is None, now, event_id, owner),
    )
