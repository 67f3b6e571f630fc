"""`OutboxRows`: the notices a SQLite ledger keeps to send (`roles.Outbox`), in its `notice_outbox` table."""

from __future__ import annotations

from lowtide.ledger.outbox_records import Notice
from lowtide.ledger.sqlite.connection import SqliteFile

__all__ = ["OutboxRows"]

_COLUMNS = "event_id, kind, url, secret_env, body, made_at, give_up_at, tries, next_at"


def _notice(row: tuple[str, str, str, str, bytes, float, float, int, float]) -> Notice:
    event_id, kind, url, secret_env, body, made_at, give_up_at, tries, next_at = row
    return Notice(event_id, kind, url, secret_env, bytes(body), made_at, give_up_at, tries, next_at)


class OutboxRows(SqliteFile):
    def add_notice(self, notice: Notice, *, owner: str, until: float) -> bool:
        n = notice
        with self.transaction() as db:
            row = db.execute(
                "SELECT owner, delivered_at IS NULL AND given_up_at IS NULL FROM notice_outbox WHERE event_id = ?",
                (n.event_id,),
            ).fetchone()
            if row is not None:
                return row[0] == owner and bool(row[1])
            db.execute(
                f"INSERT INTO notice_outbox ({_COLUMNS}, owner, lease_until) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (n.event_id, n.kind, n.url, n.secret_env, n.body, n.made_at, n.give_up_at, n.tries, n.next_at,
                 owner, until),
            )  # fmt: skip
        return True

    def due_notices(self, *, owner: str, now: float, until: float, limit: int) -> list[Notice]:
        with self.transaction() as db:
            rows = db.execute(
                f"SELECT {_COLUMNS} FROM notice_outbox WHERE delivered_at IS NULL AND given_up_at IS NULL"
                " AND next_at <= ? AND (owner IS NULL OR lease_until <= ?) ORDER BY next_at, event_id LIMIT ?",
                (now, now, limit),
            ).fetchall()
            db.executemany(
                "UPDATE notice_outbox SET owner = ?, lease_until = ? WHERE event_id = ?",
                [(owner, until, row[0]) for row in rows],
            )
        return [_notice(row) for row in rows]

    def notice_tried(
        self, event_id: str, *, owner: str, now: float, tries: int, delivered: bool, next_at: float | None
    ) -> None:
        with self.transaction() as db:
            db.execute(
                "UPDATE notice_outbox SET tries = tries + ?, owner = NULL, lease_until = 0,"
                " next_at = COALESCE(?, next_at), delivered_at = CASE WHEN ? THEN ? END,"
                " given_up_at = CASE WHEN ? THEN ? END"
                " WHERE event_id = ? AND owner = ? AND delivered_at IS NULL AND given_up_at IS NULL",
                (tries, next_at, delivered, now, not delivered and next_at is None, now, event_id, owner),
            )
