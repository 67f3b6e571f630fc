"""Steps for errors that name their cause: a malformed base URL or key, an API that cannot be reached (a bulk run, a
collect), actor files and command lines a new user gets wrong, ledger locations, and a ledger read where nothing may
be written."""

from __future__ import annotations

import codecs
import os
from pathlib import Path
from typing import Any

from _support import API_KEY, remember_env, world
from step_context import Context, given, then, when

from lowtide import APIUnreachableError, LedgerError
from lowtide.bulk.outputs.results import ItemStatus, RunResult
from lowtide.calls.parking import collect, status
from lowtide.ledger.sqlite import Ledger
from lowtide.ledger.store import NewRequest, open_ledger

# -- a client built from the environment -----------------------------------------------------------------------------


@given('an actor "{name}" in batch mode that builds its own client, with "{variable}" set to "{value}"')
def step_actor_own_client(context: Context, name: str, variable: str, value: str) -> None:
    w = world(context)
    for name_of in {variable, "ANTHROPIC_API_KEY"}:
        remember_env(context, name_of)
    os.environ["ANTHROPIC_API_KEY"] = API_KEY
    os.environ[variable] = _unescaped(value)
    w.add_actor({"name": name, "model": "claude-sonnet-5-5", "batch_processing": "batch"}, client=None)


def _unescaped(value: str) -> str:
    """A value as a table cell writes it, its escapes (`\\n`, `\\t`, `\\x07`, `\\u00a0`) read as the characters."""
    return codecs.decode(value, "unicode_escape")


@given('an actor "{name}" in batch mode given the API key "{key}"')
def step_actor_given_key(context: Context, name: str, key: str) -> None:
    w = world(context)
    settings = {"name": name, "model": "claude-sonnet-5-5", "batch_processing": "batch"}
    w.add_actor(settings, client=None, api_key=_unescaped(key))


@given('an OpenAI actor "{name}" in {mode:w} mode whose API refuses connections')
def step_openai_actor_refused(context: Context, name: str, mode: str) -> None:
    import openai
    from httpx2 import AsyncClient

    w = world(context)
    base = "http://openai.invalid/v1"
    client = openai.AsyncOpenAI(
        api_key="sk-openai-scenario",
        base_url=base,
        http_client=AsyncClient(transport=_refusing_transport(w), base_url=base),
        max_retries=0,
    )
    w.cleanups.append(client.close)
    settings = {"name": name, "provider": "openai", "model": "gpt-5.4-mini", "batch_processing": mode}
    w.add_actor(settings, client=client)


@given('an OpenAI actor "{name}" in batch mode that builds its own client, with "{variable}" set to "{value}"')
def step_openai_actor_own_client(context: Context, name: str, variable: str, value: str) -> None:
    w = world(context)
    for name_of in {variable, "OPENAI_API_KEY"}:
        remember_env(context, name_of)
    os.environ["OPENAI_API_KEY"] = "sk-openai-scenario"
    os.environ[variable] = _unescaped(value)
    settings = {"name": name, "provider": "openai", "model": "gpt-5.4-mini", "batch_processing": "batch"}
    w.add_actor(settings, client=None)


@given('an OpenAI actor "{name}" in batch mode that builds its own client, with "{variable}" set to ""')
def step_openai_actor_empty_variable(context: Context, name: str, variable: str) -> None:
    step_openai_actor_own_client(context, name, variable, "")


@then('the error message does not hold "{text}"')
def step_error_not_holding(context: Context, text: str) -> None:
    error = world(context).failure()
    assert text not in str(error), str(error)


# -- an API that cannot be reached -----------------------------------------------------------------------------------


@when("the actor maps {count:d} prompts, {per:d} to a batch and one batch at a time")
def step_map_prompts(context: Context, count: int, per: int) -> None:
    w = world(context)
    prompts = [f"Review {n}: the tide came in." for n in range(count)]
    options = {"items_per_batch": per, "max_parallel_batches": 1, "run_id": "tides"}
    w.value = w.attempt(lambda: w.run(w.current_actor().map(prompts, **options)))


@then('items {first:d} and {second:d} failed with APIUnreachableError saying "{message}"')
def step_items_unreachable(context: Context, first: int, second: int, message: str) -> None:
    result: RunResult = world(context).value
    for index in (first, second):
        item = result.items[index]
        assert item.status is ItemStatus.FAILED, item
        assert isinstance(item.error, APIUnreachableError), item.error
        assert str(item.error) == message, str(item.error)


@then('the other {count:d} items were not run, each saying "{reason}"')
def step_items_not_run(context: Context, count: int, reason: str) -> None:
    result: RunResult = world(context).value
    rest = [item for item in result.items if item.status is not ItemStatus.FAILED]
    assert len(rest) == count, result.items
    for item in rest:
        assert item.status is ItemStatus.NOT_RUN, item
        assert item.reason == reason, item.reason


@then("the ledger holds no request that failed")
def step_no_failed_request(context: Context) -> None:
    requests = world(context).ledger().requests()
    assert all(request.state.value != "failed" for request in requests), [(r.key, r.state) for r in requests]


@when("the same prompts are mapped again through the emulator")
def step_map_again(context: Context) -> None:
    w = world(context)
    first = w.current_actor()
    w.add_actor(first.configuration.model_dump(), client=w.emu.client())
    step_map_prompts(context, len(w.value.items), 2)


@then("this time all {count:d} items succeeded")
def step_all_succeeded(context: Context, count: int) -> None:
    result: RunResult = world(context).value
    assert [item.status for item in result.items] == [ItemStatus.SUCCEEDED] * count, result.items


@given('a program submitted the call "{key}" through the emulator and ended, its batch still running')
def step_submitted(context: Context, key: str) -> None:
    w = world(context)

    async def program() -> None:
        actor = w.current_actor()
        w.tickets[key] = await actor.submit("Where is the harbour?", key=key)
        await actor.aclose()

    w.in_program(program)


@when("lowtide collects the ledger through an API whose connections are refused")
def step_collect_refused(context: Context) -> None:
    w = world(context)
    client = w.client_over(_refusing_transport(w))
    w.attempt(lambda: w.run(collect(w.ledger(), client=client, clock=w.clock)))


@when("lowtide collects the ledger through the emulator, once its batch has ended")
def step_collect_emulator(context: Context) -> None:
    w = world(context)
    w.clock.advance(120)
    w.attempt(lambda: w.run(collect(w.ledger(), client=w.emu.client(), clock=w.clock)))


@then('the request "{key}" is {state} in the ledger')
def step_request_state(context: Context, key: str, state: str) -> None:
    record = world(context).ledger().request(key)
    assert record is not None, key
    assert record.state.value == state, record


def _refusing_transport(w: Any) -> Any:
    import errno

    import httpx2
    from _support import unreachable_api

    refused = ConnectionRefusedError(errno.ECONNREFUSED, "Connect call failed")
    return unreachable_api(httpx2.ConnectError, cause=refused, tried=w.tried)


@when("an Actor is made from {configuration}")
def step_actor_made_from(context: Context, configuration: str) -> None:
    import ast

    from lowtide import Actor

    w = world(context)
    w.attempt(lambda: Actor(ast.literal_eval(configuration), client=w.client, clock=w.clock))


# -- files and command lines -----------------------------------------------------------------------------------------


@given('the actor file "{name}" holds ""')
def step_actor_file_empty(context: Context, name: str) -> None:
    world(context).path(name).write_text("", encoding="utf-8")


@given('the actor file "{name}" holds "{content}"')
def step_actor_file_holds(context: Context, name: str, content: str) -> None:
    text = content.replace("\\n", "\n")
    world(context).path(name).write_text(text + ("\n" if text else ""), encoding="utf-8")


@given("a valid actor file and a file of prompts in the scenario's folder")
def step_valid_files(context: Context) -> None:
    w = world(context)
    w.path("actor.yaml").write_text(
        "name: reader\nmodel: claude-sonnet-5-5\nbatch_processing: batch\nmax_tokens: 64\n", encoding="utf-8"
    )
    w.path("prompts.jsonl").write_text('{"prompt": "Is the harbour open?"}\n', encoding="utf-8")


@when('"{command}" runs in the scenario\'s folder, FOLDER being its path')
def step_cli_with_folder(context: Context, command: str) -> None:
    from _support import run_cli

    w = world(context)
    folder = w.path("actor.yaml").parent
    run_cli(w, command.replace("FOLDER", str(folder)), ledger=None, cwd=folder)


@then('the command printed nothing on stderr holding "{text}"')
def step_stderr_not_holding(context: Context, text: str) -> None:
    err = world(context).value["err"]
    assert text not in err, err


@then("the command printed no traceback")
def step_no_traceback_at_all(context: Context) -> None:
    err = world(context).value["err"]
    assert "Traceback" not in err, err
    assert "Error:" not in err, err


@then('the scenario\'s folder holds the ledger "{name}", and nothing named "sqlite:"')
def step_folder_holds_ledger(context: Context, name: str) -> None:
    folder = world(context).path("actor.yaml").parent
    assert (folder / name).is_file(), sorted(p.name for p in folder.iterdir())
    assert not (folder / "sqlite:").exists(), sorted(p.name for p in folder.iterdir())


# -- a ledger read where nothing may be written ------------------------------------------------------------------------


@given('a ledger file "{name}" holding {count:d} requests, closed')
def step_closed_ledger(context: Context, name: str, count: int) -> None:
    w = world(context)
    path = w.path(name)
    ledger = Ledger(path)
    now = w.clock.now()
    ledger.claim(
        [NewRequest(f"k-{i}", f"k-{i}", "reader", "m", {"prompt": f"p{i}"}) for i in range(count)],
        owner="someone",
        until=now,
        now=now,
    )
    ledger.close()
    w.witnessed["ledger"] = [path, path.read_bytes(), path.stat().st_mtime_ns]


@given('no "-wal" file can be made beside "{name}" (a folder of that name stands there)')
def step_no_wal(context: Context, name: str) -> None:
    w = world(context)
    w.path(f"{name}-wal").mkdir()


@when('"{name}" is opened read-only and its status read')
def step_read_only_status(context: Context, name: str) -> None:
    w = world(context)
    store = open_ledger(w.path(name), read_only=True)
    w.value = status(store)
    w.store = store


@then("the status shows {count:d} requests")
def step_status_count(context: Context, count: int) -> None:
    report = world(context).value
    assert len(report.tickets) == count, report.tickets


@then('the file "{name}" has the bytes and modification time it had, and no "-wal" beside it holds anything')
def step_file_unchanged(context: Context, name: str) -> None:
    w = world(context)
    path, data, mtime = w.witnessed["ledger"]
    assert path.read_bytes() == data, "the ledger file changed"
    assert path.stat().st_mtime_ns == mtime, (path.stat().st_mtime_ns, mtime)
    wal = Path(f"{path}-wal")
    assert not wal.is_file() or wal.stat().st_size == 0, wal.stat().st_size


@then("a write to it is refused with a LedgerError")
def step_write_refused(context: Context) -> None:
    store = world(context).store
    assert store is not None
    refused: LedgerError | None = None
    try:
        store.claim([NewRequest("late", "late", "reader", "m", {"prompt": "x"})], owner="me", until=0.0, now=0.0)
    except LedgerError as exc:
        refused = exc
    assert refused is not None, "a read-only ledger took a write"
    assert "could not be written" in str(refused), str(refused)
