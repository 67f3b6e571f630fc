"""Steps for `lowtide ledger copy`: a SQLite ledger with answers and a bulk run, copied into the scenario's PostgreSQL
database (`context.postgres_url`) and back, read through the stores and the actors that use them."""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import unquote, urlsplit

from _pg_ledgers import pg_rows
from _support import run_cli, world
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import ActorResponse, ConfigurationError, MemoryLedger
from lowtide.ledger.copy import copy_ledger
from lowtide.ledger.records import COPIED
from lowtide.ledger.store import open_ledger


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    copy_answers: list[ActorResponse[Any]]
    copy_back: MemoryLedger
    copy_calls: Counter[str]
    copy_memory: MemoryLedger
    copy_run: str
    copy_chain: list[Any]
    """The ledgers a traced ledger was copied through, in order (`the scenario's ledger, that into ...`)."""


_SETTINGS = {"name": "mover", "model": "claude-sonnet-5-5", "max_tokens": 64, "batch_processing": "batch"}


@given("a SQLite ledger in which an actor answered {calls:d} calls in batch mode, and a bulk run of {items:d} prompts")
def step_sqlite_with_answers(context: Context, calls: int, items: int) -> None:
    _answered(context, str(world(context).path("ledger.sqlite3")), calls, items)


@given(
    "an in-memory ledger in which an actor answered {calls:d} calls in batch mode, and a bulk run of {items:d} prompts"
)
def step_memory_with_answers(context: Context, calls: int, items: int) -> None:
    context.copy_memory = MemoryLedger()
    _answered(context, context.copy_memory, calls, items)


def _answered(context: Context, ledger: Any, calls: int, items: int) -> None:
    w = world(context)
    w.start_emulator()
    actor = w.add_actor(_SETTINGS, ledger=ledger)

    async def work() -> tuple[list[ActorResponse[Any]], str]:
        import asyncio

        answers = list(await asyncio.gather(*(actor.run(f"Move {n}", key=f"move-{n}") for n in range(calls))))
        result = await actor.map([f"Item {n}" for n in range(items)], run_id="moved-run")
        return answers, result.run_id

    answers, run_id = w.run(work())
    context.copy_answers = answers
    context.copy_run = run_id
    context.copy_calls = Counter(w.emu.calls)


def _command(context: Context, command: str) -> None:
    w = world(context)
    argv = command.replace("DATABASE", context.postgres_url) if "DATABASE" in command else command
    run_cli(w, argv, ledger=None, cwd=w.path("ledger.sqlite3").parent)


@when("`{command}` runs")
def step_copy_runs(context: Context, command: str) -> None:
    _command(context, command)


@given("`{command}` has run")
def step_copy_ran(context: Context, command: str) -> None:
    _command(context, command)
    assert world(context).value["code"] == 0, world(context).value


@then("the password of the scenario's database appears nowhere in the command's output")
def step_no_password(context: Context) -> None:
    value = world(context).value
    password = unquote(urlsplit(context.postgres_url).password or "")
    assert password, context.postgres_url
    assert password not in value["out"] + value["err"], value


@then("an actor on the scenario's database answers the same {calls:d} calls from its ledger: same answers, same costs")
def step_same_answers(context: Context, calls: int) -> None:
    w = world(context)
    actor = w.add_actor({**_SETTINGS, "name": "mover"}, ledger=context.postgres_url)

    async def again() -> list[ActorResponse[Any]]:
        import asyncio

        return list(await asyncio.gather(*(actor.run(f"Move {n}", key=f"move-{n}") for n in range(calls))))

    answers = w.run(again())
    for before, after in zip(context.copy_answers, answers, strict=True):
        assert after.text == before.text, (before.text, after.text)
        assert after.ids == before.ids, (before.ids, after.ids)
        assert after.cost == before.cost, (before.cost, after.cost)


@then("the API received no more calls")
def step_no_more_calls(context: Context) -> None:
    calls = Counter(world(context).emu.calls)
    assert calls == context.copy_calls, (context.copy_calls, calls)


@then("the bulk run reads back from the scenario's database with its {items:d} items succeeded, in order")
def step_run_back(context: Context, items: int) -> None:
    runs = open_ledger(context.postgres_url).run_store
    record = runs.run(context.copy_run)
    assert record is not None, runs.runs()
    rows = runs.items(context.copy_run)
    assert [row.index for row in rows] == list(range(items)), rows
    assert {row.request_state.value if row.request_state else None for row in rows} == {"succeeded"}, rows


@then('on stderr, the command says "{first}" and "{second}"')
def step_stderr_two(context: Context, first: str, second: str) -> None:
    err = world(context).value["err"]
    assert first in err, err
    assert second in err, err
    assert "Traceback" not in err, err


@then("the scenario's database holds {count:d} requests, as after the first copy")
def step_db_holds(context: Context, count: int) -> None:
    assert len(open_ledger(context.postgres_url).requests()) == count


@then('"{copy}" holds the same requests, batches, results and runs as "{original}"')
def step_same_rows(context: Context, copy: str, original: str) -> None:
    w = world(context)
    first, second = open_ledger(w.path(original)), open_ledger(w.path(copy))
    for table in COPIED:
        rows = [row for chunk in first.export_rows(table) for row in chunk]
        again = [row for chunk in second.export_rows(table) for row in chunk]
        if table != "results":  # results keep their arrival order; other rows have none
            rows, again = sorted(rows, key=repr), sorted(again, key=repr)
        assert again == rows, (table, rows[:2], again[:2])
    assert [r.key for r in second.requests()] == [r.key for r in first.requests()]


@when('it is copied into the new SQLite file "{name}", and that file into a new in-memory ledger')
def step_memory_round_trip(context: Context, name: str) -> None:
    w = world(context)
    saved = open_ledger(w.path(name))
    counts = copy_ledger(context.copy_memory, saved)
    assert counts["requests"] > 0, counts
    context.copy_back = MemoryLedger()
    copy_ledger(saved, context.copy_back)


def _rows(ledger: Any) -> dict[str, list[tuple[Any, ...]]]:
    every = {table: [row for chunk in ledger.export_rows(table) for row in chunk] for table in COPIED}
    return {table: rows if table == "results" else sorted(rows, key=repr) for table, rows in every.items()}


@then("the three ledgers hold the same requests, batches, members, results and runs")
def step_three_same(context: Context) -> None:
    first = _rows(context.copy_memory)
    assert first["requests"], first
    assert first["run_items"], first
    saved = _rows(open_ledger(world(context).path("saved.sqlite3")))
    back = _rows(context.copy_back)
    for table in COPIED:
        assert saved[table] == first[table], (table, first[table][:2], saved[table][:2])
        assert back[table] == first[table], (table, first[table][:2], back[table][:2])


@then('an actor given the SQLite file "{name}" answers the same {calls:d} calls from it, with no call to the API')
def step_file_answers(context: Context, name: str, calls: int) -> None:
    w = world(context)
    noted = Counter(w.emu.calls)
    actor = w.add_actor({**_SETTINGS, "name": "mover"}, ledger=str(w.path(name)))

    async def again() -> list[ActorResponse[Any]]:
        import asyncio

        return list(await asyncio.gather(*(actor.run(f"Move {n}", key=f"move-{n}") for n in range(calls))))

    for before, after in zip(context.copy_answers, w.run(again()), strict=True):
        assert (after.text, after.ids, after.cost) == (before.text, before.ids, before.cost), (before, after)
    assert Counter(w.emu.calls) == noted, (noted, w.emu.calls)


@then('copying it into "{name}" again is refused with "{text}"')
def step_file_refused(context: Context, name: str, text: str) -> None:
    target = open_ledger(world(context).path(name))
    before = _rows(target)
    assert text in _refusal(context.copy_memory, target)
    assert _rows(target) == before


@then('copying it into the in-memory copy again is refused with "{text}"')
def step_memory_refused(context: Context, text: str) -> None:
    before = _rows(context.copy_back)
    assert text in _refusal(context.copy_memory, context.copy_back)
    assert _rows(context.copy_back) == before


def _refusal(source: Any, target: Any) -> str:
    """The message of the copy's refusal (it must refuse)."""
    try:
        copy_ledger(source, target)
    except ConfigurationError as exc:
        return str(exc)
    raise AssertionError("the copy was not refused")


@then('no file "{name}" was made')
def step_no_file(context: Context, name: str) -> None:
    assert not world(context).path(name).exists()


@when(
    'it is copied into the scenario\'s ledger, that into the new SQLite file "{name}", and that into a new in-memory'
    " ledger"
)
def step_copy_chain(context: Context, name: str) -> None:
    # The scenario's ledger: a SQLite file, or (`@stores` under `-D store=postgres`) its PostgreSQL database.
    chain: list[Any] = [context.copy_memory, open_ledger(os.environ["LOWTIDE_LEDGER"])]
    chain += [open_ledger(world(context).path(name)), MemoryLedger()]
    for source, target in itertools.pairwise(chain):
        copy_ledger(source, target)
    context.copy_chain = chain


@then("every copy holds the trace context of each of the {count:d} calls, as the in-memory ledger stored it")
def step_traces_copied(context: Context, count: int) -> None:
    first, *copies = context.copy_chain
    keys = [record.key for record in first.requests()]
    stored = first.traces_of(keys)
    assert {f"move-{n}" for n in range(count)} <= set(stored), (keys, stored)
    assert all(json.loads(value)["traceparent"].startswith("00-") for value in stored.values()), stored
    for ledger in copies:
        assert ledger.traces_of(keys) == stored, (ledger.location, ledger.traces_of(keys), stored)


@then("every copy keeps each batch's trace context, as the in-memory ledger stored it")
def step_batch_traces_copied(context: Context) -> None:
    first, *copies = context.copy_chain
    stored = {batch.id: batch.trace for batch in first.batches()}
    assert stored, stored
    assert all(json.loads(value or "{}").get("traceparent") for value in stored.values()), stored
    for ledger in copies:
        assert {batch.id: batch.trace for batch in ledger.batches()} == stored, ledger.location


@then('"{name}" is still, byte for byte, the file lowtide wrote at schema version {version:d}, with nothing beside it')
def step_source_unchanged(context: Context, name: str, version: int) -> None:
    """The file copied from, against the one in features/data it was made from: not migrated, not checkpointed, no
    `-wal` or `-shm` left beside it, no snapshot left in the temporary folder."""
    path = world(context).path(name)
    original = Path(__file__).resolve().parent.parent / "data" / name
    assert path.read_bytes() == original.read_bytes(), f"{name} was written to"
    beside = sorted(p.name for p in path.parent.iterdir() if p.name.startswith(name) and p.name != name)
    assert not beside, beside
    db = sqlite3.connect(f"{path.as_uri()}?immutable=1", uri=True)  # reads the file alone, makes nothing beside it
    try:
        assert db.execute("PRAGMA user_version").fetchone() == (version,)
    finally:
        db.close()
    made = path.stat().st_mtime  # when the scenario wrote it: it has not been touched since
    left = [p for p in Path(tempfile.gettempdir()).glob("lowtide-snapshot-*") if p.stat().st_mtime >= made]
    assert not left, left


@then("the scenario's PostgreSQL database still holds its ledger at schema version {version:d}")
def step_pg_version_kept(context: Context, version: int) -> None:
    assert pg_rows(context.postgres_url, "SELECT version FROM schema_version") == [(version,)]


@given('that ledger holds spend: a cap on team "{team}", a settled live call, a released one, and a reservation out')
def step_spend_held(context: Context, team: str) -> None:
    from decimal import Decimal

    from lowtide.ledger.spend_records import CapPeriod, CapScope, Owner, SpendCap, SpendEntry

    spending = context.copy_memory.spending
    spending.set_cap(SpendCap(CapScope.TEAM, team, CapPeriod.ALL, Decimal("0.05")))
    owner = Owner(team, "tides", (("env", "test"),))

    def entry(key: str, usd: str, at: float) -> SpendEntry:
        return SpendEntry(key, owner, "mover", "claude-sonnet-5-5", Decimal(usd), at, "host-a")

    for made in (entry("live:settled", "0.02", 1_000.0), entry("live:failed", "0.02", 1_001.0)):
        assert spending.reserve(made).admitted
    spending.settle("live:settled", Decimal("0.000138"))
    spending.release("live:failed", at=1_002.0, host="host-a")
    assert spending.reserve(entry("out", "0.02", 1_003.0)).admitted  # no request of its key: its worst case out


@then("every copy holds the same caps, spend lines and audit as the in-memory ledger")
def step_spend_copied(context: Context) -> None:
    first, *copies = context.copy_chain
    caps, lines, audit = first.spending.caps(), first.spending.spend_lines(), first.spending.audit()
    assert len(caps) == 1 and len(audit) == 4, (caps, audit)  # noqa: PT018 (one fixture, checked whole)
    for ledger in copies:
        spending = ledger.spending
        assert spending.caps() == caps, (ledger.location, spending.caps())
        assert spending.spend_lines() == lines, (ledger.location, spending.spend_lines(), lines)
        assert spending.audit() == audit, (ledger.location, spending.audit(), audit)


@then('every copy still refuses ${refused} more for team "{team}" and admits ${admitted}')
def step_spend_copied_caps(context: Context, refused: str, team: str, admitted: str) -> None:
    from decimal import Decimal

    from lowtide.ledger.spend_records import Owner, SpendEntry

    for n, ledger in enumerate(context.copy_chain):
        spending = ledger.spending
        ask = SpendEntry(f"more-{n}", Owner(team), "mover", "claude-sonnet-5-5", Decimal(refused), 2_000.0, "host-b")
        assert not spending.reserve(ask).admitted, ledger.location
        ask = SpendEntry(f"less-{n}", Owner(team), "mover", "claude-sonnet-5-5", Decimal(admitted), 2_000.0, "host-b")
        assert spending.reserve(ask).admitted, ledger.location
