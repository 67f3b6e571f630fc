"""Steps for a PostgreSQL ledger an earlier lowtide wrote with requests in flight (`features/data/postgres_v6.py`):
migrated in place when this lowtide opens it, read as that lowtide read it, copied, and worked on from there."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from _pg_ledgers import ledger_at
from _support import world
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.ledger.copy import copy_ledger
from lowtide.ledger.postgres.ledger import PostgresLedger


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    postgres_copy: PostgresLedger
    gathered: list[str]


_DATA = Path(__file__).resolve().parent.parent / "data"


def _reader() -> ModuleType:
    """`features/data/ledger_v5.py`, whose `what_it_reads` says what a lowtide reads from a ledger."""
    spec = importlib.util.spec_from_file_location("ledger_v5", _DATA / "ledger_v5.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _reads_as(ledger: Any, expected: str) -> None:
    read: dict[str, Any] = _reader().what_it_reads(ledger)
    before: dict[str, Any] = json.loads((_DATA / expected).read_text())
    assert read.keys() == before.keys(), read.keys()
    for part, rows in before.items():
        assert read[part] == rows, (part, read[part], rows)


@given('the scenario\'s PostgreSQL database holds the ledger lowtide wrote at schema version {version:d} ("{name}")')
def step_old_ledger(context: Context, version: int, name: str) -> None:
    tables: dict[str, dict[str, Any]] = json.loads((_DATA / name).read_text())
    ledger_at(context.postgres_url, version, [(t, held["columns"], held["rows"]) for t, held in tables.items()])


@when("the PostgreSQL ledger is opened by this lowtide")
def step_open(context: Context) -> None:
    w = world(context)
    w.value = PostgresLedger(context.postgres_url)
    w.cleanups.append(w.value.close)


@then('it reads every request, batch member, run item and copied row as schema 6\'s lowtide read them ("{expected}")')
def step_reads_as_before(context: Context, expected: str) -> None:
    _reads_as(world(context).value, expected)


@when("it is copied into a new PostgreSQL database")
def step_copy_into_postgres(context: Context) -> None:
    w = world(context)
    copy = PostgresLedger(context.new_postgres_database())
    w.cleanups.append(copy.close)
    copy_ledger(w.value, copy)
    context.postgres_copy = copy


@then('that copy reads every request, batch member, run item and copied row as it does ("{expected}")')
def step_copy_reads(context: Context, expected: str) -> None:
    _reads_as(context.postgres_copy, expected)


@when('a process on host "{host}" gathers the pending calls of scope "{scope}" into batch "{batch}"')
def step_gather_into(context: Context, host: str, scope: str, batch: str) -> None:
    ledger: PostgresLedger = world(context).value
    owner = f"{host}/1/x"
    taken = ledger.take_pending(scope, owner=owner, until=400.0, now=30.0, limit=100, max_bytes=10**6)
    members = [(t.key, t.custom_id) for t in taken]
    kept = ledger.record_intent(batch, provider="anthropic", endpoint="https://api.anthropic.com", members=members,
                                request_bytes=10, owner=owner, until=400.0, now=31.0)  # fmt: skip
    context.gathered = sorted(kept)


@then('it gathered "{keys}"')
def step_gathered(context: Context, keys: str) -> None:
    assert context.gathered == [k.strip() for k in keys.split(",")], context.gathered
