"""A PostgreSQL ledger's rebuilt requests whose keys are not known (`records.UNKEYED`): whether it holds any, read with
its identity in one statement (an engine's first claims read both, one round trip), and their takeover by the claims
whose custom ids are theirs (`LedgerStore.adopt_unkeyed`). Operations (`steps.Op`), run by either driver."""

from __future__ import annotations

from collections.abc import Sequence
from typing import LiteralString

from lowtide.ledger.postgres.steps import Op, Sql
from lowtide.ledger.records import UNKEYED, NewRequest

__all__ = ["adopt_unkeyed", "identity_and_unkeyed", "unkeyed"]

# The keys that start with `UNKEYED` ("rebuilt:"), as a range of the key's index (keys compare byte by byte,
# `COLLATE "C"`, since schema 10): ';' follows ':'.
_RANGE = {"low": UNKEYED, "high": UNKEYED[:-1] + chr(ord(UNKEYED[-1]) + 1)}
_ANY: LiteralString = "EXISTS (SELECT 1 FROM requests WHERE key >= %(low)s AND key < %(high)s)"


def identity_and_unkeyed() -> Op[tuple[str, bool]]:
    """The ledger's identity, and whether it holds rebuilt requests whose keys are not known."""
    row = (yield Sql(f"SELECT id, {_ANY} FROM identity", _RANGE)).one()
    assert row is not None, "the ledger has no identity (schema 3 makes it)"
    return str(row[0]), bool(row[1])


def unkeyed() -> Op[bool]:
    """Whether the ledger holds rebuilt requests whose keys are not known."""
    row = (yield Sql(f"SELECT {_ANY}", _RANGE)).one()
    return bool(row is not None and row[0])


def adopt_unkeyed(requests: Sequence[NewRequest]) -> Op[bool]:
    """Each of `requests` whose key is unknown takes over the unkeyed request of its custom id, if there is one (its
    results first, found through its memberships, then the memberships and the request itself): one statement. A
    rebuilt request has no trace context stored (`request_traces`, whose key refers to the request's): none moves.
    Whether any unkeyed request is left."""
    pairs = {r.key: UNKEYED + r.custom_id for r in requests}  # of a key given twice, once
    yield Sql(
        "WITH wanted AS (SELECT t.new, t.old FROM unnest(%(new)s::text[], %(old)s::text[]) AS t(new, old)"
        " WHERE EXISTS (SELECT 1 FROM requests r WHERE r.key = t.old)"
        " AND NOT EXISTS (SELECT 1 FROM requests r WHERE r.key = t.new)),"
        " results_moved AS (UPDATE results o SET key = w.new FROM wanted w WHERE o.key = w.old"
        " AND o.batch_id IN (SELECT m.batch_id FROM batch_members m WHERE m.key = w.old)),"
        " members_moved AS (UPDATE batch_members m SET key = w.new FROM wanted w WHERE m.key = w.old),"
        " items_moved AS (UPDATE run_items i SET key = w.new FROM wanted w WHERE i.key = w.old)"
        " UPDATE requests r SET key = w.new FROM wanted w WHERE r.key = w.old",
        {"new": list(pairs), "old": list(pairs.values())},
    )
    return (yield from unkeyed())
