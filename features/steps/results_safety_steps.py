"""Steps for answers that are never lost: results downloads that stay broken, result lines lowtide cannot read, a
lone surrogate past every check, and the files a bulk run writes (never over what a user gave)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any, cast
from unittest import mock

from _openai_provider_support import MODEL as OPENAI_MODEL
from _openai_provider_support import openai_client
from _support import check_error, emulated_reply_to, world
from step_context import Context, given, step, then, when

from lowtide.batching.engine.batch_engine import BatchEngine, GroupCall
from lowtide.bulk.outputs.results import ItemStatus, RunResult
from lowtide.bulk.recorded.status import run_status
from lowtide.calls import parking
from lowtide.emulator.core.faults import garble_kind
from lowtide.emulator.core.order import unrelated_order
from lowtide.errors import ActorError, BatchRequestUnreadable
from lowtide.ledger.store import RequestState, stored_json

# Where each provider's batch results are downloaded from, and where the emulator counts its batches.
_RESULTS_ROUTE = {"Anthropic": "batches.results", "OpenAI": "openai.files.content"}


def _provider(context: Context) -> str:
    return str(world(context).asked["provider"])


def _created(context: Context, provider: str) -> tuple[dict[str, int], int]:
    """How often the API created each request, by the request's key (its custom id without the ledger's identity),
    and how many batches it created."""
    w = world(context)
    emu = w.emu
    created = emu.openai.created_custom_ids if provider == "OpenAI" else emu.created_custom_ids
    suffix = f"_{w.current_actor().ledger.identity()}"
    by_key = {custom_id.removesuffix(suffix): count for custom_id, count in created.items()}
    return by_key, emu.openai.created_batches if provider == "OpenAI" else emu.created_batches


def _result(context: Context) -> RunResult:
    bulk = world(context).asked.get("bulk", {})
    result = bulk.get("result")
    assert isinstance(result, RunResult), f"no run result (error: {world(context).error!r})"
    return result


def _indexes(text: str) -> list[int]:
    return [int(part) for part in text.replace(" and ", ", ").split(", ")]


# -- the API and the actor -------------------------------------------------------------------------------------------


@given('an actor "{name}" of the {provider} API in batch mode')
def step_provider_actor(context: Context, name: str, provider: str) -> None:
    w = world(context)
    w.asked["provider"] = provider
    batch = {"poll_interval": 10, "max_attempts": 1, "coalesce_window": 0.5}
    if provider == "OpenAI":
        w.add_actor({"name": name, "provider": "openai", "model": OPENAI_MODEL, "max_tokens": 64,
                     "batch_processing": "batch", "batch": batch})  # fmt: skip
    else:
        w.add_actor({"name": name, "model": "claude-sonnet-5-5", "max_tokens": 64, "batch_processing": "batch",
                     "batch": batch})  # fmt: skip


@given('an actor "{name}" of the {provider} API in batch mode, with {attempts:d} attempts a request')
def step_provider_actor_attempts(context: Context, name: str, provider: str, attempts: int) -> None:
    step_provider_actor(context, name, provider)
    w = world(context)
    settings = w.current_actor().configuration.model_dump(mode="json")
    w.add_actor({**settings, "batch": {**settings["batch"], "max_attempts": attempts}})


@given('the first result line of the run "{run_id}" ends as errored with {error_type:w}, in the first batch only')
def step_first_line_errored(context: Context, run_id: str, error_type: str) -> None:
    """The emulator writes a batch's result lines in its own order (`unrelated_order` of their custom ids, the run's
    items sent in input order): the one first in it fails once (an outcome armed by custom id; the retry has its
    own)."""
    w = world(context)
    keys = [f"{run_id}-{n}" for n in range(len(w.asked["bulk"]["prompts"]))]
    first = unrelated_order(range(len(keys)), lambda index: w.custom_id(keys[index]))[0]
    w.asked["first line"] = keys[first]
    w.emu.faults.outcome(w.custom_id(keys[first]), "errored", error_type=error_type)
    # The first batch's outcomes are settled as it ends: the outcome is taken back before its results are read.
    w.hooks.before("batches.results", lambda: w.emu.faults.restore_outcomes({}))


@then("the item whose first line errored succeeded in a batch of its own, the other waits on the first batch")
def step_first_line_retried(context: Context) -> None:
    w = world(context)
    first = w.asked["first line"]
    result = _result(context)
    [answered] = [item for item in result if item.key == first]
    [waiting] = [item for item in result if item.key != first]
    assert answered.status is ItemStatus.SUCCEEDED, answered
    assert waiting.status is ItemStatus.WAITING, waiting
    assert answered.as_json()["batch_id"] != waiting.batch_id, (answered.as_json(), waiting)
    created, made = _created(context, "Anthropic")
    assert created == {first: 2, waiting.key: 1}, created
    assert made == 2, made


@given("every download of a batch's results will break after {lines:d} lines, {times:d} times in a row")
def step_cut_every(context: Context, lines: int, times: int) -> None:
    world(context).emu.faults.cut(_RESULTS_ROUTE[_provider(context)], after_lines=lines, times=times)


@given("the next download of a batch's results will break after {lines:d} lines")
def step_cut_next(context: Context, lines: int) -> None:
    world(context).emu.faults.cut(_RESULTS_ROUTE[_provider(context)], after_lines=lines)


@given('the {provider} API will garble the result line of "{key}" as {kind}')
def step_garble(context: Context, provider: str, key: str, kind: str) -> None:
    assert provider == _provider(context), provider
    w = world(context)
    w.emu.faults.garble(w.custom_id(key), garble_kind(kind))


@then("the {provider} API was sent the results download {count:d} times")
def step_results_downloads(context: Context, provider: str, count: int) -> None:
    calls = world(context).emu.calls
    assert calls[_RESULTS_ROUTE[provider]] == count, calls


@then("the {provider} API created each request of the run once, in {batches:d} batch")
def step_created_each_once(context: Context, provider: str, batches: int) -> None:
    created, made = _created(context, provider)
    keys = [item.key for item in _result(context)]
    assert all(created.get(key) == 1 for key in keys), {key: created.get(key) for key in keys}
    assert set(created) == set(keys), created
    assert made == batches, made


@then('the {provider} API created "{first}", "{second}" and "{third}" once, and item {index:d} once per attempt')
def step_created_named(context: Context, provider: str, first: str, second: str, third: str, index: int) -> None:
    created, _ = _created(context, provider)
    assert all(created.get(key) == 1 for key in (first, second, third)), created
    run_id = first.rsplit("-", 1)[0]
    assert created.get(f"{run_id}-{index}") == 1, created
    assert created.get(f"{run_id}-{index}-a2") == 1, created


@then('the {provider} API created "{key}" once')
def step_created_key_once(context: Context, provider: str, key: str) -> None:
    created, made = _created(context, provider)
    assert created == {key: 1}, created
    assert made == 1, made


@then("the API created {count:d} batch in all")
def step_created_in_all(context: Context, count: int) -> None:
    assert world(context).emu.created_batches == count, world(context).emu.created_batches


@then("the {provider} API created no batch")
def step_created_none(context: Context, provider: str) -> None:
    created, made = _created(context, provider)
    assert not created, created
    assert made == 0, made


@when("lowtide collects the ended batches of the {provider} API")
def step_collect_provider(context: Context, provider: str) -> None:
    w = world(context)
    client = openai_client(w) if provider == "OpenAI" else w.client_over(w.transport())
    w.in_program(lambda: parking.collect(w.ledger(), client=client, clock=w.clock))


# -- what a run reports ----------------------------------------------------------------------------------------------


@then("the run's items are {done:d} succeeded and {waiting:d} waiting on their batch, none failed")
def step_items_waiting(context: Context, done: int, waiting: int) -> None:
    result = _result(context)
    counts = result.counts()
    assert counts["succeeded"] == done, counts
    assert counts["waiting"] == waiting, counts
    assert counts["failed"] == 0, counts
    assert counts["pending"] == 0, counts
    assert len(result.waiting) == waiting, result.counts()
    assert not result.ok, result.counts()
    assert not result.to_retry, result.counts()
    assert f"{waiting} waiting" in result.summary(), result.summary()


@then("the run's items are {done:d} succeeded, {failed:d} failed and {waiting:d} waiting")
def step_items_counted(context: Context, done: int, failed: int, waiting: int) -> None:
    counts = _result(context).counts()
    assert (counts["succeeded"], counts["failed"], counts["waiting"]) == (done, failed, waiting), counts


@then("each waiting item names the batch it waits on, and the run's summary says how to collect it")
def step_waiting_named(context: Context) -> None:
    from lowtide.cli.bulk_commands import waiting_line

    result = _result(context)
    batches = {item.batch_id for item in result.waiting}
    assert len(batches) == 1, batches
    assert None not in batches, batches
    [batch] = batches
    for item in result.waiting:
        line = item.as_json()
        assert line["status"] == "waiting", line
        assert line["batch_id"] == batch, line
        assert item.reason is not None, item.reason
        assert f"waits on batch {batch}" in item.reason, item.reason
        error = line["error"]
        assert isinstance(error, dict), line
        assert cast("dict[str, object]", error)["type"] == "APIConnectionError", line
    advice = waiting_line(result.report())
    assert advice is not None, advice
    assert "run the same command again" in advice, advice
    world(context).asked["waiting batch"] = batch


@then('lowtide status of the run "{run_id}" says {count:d} items wait on that batch and how to collect them')
def step_status_waiting(context: Context, run_id: str, count: int) -> None:
    w = world(context)
    status = run_status(w.ledger(), run_id)
    batch = w.asked["waiting batch"]
    assert status.counts["waiting"] == count, status.counts
    assert not status.finished, status.counts
    assert status.waiting == {batch: count}, status.waiting
    lines = "\n".join(status.lines())
    assert f"{count} item(s) wait on batch {batch}" in lines, lines
    assert "lowtide collect" in lines, lines
    assert status.as_json()["waiting"] == {batch: count}, status.as_json()


@then('lowtide status of the run "{run_id}" says {count:d} items succeeded and none waits')
def step_status_succeeded(context: Context, run_id: str, count: int) -> None:
    status = run_status(world(context).ledger(), run_id)
    assert status.counts["succeeded"] == count, status.counts
    assert status.finished, status.counts
    assert not status.waiting, status.counts


@then('lowtide status of the run "{run_id}" says {count:d} items failed')
def step_status_failed(context: Context, run_id: str, count: int) -> None:
    status = run_status(world(context).ledger(), run_id)
    assert status.counts["failed"] == count, status.counts
    assert status.finished, status.counts
    assert sum(status.reasons.values()) == count, status.reasons


@then("none of the run's items is reported as anything but succeeded, failed with the API's error, or waiting")
def step_no_lost(context: Context) -> None:
    for item in _result(context):
        if item.status is ItemStatus.FAILED:
            check_error(item.error, "BatchRequestErrored")
        else:
            assert item.status in (ItemStatus.SUCCEEDED, ItemStatus.WAITING), item


@then('results {done} succeeded, and result {bad:d} failed with {name:w} saying "{says}"')
def step_results_one_bad(context: Context, done: str, bad: int, name: str, says: str) -> None:
    result = _result(context)
    prompts = world(context).asked["bulk"]["prompts"]
    for index in _indexes(done):
        item = result[index]
        assert item.status is ItemStatus.SUCCEEDED, item
        assert item.text is not None, item.text
        assert item.text.startswith(emulated_reply_to(prompts[index])[:24]), item.text
    item = result[bad]
    assert item.status is ItemStatus.FAILED, item
    check_error(item.error, name)
    assert says in str(item.error), item.error
    assert len(result) == len(_indexes(done)) + 1, len(result)


@then('the ledger keeps the raw line of "{key}" in its error, as the API sent it')
def step_ledger_raw(context: Context, key: str) -> None:
    record = world(context).ledger().request(key)
    assert record is not None, record
    assert record.state is RequestState.FAILED, record
    assert record.error is not None, record
    assert record.error["class"] == "BatchRequestUnreadable", record.error
    raw = record.error["raw_line"]
    assert f'"custom_id":"{world(context).custom_id(key)}"' in raw, raw
    error = _result(context)[int(key.rsplit("-", 1)[1])].error
    assert isinstance(error, BatchRequestUnreadable), error
    assert error.raw_line == raw, error


@then('the raw results in "{folder}" hold each request\'s line once, "{key}" as the API sent it')
def step_raw_results(context: Context, folder: str, key: str) -> None:
    w = world(context)
    [path] = list((w.path(folder) / "raw").iterdir())
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"", "the raw results end with a newline"
    named = [line for line in lines[:-1] if f'"custom_id":"{w.custom_id(key)}"'.encode() in line]
    assert len(named) == 1, named
    others = [json.loads(line) for line in lines[:-1] if line not in named]
    custom_ids = sorted(line["custom_id"] for line in others)
    expected = sorted(w.custom_id(item.key) for item in _result(context) if item.key != key)
    assert custom_ids == expected, custom_ids
    kind = w.emu.faults.garbled(w.custom_id(key))
    assert kind is not None
    if kind == "unknown-shape":
        return  # whole JSON: kept as lowtide read it
    record = w.ledger().request(key)
    assert record is not None, record
    assert record.error is not None, record
    assert named[0].decode("utf-8", "backslashreplace") == record.error["raw_line"], (named[0], record.error)
    if kind == "lone-surrogate":
        assert b"\\ud800" in named[0], named[0]
    elif kind == "not-an-object":
        assert isinstance(json.loads(named[0]), list), named[0]
    else:
        try:
            json.loads(named[0].decode("utf-8"))
        except ValueError:
            return  # as garbled as the API sent it
        raise AssertionError(f"the {kind} line reads as JSON: {named[0]!r}")


# -- a lone surrogate, past every check ------------------------------------------------------------------------------


@when(
    'the actor\'s batch engine sends "{first}", "{second}" and "{third}" as one batch, past every check before sending'
)
def step_engine_sends(context: Context, first: str, second: str, third: str) -> None:
    """The engine's own path for a group (what a bulk run sends through), given the provider's bodies as they are:
    no pre-send check between them and the API."""
    w = world(context)
    actor = w.current_actor()
    prompts = [text.encode().decode("unicode_escape") if "\\u" in text else text for text in (first, second, third)]
    assert "\ud800" in prompts[1]
    codec = actor.batch_codec()
    backend = actor.batch_backend()
    keys = [f"surrogate-{n}" for n in range(3)]

    async def send() -> list[Any]:
        engine = BatchEngine(backend, actor.ledger, endpoint=backend.endpoint, settings=actor.configuration.batch,
                             clock=w.clock)  # fmt: skip
        try:
            calls = []
            for key, prompt in zip(keys, prompts, strict=True):
                params: dict[str, Any] = {
                    "model": actor.configuration.model,
                    "max_tokens": 64,
                    "messages": [{"role": "user", "content": prompt}],
                }
                calls.append(GroupCall(key, params, codec.request_size(w.custom_id(key), stored_json(params))))
            futures = await engine.send_group(calls, actor=actor.name)
            return list(await asyncio.gather(*(futures[key] for key in keys), return_exceptions=True))
        finally:
            await engine.aclose()

    w.asked["outcomes"] = dict(zip(keys, w.run(send()), strict=True))


@then('each of the {count:d} calls failed with {name:w} saying "{says}"')
def step_each_failed(context: Context, count: int, name: str, says: str) -> None:
    outcomes = world(context).asked["outcomes"]
    assert len(outcomes) == count, outcomes
    for outcome in outcomes.values():
        assert isinstance(outcome, ActorError), outcome
        check_error(outcome, name)
        assert says in str(outcome), outcome


@then("the ledger holds the {count:d} requests, each pending in no batch, ready to be sent again")
def step_ledger_pending(context: Context, count: int) -> None:
    ledger = world(context).ledger()
    keys = list(world(context).asked["outcomes"])
    records = [ledger.request(key) for key in keys]
    assert len(records) == count, records
    assert all(r is not None for r in records), records
    for record in records:
        assert record is not None, record
        assert record.state is RequestState.PENDING, record
        assert record.batch_id is None, record
        assert record.attempts == 0, record


# -- the files a run writes ------------------------------------------------------------------------------------------


@given('"{name}" in the scenario\'s folder is a symbolic link to "{target}"')
def step_symlink(context: Context, name: str, target: str) -> None:
    w = world(context)
    w.path(name).symlink_to(w.path(target))


@given('"{name}" in the scenario\'s folder is a hard link to "{target}"')
def step_hardlink(context: Context, name: str, target: str) -> None:
    w = world(context)
    os.link(w.path(target), w.path(name))


@given('the folder "{name}" in the scenario\'s folder holds the file "{file}" of {count:d} prompts')
def step_folder_prompts(context: Context, name: str, file: str, count: int) -> None:
    folder = world(context).path(name)
    (folder / file).parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"prompt": f"Prompt {n}"}) for n in range(count)]
    (folder / file).write_text("\n".join(lines) + "\n", encoding="utf-8")


@step('the bytes of "{name}" are noted')
def step_note_bytes(context: Context, name: str) -> None:
    w = world(context)
    w.asked.setdefault("noted files", {})[name] = w.path(name).read_bytes()


@then('"{name}" is as it was')
def step_as_it_was(context: Context, name: str) -> None:
    w = world(context)
    assert w.path(name).read_bytes() == w.asked["noted files"][name], w.path(name).read_bytes()[:200]


@then("the scenario's folder holds no partial file")
def step_no_partial(context: Context) -> None:
    w = world(context)
    partial = [str(path) for path in Path(w.path(".")).rglob("*.partial")]
    assert not partial, partial


@then('"{name}" holds the results of run "{run_id}", {count:d} lines, all succeeded')
def step_holds_results(context: Context, name: str, run_id: str, count: int) -> None:
    lines = [json.loads(line) for line in world(context).path(name).read_text(encoding="utf-8").splitlines()]
    assert [line["key"] for line in lines] == [f"{run_id}-{n}" for n in range(count)], lines
    assert all(line["status"] == "succeeded" for line in lines), [line["status"] for line in lines]


@when('the actor runs the prompts as run "{run_id}", writing its results to "{name}", but the rename never happens')
def step_map_no_rename(context: Context, run_id: str, name: str) -> None:
    w = world(context)
    real = os.replace

    def broken(source: Any, target: Any) -> None:
        if Path(target).name == name:
            raise OSError(28, "No space left on device (the rename never happens)")
        real(source, target)

    with mock.patch.object(os, "replace", broken):
        _map_into(w, run_id, out=w.path(name))


@when('the actor runs the prompts as run "{run_id}", writing its results to "{name}"')
def step_map_out(context: Context, run_id: str, name: str) -> None:
    w = world(context)
    _map_into(w, run_id, out=w.path(name))


@when('the actor runs the prompts as run "{run_id}", writing its results into the folder "{name}"')
def step_map_results_dir(context: Context, run_id: str, name: str) -> None:
    w = world(context)
    _map_into(w, run_id, results_dir=w.path(name))


def _map_into(w: Any, run_id: str, **options: Any) -> None:
    w.error = None
    try:
        result = w.run(w.current_actor().map(w.asked["bulk"]["prompts"], run_id=run_id, **options))
    except (ActorError, OSError) as exc:
        w.error = exc
        return
    w.asked["bulk"]["result"] = result


@when('the actor runs a job sending "{name}" as run "{run_id}", writing its results to "{out}"')
def step_map_jobs_out(context: Context, name: str, run_id: str, out: str) -> None:
    w = world(context)
    w.asked.setdefault("bulk", {})["prompts"] = [{"prompt": "Summarize it.", "file": str(w.path(name))}]
    _map_into(w, run_id, out=w.path(out))


@then('the run failed with {name:w} saying "{says}"')
def step_run_failed(context: Context, name: str, says: str) -> None:
    error = world(context).error
    assert error is not None, "the run did not fail"
    assert type(error).__name__ == name, error
    assert says in str(error), error


@given('the raw results of the batch in "{folder}" end with half a line, as a process killed while writing leaves them')
def step_torn_raw(context: Context, folder: str) -> None:
    [path] = list((world(context).path(folder) / "raw").iterdir())
    with path.open("ab") as out:
        out.write(b'{"custom_id":"torn-0","result":{"type":"succ')


@then('every line of the raw results in "{folder}" is whole, one per request of the run')
def step_raw_whole(context: Context, folder: str) -> None:
    [path] = list((world(context).path(folder) / "raw").iterdir())
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    w = world(context)
    assert sorted(line["custom_id"] for line in lines) == sorted(w.custom_id(item.key) for item in _result(context)), (
        lines
    )
