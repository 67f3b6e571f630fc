"""Steps for the ledger file: its schema and migrations, where it lives, what it holds, and how it is written."""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _support import API_KEY, World, emulated_reply_to, run_cli, set_env, world
from step_context import Context, given, then, when

from lowtide import Actor, ActorError, ActorResponse, LedgerError
from lowtide.ledger.records import COPIED, BatchIntent
from lowtide.ledger.sqlite import Ledger
from lowtide.ledger.sqlite.schema import SCHEMA_VERSION
from lowtide.ledger.store import NewRequest, RequestState, close_ledgers, default_ledger_path, open_ledger

# -- files -----------------------------------------------------------------------------------------------------------


def _schema_file(path: Path, version: int) -> None:
    connection = sqlite3.connect(path)
    connection.execute(f"PRAGMA user_version = {version}")
    connection.commit()
    connection.close()


@given('an empty file "{name}"')
def step_empty_file(context: Context, name: str) -> None:
    world(context).path(name).write_bytes(b"")


@given('a SQLite file "{name}" at schema version {version:d}')
@given('a SQLite file at schema version {version:d} named "{name}"')
def step_schema_file(context: Context, name: str, version: int) -> None:
    _schema_file(world(context).path(name), version)


@given('a text file named "{name}"')
def step_text_file(context: Context, name: str) -> None:
    world(context).path(name).write_text("Notes on the tide tables, not a ledger.\n", encoding="utf-8")


@given('an empty ledger "{name}"')
def step_empty_ledger(context: Context, name: str) -> None:
    w = world(context)
    ledger = Ledger(w.path(name))
    w.cleanups.append(ledger.close)
    w.witnessed.setdefault("ledgers", []).append(ledger)


def _opened(w: World, name: str) -> Ledger:
    ledger = next(ledger for ledger in w.witnessed["ledgers"] if ledger.path == w.path(name))
    assert isinstance(ledger, Ledger)
    return ledger


@when('the ledger "{name}" is opened')
def step_open_ledger(context: Context, name: str) -> None:
    w = world(context)
    w.error = None
    try:
        ledger = Ledger(w.path(name))
    except Exception as exc:
        w.error = exc
        return
    w.cleanups.append(ledger.close)


@then('opening it failed with {name:w}: "{message}"')
def step_open_failed(context: Context, name: str, message: str) -> None:
    error = world(context).failure()
    assert type(error).__name__ == name, f"{type(error).__name__}: {error}"
    assert str(error) == message, str(error)


def _schema(path: Path) -> tuple[str, int, list[str]]:
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        (mode,) = connection.execute("PRAGMA journal_mode").fetchone()
        (version,) = connection.execute("PRAGMA user_version").fetchone()
        tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    finally:
        connection.close()
    return mode, version, sorted(tables)


@then('the ledger is a SQLite database in WAL mode, at schema version {version:d}, with the tables "{tables}"')
def step_ledger_schema(context: Context, version: int, tables: str) -> None:
    _check_schema(world(context).ledger_path, version, tables)


@then('the ledger "{name}" is a SQLite database in WAL mode, at schema version {version:d}, with the tables "{tables}"')
def step_named_ledger_schema(context: Context, name: str, version: int, tables: str) -> None:
    _check_schema(world(context).path(name), version, tables)


def _check_schema(path: Path, version: int, tables: str) -> None:
    assert version == SCHEMA_VERSION, SCHEMA_VERSION
    mode, found, names = _schema(path)
    assert mode == "wal", mode
    assert found == version, found
    assert names == sorted(item.strip() for item in tables.split(",")), names


@then('the file "{name}" is still at schema version {version:d}, with no tables')
def step_file_untouched(context: Context, name: str, version: int) -> None:
    _, found, names = _schema(world(context).path(name))
    assert (found, names) == (version, []), (found, names)


# -- where the ledger lives ------------------------------------------------------------------------------------------


@given('the environment variable "{variable}" is "{value:Q}"')
def step_env(context: Context, variable: str, value: str) -> None:
    set_env(world(context), variable, value or None)


@given('the environment variable "{variable}" is the scenario\'s folder "{name}"')
def step_env_folder(context: Context, variable: str, name: str) -> None:
    w = world(context)
    set_env(w, variable, str(w.path(name)))


@then('the default ledger is "{path}"')
def step_default_ledger(context: Context, path: str) -> None:
    assert default_ledger_path() == Path(path).expanduser(), default_ledger_path()


@given('an actor "{name}" in batch mode, whose configuration names the ledger "{file}"')
def step_actor_ledger_setting(context: Context, name: str, file: str) -> None:
    w = world(context)
    settings = {"name": name, "model": "claude-sonnet-5-5", "batch_processing": "batch", "ledger": str(w.path(file))}
    w.add_actor(settings)


@when('the actor, given the ledger "{file}", is asked "{prompt:Q}"')
def step_actor_given_ledger(context: Context, file: str, prompt: str) -> None:
    w = world(context)
    actor = Actor(w.current_actor().configuration, client=w.client, clock=w.clock, ledger=w.path(file))
    w.cleanups.append(actor.aclose)
    w.error = None
    try:
        w.response = w.run(actor.run(prompt))
    except Exception as exc:
        w.error = exc


@when("every ledger the program opened is closed")
def step_close_ledgers(context: Context) -> None:
    close_ledgers()


@then('the ledger "{file}" holds the request for "{prompt}", succeeded')
def step_named_ledger_holds(context: Context, file: str, prompt: str) -> None:
    w = world(context)
    [record] = open_ledger(w.path(file)).requests()
    assert record.params["messages"] == [{"role": "user", "content": prompt}], record.params
    assert record.state is RequestState.SUCCEEDED, record
    assert record.response is not None
    assert record.response["text"].startswith(emulated_reply_to(prompt))


@then("no ledger was written where LOWTIDE_LEDGER points")
def step_no_default_ledger(context: Context) -> None:
    path = world(context).ledger_path
    assert not path.exists(), f"{path} was written"


@then('there is no file "{name}"')
def step_no_file(context: Context, name: str) -> None:
    assert not world(context).path(name).exists()


@when('"{command}" runs on the ledger "{name}"')
def step_cli_on_named_ledger(context: Context, command: str, name: str) -> None:
    w = world(context)
    run_cli(w, command, ledger=w.path(name))


# -- what the files hold ---------------------------------------------------------------------------------------------


def _files(path: Path) -> list[Path]:
    return [file for file in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if file.exists()]


@then('the ledger\'s files hold "{present}" and "{also}", but not the API key, nor any part of it')
def step_no_key_in_files(context: Context, present: str, also: str) -> None:
    w = world(context)
    if "postgres" in os.environ["LOWTIDE_LEDGER"]:  # every row of every table, as `lowtide ledger copy` reads them
        files = [os.environ["LOWTIDE_LEDGER"]]
        ledger = w.ledger()
        content = repr([list(ledger.export_rows(table)) for table in COPIED]).encode()
    elif os.environ["LOWTIDE_LEDGER"].startswith("folder:"):  # the fourth store's folder (`-D store=folder`), whole
        files = sorted(Path(os.environ["LOWTIDE_LEDGER"].removeprefix("folder:")).iterdir())
        content = b"".join(file.read_bytes() for file in files)
    else:
        files = _files(w.ledger_path)
        content = b"".join(file.read_bytes() for file in files)
    # What a call sends and what came back are there: the scan reads the data, so the key would be found.
    assert present.encode() in content, [str(f) for f in files]
    assert also.encode() in content, [str(f) for f in files]
    secret = API_KEY.removeprefix("sk-ant-api03-")
    # Its last characters with a letter and a dash: four hex digits alone turn up in any random hex id (a batch's, the
    # ledger's identity in every custom id) one scenario in a few hundred.
    for needle in (API_KEY, secret, secret[len(secret) // 2 :], "ret-9f2c"):
        assert needle.encode() not in content, f"{needle!r} is in the ledger's files"


@then("the ledger's files, its WAL and shared-memory files included, are readable by their owner alone")
def step_files_private(context: Context) -> None:
    files = _files(world(context).ledger_path)
    assert len(files) == 3, files
    modes = {file.name: oct(stat.S_IMODE(file.stat().st_mode)) for file in files}
    assert set(modes.values()) == {oct(0o600)}, modes


# -- claims ----------------------------------------------------------------------------------------------------------


def _new_requests(count: int, *, start: int = 0, topic: str = "tide") -> list[NewRequest]:
    return [
        NewRequest(
            key=f"req-{index:04d}",
            custom_id=f"req-{index:04d}",
            actor="planner",
            model="claude-sonnet-5-5",
            params={
                "model": "claude-sonnet-5-5",
                "max_tokens": 100,
                "messages": [{"role": "user", "content": f"Question {index} about the {topic}"}],
            },
            max_attempts=3,
        )
        for index in range(start, start + count)
    ]


def _wal_commits(path: Path) -> int:
    """Transactions in the WAL since it was last reset: frames of the current generation that end a commit."""
    wal = Path(f"{path}-wal")
    data = wal.read_bytes() if wal.exists() else b""
    if len(data) < 32:
        return 0
    page_size = struct.unpack(">I", data[8:12])[0]
    salts = data[16:24]
    commits, offset = 0, 32
    while offset + 24 + page_size <= len(data):
        header = data[offset : offset + 24]
        if header[8:16] != salts:
            break
        if struct.unpack(">I", header[4:8])[0] != 0:
            commits += 1
        offset += 24 + page_size
    return commits


@when('{count:d} new requests are claimed in the ledger "{name}" in one call')
def step_claim(context: Context, count: int, name: str) -> None:
    w = world(context)
    ledger = _opened(w, name)
    before = _wal_commits(ledger.path)
    now = w.clock.now()
    claimed = ledger.claim(_new_requests(count), owner="host/1/claimer", until=now + 120, now=now)
    w.witnessed["claimed"] = [claimed]
    w.witnessed["transactions"] = [_wal_commits(ledger.path) - before]


@then('the ledger "{name}" holds the {count:d} requests, pending, as they were claimed')
def step_claimed_rows(context: Context, name: str, count: int) -> None:
    w = world(context)
    now = w.clock.now()
    records = _opened(w, name).requests()
    [returned] = w.witnessed["claimed"]
    assert returned == records, "the claim returned other records than the ledger holds"
    assert len(records) == count, len(records)
    for record, new in zip(records, _new_requests(count), strict=True):
        assert (record.key, record.custom_id, record.actor, record.model) == (
            new.key,
            new.custom_id,
            new.actor,
            new.model,
        ), record
        assert record.params == new.params, record
        assert record.state is RequestState.PENDING, record
        assert record.batch_id is None, record
        assert (record.attempts, record.max_attempts) == (0, 3), record
        assert (record.owner, record.owner_until) == ("host/1/claimer", now + 120), record
        assert record.response is record.error is record.cost_usd is None, record


@then('the claim was written to "{name}" in {count:d} transaction')
def step_claim_transactions(context: Context, name: str, count: int) -> None:
    w = world(context)
    assert _opened(w, name).path.exists()
    assert w.witnessed["transactions"] == [count], w.witnessed["transactions"]


@when("the same {count:d} keys and a new one are claimed again, with other params, by another owner")
def step_claim_again(context: Context, count: int) -> None:
    w = world(context)
    [ledger] = w.witnessed["ledgers"]
    again = [*_new_requests(count, topic="ebb"), *_new_requests(1, start=count, topic="ebb")]
    w.clock.advance(10)
    now = w.clock.now()
    w.witnessed["claimed again"] = [ledger.claim(again, owner="host/2/other", until=now + 120, now=now)]


@then("the claim returned the {count:d} known requests as they were first claimed, and the new one")
def step_claim_again_result(context: Context, count: int) -> None:
    w = world(context)
    [first] = w.witnessed["claimed"]
    [again] = w.witnessed["claimed again"]
    assert again[:count] == first, (again[:count], first)
    new = again[count]
    assert new.key == f"req-{count:04d}", new
    assert new.owner == "host/2/other", new
    assert new.params["messages"][0]["content"] == f"Question {count} about the ebb", new.params


# -- checkpoints -----------------------------------------------------------------------------------------------------


@given('a ledger "{name}" in a folder of its own, whose checkpoints wait for writes to pause {idle:g} seconds')
def step_checkpointed_ledger(context: Context, name: str, idle: float) -> None:
    _checkpointed_ledger(context, name, idle=idle)


@given(
    'a ledger "{name}" in a folder of its own, whose checkpoints wait for writes to pause {idle:g} seconds,'
    " or at most {at_most:g}"
)
def step_checkpointed_ledger_at_most(context: Context, name: str, idle: float, at_most: float) -> None:
    _checkpointed_ledger(context, name, idle=idle, at_most=at_most)


def _checkpointed_ledger(context: Context, name: str, *, idle: float, at_most: float = 5.0) -> None:
    w = world(context)
    folder = w.path("ledger folder")
    folder.mkdir()
    ledger = Ledger(folder / name)
    ledger.checkpointer.idle, ledger.checkpointer.at_most = idle, at_most
    w.cleanups.append(ledger.close)
    w.witnessed["checkpointed"] = [ledger]
    w.witnessed["checkpoint warnings"] = w.keep_log("lowtide.ledger.sqlite.checkpoint", logging.WARNING)


@then('one warning said "{text}"')
def step_checkpoint_warning(context: Context, text: str) -> None:
    warnings = [record.getMessage() for record in world(context).witnessed["checkpoint warnings"]]
    assert len(warnings) == 1, warnings
    assert text in warnings[0], warnings


def _checkpointed(w: World) -> Ledger:
    [ledger] = w.witnessed["checkpointed"]
    assert isinstance(ledger, Ledger)
    return ledger


@given("the ledger's folder is then moved elsewhere")
def step_folder_moved(context: Context) -> None:
    w = world(context)
    ledger = _checkpointed(w)
    moved = w.path("moved folder")
    ledger.path.parent.rename(moved)
    w.witnessed["ledger file"] = [moved / ledger.path.name]


def _ledger_file(w: World) -> Path:
    return w.witnessed.get("ledger file", [_checkpointed(w).path])[0]


@when("{rounds:d} rounds of {count:d} new requests, with prompts of {size:d} bytes, are claimed in it, back to back")
def step_claim_rounds(context: Context, rounds: int, count: int, size: int) -> None:
    w = world(context)
    ledger = _checkpointed(w)
    for round_ in range(rounds):
        claims = _new_requests(count, start=round_ * count, topic="x" * size)
        ledger.claim_new(claims, owner="host/1/claimer", until=w.clock.now() + 120, now=w.clock.now())
    w.witnessed["claimed count"] = [rounds * count]


@when("requests are claimed in it {count:d} at a time, every {pause:g} seconds, for {seconds:g} seconds")
def step_claim_steadily(context: Context, count: int, pause: float, seconds: float) -> None:
    w = world(context)
    ledger = _checkpointed(w)
    deadline, round_ = time.monotonic() + seconds, 0
    while time.monotonic() < deadline:
        ledger.claim_new(
            _new_requests(count, start=round_ * count), owner="host/1/claimer", until=w.clock.now() + 120, now=0.0
        )
        round_ += 1
        time.sleep(pause)
    w.witnessed["checkpoints while writing"] = [ledger.checkpointer.checkpoints]


@then("the ledger's own connection leaves checkpoints to its thread")
def step_no_inline_checkpoints(context: Context) -> None:
    ledger = _checkpointed(world(context))
    assert _autocheckpoint(ledger) == 0, _autocheckpoint(ledger)


@then("the ledger's own connection checkpoints the WAL itself again, every {pages:d} pages")
def step_inline_checkpoints(context: Context, pages: int) -> None:
    ledger = _checkpointed(world(context))
    assert _autocheckpoint(ledger) == pages, _autocheckpoint(ledger)
    assert not ledger.checkpointer.running


def _autocheckpoint(ledger: Ledger) -> int:
    [row] = ledger.select("PRAGMA wal_autocheckpoint")
    return int(row[0])


def _requests_in_main_file(w: World, *, at_least: int, within: float = 10.0) -> int:
    """Requests the database file holds by itself (a copy of it without its WAL, opened on its own), read again
    until it holds `at_least` of them or `within` seconds pass. A copy taken while a checkpoint writes the file
    may be torn: it is taken again."""
    deadline = time.monotonic() + within
    while True:
        copy = w.path(f"copy-{time.monotonic_ns()}.sqlite3")
        copy.write_bytes(_ledger_file(w).read_bytes())
        connection = sqlite3.connect(copy)
        try:
            (held,) = connection.execute("SELECT COUNT(*) FROM requests").fetchone()
        except sqlite3.DatabaseError:  # the schema itself is still in the WAL, or the copy is torn
            held = 0
        finally:
            connection.close()
            copy.unlink()
        if held >= at_least or time.monotonic() > deadline:
            return int(held)
        time.sleep(0.05)


@then("within {seconds:g} seconds the database file, without its WAL, holds every request claimed")
def step_main_file_holds_all(context: Context, seconds: float) -> None:
    w = world(context)
    [claimed] = w.witnessed["claimed count"]
    held = _requests_in_main_file(w, at_least=claimed, within=seconds)
    # Only the checkpoint thread copies pages into the file: the ledger's connection never does (checked above).
    assert held == claimed, f"the database file holds {held} of {claimed} requests"


@then("the database file, without its WAL, holds at least {count:d} of the requests")
def step_main_file_holds_some(context: Context, count: int) -> None:
    held = _requests_in_main_file(world(context), at_least=count)
    assert held >= count, held


@then("the ledger holds every request claimed")
def step_ledger_holds_all(context: Context) -> None:
    w = world(context)
    [claimed] = w.witnessed["claimed count"]
    assert len(_checkpointed(w).requests()) == claimed


@then("the WAL was checkpointed at least {count:d} times while the writes went on")
def step_checkpoints_while_writing(context: Context, count: int) -> None:
    [checkpoints] = world(context).witnessed["checkpoints while writing"]
    assert checkpoints >= count, checkpoints


@when("the checkpointed ledger is closed")
def step_close_checkpointed(context: Context) -> None:
    _checkpointed(world(context)).close()


@then("its checkpoint thread has stopped, and no WAL file is left beside the database")
def step_closed_cleanly(context: Context) -> None:
    ledger = _checkpointed(world(context))
    assert not ledger.checkpointer.running
    assert not Path(f"{ledger.path}-wal").exists(), sorted(p.name for p in ledger.path.parent.iterdir())


@when('a batch intent naming {count:d} claimed requests and one the ledger never saw is recorded in "{name}"')
def step_intent_with_stranger(context: Context, count: int, name: str) -> None:
    w = world(context)
    ledger = _opened(w, name)
    members = [(new.key, new.custom_id) for new in _new_requests(count)] + [("never-claimed", "never-claimed")]
    w.error = None
    try:
        ledger.record_intent(
            BatchIntent(
                "lt_half_written",
                provider="anthropic",
                endpoint="https://api.anthropic.com",
                members=members,
                request_bytes=1000,
                owner="host/1/claimer",
                until=w.clock.now() + 120,
                now=w.clock.now(),
            )
        )
    except LedgerError as exc:
        w.error = exc


@then('recording it failed, and "{name}" holds no batch and its {count:d} requests still pending, as claimed')
def step_intent_rolled_back(context: Context, name: str, count: int) -> None:
    w = world(context)
    assert isinstance(w.error, LedgerError), w.error
    assert isinstance(w.error.__cause__, sqlite3.IntegrityError), w.error.__cause__
    ledger = _opened(w, name)
    assert ledger.batch("lt_half_written") is None
    assert not ledger.select("SELECT * FROM batch_members")
    records = ledger.requests()
    assert len(records) == count, records
    assert {(r.state, r.batch_id, r.attempts) for r in records} == {(RequestState.PENDING, None, 0)}, records
    [claimed] = w.witnessed["claimed"]
    assert records == claimed, "a failed write changed what was claimed"


# -- exit ------------------------------------------------------------------------------------------------------------

_EXITING_PROGRAM = """
import asyncio, sys
from lowtide import Actor
from lowtide.emulator import Emulator

async def main() -> None:
    emulator = Emulator(processing_seconds=0.2)
    actor = Actor(
        {"name": "exiting", "model": "claude-haiku-4-5", "batch_processing": "batch",
         "batch": {"poll_interval": 0.05, "coalesce_window": 0.05}},
        client=emulator.client(), ledger=sys.argv[1],
    )
    answers = await asyncio.gather(*(actor.run(f"question {i}", key=f"exit-{i}") for i in range(20)))
    print(f"answered {len(answers)}", flush=True)

asyncio.run(main())
"""


@when('a program answers 20 batch-mode calls through the ledger "{name}" and returns without closing anything')
def step_exiting_program(context: Context, name: str) -> None:
    w = world(context)
    program = subprocess.Popen(
        [sys.executable, "-c", _EXITING_PROGRAM, str(w.path(name))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert program.stdout is not None
    answered = program.stdout.readline()  # printed once every call has its answer
    after_answers = time.monotonic()
    try:
        rest, stderr = program.communicate(timeout=120)
    finally:
        program.kill()
    done = subprocess.CompletedProcess(program.args, program.returncode, answered + rest, stderr)
    w.value = {"exit": done, "seconds": time.monotonic() - after_answers}


@then("the program exited with code 0 within {seconds:d} seconds of answering")
def step_program_exited(context: Context, seconds: int) -> None:
    w = world(context)
    done, took = w.value["exit"], w.value["seconds"]
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert "Task exception was never retrieved" not in done.stderr, done.stderr[-2000:]
    assert took < seconds, f"the program took {took:.1f} s to exit once it had answered"


@then("the program answered {count:d} calls")
def step_program_answered(context: Context, count: int) -> None:
    assert world(context).value["exit"].stdout.strip() == f"answered {count}", world(context).value["exit"].stdout


@then('the folder of "{name}" holds no "-wal" or "-shm" file, and the ledger holds {count:d} succeeded requests')
def step_no_wal_left(context: Context, name: str, count: int) -> None:
    path = world(context).path(name)
    left = sorted(p.name for p in path.parent.iterdir() if p.name.startswith(path.name))
    assert left == [path.name], left
    db = sqlite3.connect(path)
    try:
        [(succeeded,)] = db.execute("SELECT count(*) FROM request_view WHERE state = 'succeeded'").fetchall()
    finally:
        db.close()
    assert succeeded == count, succeeded


# -- migrations ------------------------------------------------------------------------------------------------------

_DATA = Path(__file__).resolve().parent.parent / "data"


@given('a copy of "{name}", a ledger lowtide wrote at schema version {version:d}')
def step_copy_of_old_ledger(context: Context, name: str, version: int) -> None:
    source = _DATA / name
    db = sqlite3.connect(f"{source.as_uri()}?mode=ro", uri=True)
    try:
        [(found,)] = db.execute("PRAGMA user_version").fetchall()
    finally:
        db.close()
    assert found == version, found
    world(context).path(name).write_bytes(source.read_bytes())


@when('the actor, given the ledger "{name}", reads back every stored answer')
def step_read_back(context: Context, name: str) -> None:
    w = world(context)
    actor = w.add_actor(dict(w.current_actor().configuration.model_dump()), ledger=str(w.path(name)))
    ledger = actor.ledger
    outcomes: dict[str, Any] = {}

    async def read() -> None:
        for record in ledger.requests():
            if record.state.final:
                try:
                    outcomes[record.key] = await actor.result(record.key)
                except ActorError as exc:
                    outcomes[record.key] = exc

    w.run(read())
    w.value = outcomes


@then('the answers read back are the emulated replies to "{prompts}"')
def step_answers_read_back(context: Context, prompts: str) -> None:
    outcomes: dict[str, Any] = world(context).value
    texts = sorted(o.text for o in outcomes.values() if isinstance(o, ActorResponse))
    expected = [item.strip() for item in prompts.split(",")]
    assert len(texts) == len(expected), texts
    for prompt in expected:
        assert any(text.startswith(emulated_reply_to(prompt)) for text in texts), (prompt, texts)


@then('reading back "{key}" raised a {name:w} saying "{text}"')
def step_read_back_error(context: Context, key: str, name: str, text: str) -> None:
    outcome = world(context).value[key]
    assert type(outcome).__name__ == name, outcome
    assert text in str(outcome), str(outcome)


@then('the ledger "{name}" holds batches in the phases "{phases}"')
def step_phases(context: Context, name: str, phases: str) -> None:
    ledger = open_ledger(world(context).path(name))
    found = sorted(batch.phase or "" for batch in ledger.batches())
    assert found == sorted(item.strip() for item in phases.split(",")), found
