"""Steps for bulk runs: `actor.map`, `BulkRun`, splitting, limits, retry, results on disk."""

from __future__ import annotations

import asyncio
import hashlib
import json
import struct
import zlib
from decimal import Decimal
from typing import Any

from _bulk_support import anthropic_batches as _batches
from _bulk_support import bulk_state as _bulk
from _bulk_support import prompts as _prompts
from _bulk_support import run_result as _result
from _support import API_KEY, World, emulated_reply_to, new_program_actor, world
from pydantic import BaseModel, Field
from step_context import Context, given, then, when

from lowtide.bulk.outputs.results import ItemStatus, RunResult
from lowtide.bulk.planning.batches import split
from lowtide.bulk.progress.reporters import RunProgress
from lowtide.bulk.running.runner import BulkRun
from lowtide.config.actors import BatchProcessingMode
from lowtide.core.clock import ManualClock
from lowtide.cost.pricing import worst_case_cost
from lowtide.errors import ActorError
from lowtide.ledger.sqlite import Ledger
from lowtide.providers.anthropic.mapping import to_message_params


class Verdict(BaseModel):
    sentiment: str
    score: int


class Permit(BaseModel):
    """Its pattern cannot travel in a strict JSON schema, so the emulated answers break it."""

    code: str = Field(pattern=r"^[A-Z]{3}-\d{4}$")


class Opening(BaseModel):
    answer: str


MODELS: dict[str, type[BaseModel]] = {"Verdict": Verdict, "Permit": Permit, "Opening": Opening}


def _map(w: World, inputs: list[Any] | None = None, **options: Any) -> RunResult | None:
    actor = w.current_actor()
    jobs = inputs if inputs is not None else _prompts(w)
    w.error = None
    try:
        result = w.run(actor.map(jobs, **options))
    except ActorError as exc:
        w.error = exc
        return None
    _bulk(w).setdefault("results", []).append(result)
    _bulk(w)["result"] = result
    return result


# Turns of the event loop every sleep gives the others first: a run's time limit is a timer that only sleeps, and
# without them it would race through virtual time while a create is on its way to the in-process API.
_SETTLE = 50


def _cost_limit(w: World, items: float) -> Decimal:
    """The worst case of `items` requests like the first prompt (the prompts are all of one size)."""
    params = to_message_params(w.current_actor().request(_prompts(w)[0]))
    worst = worst_case_cost(params, mode=BatchProcessingMode.BATCH)
    assert worst is not None
    limit = worst * Decimal(str(items))
    _bulk(w).setdefault("limit", limit)
    return limit


def _sizes(batch: Any) -> int:
    c = batch.request_counts
    return c.processing + c.succeeded + c.errored + c.canceled + c.expired


def _numbers(text: str) -> list[int]:
    return [int(part) for part in text.replace(" and ", ", ").split(", ")]


# -- inputs ----------------------------------------------------------------------------------------------------------


@given('{count:d} prompts "{template}"')
def step_prompts(context: Context, count: int, template: str) -> None:
    _bulk(world(context))["prompts"] = [template.replace("{n}", str(n)) for n in range(count)]


@given('{count:d} prompts "{template}", with prompt {bad:d} ending as errored')
def step_prompts_one_errored(context: Context, count: int, template: str, bad: int) -> None:
    w = world(context)
    step_prompts(context, count, template)
    _prompts(w)[bad] += " [[emulator:errored]]"


@given('{count:d} prompts "{template}", with prompt {bad:d} ending as errored and prompt {late:d} as expired')
def step_prompts_marked(context: Context, count: int, template: str, bad: int, late: int) -> None:
    w = world(context)
    step_prompts_one_errored(context, count, template, bad)
    _prompts(w)[late] += " [[emulator:expired]]"


@given(
    '{count:d} prompts "{template}", with prompt {bad:d} ending as errored and prompt {late:d} as expired,'
    " in the first batch only"
)
def step_prompts_faulted(context: Context, count: int, template: str, bad: int, late: int) -> None:
    w = world(context)
    step_prompts(context, count, template)
    w.emu.faults.outcome(w.custom_id(f"reviews-{bad}"), "errored")
    w.emu.faults.outcome(w.custom_id(f"reviews-{late}"), "expired")


@given('{count:d} prompts "{template}" padded to {size:d} bytes')
def step_prompts_padded(context: Context, count: int, template: str, size: int) -> None:
    w = world(context)
    step_prompts(context, count, template)
    _bulk(w)["prompts"] = [p + " " + "x" * (size - len(p) - 1) for p in _prompts(w)]


@given('{count:d} prompts "{template}", with prompt {big:d} padded to {size:d} bytes')
def step_prompts_one_padded(context: Context, count: int, template: str, big: int, size: int) -> None:
    w = world(context)
    step_prompts(context, count, template)
    _prompts(w)[big] += " " + "x" * size


@given('a text file "{name}" with "{text}"')
def step_text_file(context: Context, name: str, text: str) -> None:
    world(context).path(name).write_text(text, encoding="utf-8")


@given('an image file "{name}"')
def step_image_file(context: Context, name: str) -> None:
    world(context).path(name).write_bytes(tiny_png())


@given('an image file "{name}" of {size:d} bytes')
def step_big_image_file(context: Context, name: str, size: int) -> None:
    png = tiny_png()
    # Bytes after the end of a PNG are ignored by readers: the file stays an image of the size wanted.
    world(context).path(name).write_bytes(png + b"\x00" * (size - len(png)))


def tiny_png(width: int = 2, height: int = 2) -> bytes:
    """A valid PNG of white pixels."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + b"\xff\xff\xff" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


# -- running ---------------------------------------------------------------------------------------------------------


@when("the actor maps the prompts")
def step_map(context: Context) -> None:
    _map(world(context))


@when("the actor maps the prompts with {count:d} items per batch")
def step_map_per_batch(context: Context, count: int) -> None:
    _map(world(context), items_per_batch=count)


@when("the actor maps the prompts with {count:d} items per batch again")
def step_map_again(context: Context, count: int) -> None:
    _map(world(context), items_per_batch=count)


@when('the actor maps the prompts with {count:d} items per batch as run "{run_id}"')
def step_map_per_batch_as(context: Context, count: int, run_id: str) -> None:
    _map(world(context), items_per_batch=count, run_id=run_id)


@when('the actor maps the prompts as run "{run_id}"')
def step_map_as(context: Context, run_id: str) -> None:
    _map(world(context), run_id=run_id)


@when('the actor maps the prompts "{prompt}" as run "{run_id}"')
def step_map_other_as(context: Context, prompt: str, run_id: str) -> None:
    _map(world(context), [prompt], run_id=run_id)


@when('the actor runs the prompts as run "{run_id}": alone, with the id "{item_id}", with max_tokens {max_tokens:d}')
def step_run_mixed(context: Context, run_id: str, item_id: str, max_tokens: int) -> None:
    """Three ways to give a job: a prompt alone, a prompt with an id (both made from the run's template) and a prompt
    with an override (built on its own)."""
    w = world(context)
    first, second, third = _prompts(w)[:3]
    run = w.current_actor().bulk(run_id=run_id, progress="none")
    run.add_jobs([first, {"prompt": second, "id": item_id}, {"prompt": third, "max_tokens": max_tokens}])
    _bulk(w)["run"] = run
    _bulk(w)["result"] = w.run(run.run())


@then("the ledger holds the run's fingerprint and jobs as each job written out on its own gives them")
def step_fingerprint_general(context: Context) -> None:
    """What every release wrote, job by job: a run recorded before (or by another path) resumes under the same id."""
    w = world(context)
    run: BulkRun = _bulk(w)["run"]

    def canonical(value: object) -> str:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)

    digest = hashlib.sha256(canonical(run.fingerprint_settings()).encode())
    for job in run.jobs:
        digest.update(b"\x00" + canonical(job.model_dump(mode="json")).encode())
    store = w.current_actor().ledger.run_store
    assert run.run_id is not None
    record = store.run(run.run_id)
    assert record is not None
    assert record.fingerprint == digest.hexdigest(), (record, digest.hexdigest())
    assert [row.job for row in store.items(run.run_id)] == [job.model_dump(mode="json") for job in run.jobs]


@when("the actor maps the prompts with {count:d} items per batch and a cost limit of {items:g} items' worst case")
def step_map_cost_limit(context: Context, count: int, items: float) -> None:
    w = world(context)
    _map(w, items_per_batch=count, max_cost_usd=_cost_limit(w, items))


@when(
    "the actor maps the prompts with {count:d} items per batch, {parallel:d} batches at a time,"
    " and a cost limit of {items:g} items' worst case"
)
def step_map_cost_limit_parallel(context: Context, count: int, parallel: int, items: float) -> None:
    w = world(context)
    _map(w, items_per_batch=count, max_parallel_batches=parallel, max_cost_usd=_cost_limit(w, items))


@when(
    "the actor maps the prompts with {count:d} items per batch, {parallel:d} batch at a time,"
    " and a time limit of {seconds:g} seconds"
)
def step_map_time_limit(context: Context, count: int, parallel: int, seconds: float) -> None:
    w = world(context)
    if isinstance(w.clock, ManualClock):  # (virtual time on a database server waits for every task already)
        w.clock.settle = _SETTLE
    _map(w, items_per_batch=count, max_parallel_batches=parallel, time_limit=seconds)


@when(
    "the actor maps the prompts with {count:d} items per batch, a cost limit of {items:g} items' worst case"
    " and a time limit of {seconds:g} seconds"
)
def step_map_cost_and_time(context: Context, count: int, items: float, seconds: float) -> None:
    w = world(context)
    if isinstance(w.clock, ManualClock):  # (virtual time on a database server waits for every task already)
        w.clock.settle = _SETTLE
    _map(w, items_per_batch=count, max_cost_usd=_cost_limit(w, items), time_limit=seconds)


@when("the actor maps the prompts for a {model:w}")
def step_map_model(context: Context, model: str) -> None:
    _map(world(context), response_model=MODELS[model])


@when("the actor maps the prompts with {count:d} items per batch, reporting progress to a callback")
def step_map_progress(context: Context, count: int) -> None:
    w = world(context)
    seen: list[RunProgress] = []
    _bulk(w)["progress"] = seen
    _map(w, items_per_batch=count, on_progress=seen.append)


@when("the actor maps the prompts with {count:d} items per batch, {parallel:d} batches at once, reporting progress")
def step_map_parallel_progress(context: Context, count: int, parallel: int) -> None:
    w = world(context)
    seen: list[RunProgress] = []
    _bulk(w)["progress"] = seen
    _map(w, items_per_batch=count, max_parallel_batches=parallel, on_progress=seen.append)


@then("every report before its first batch was done said the ETA was unknown")
def step_eta_unknown_before_a_batch(context: Context) -> None:
    seen: list[RunProgress] = _bulk(world(context))["progress"]
    before = [p for p in seen if p.batches_done == 0]
    assert before, "no report came before a batch was done"
    assert all(p.eta_seconds is None and p.eta_text() == "ETA unknown" for p in before), [p.line() for p in before]


@then(
    "when its first batch was done, with {done:d} of {total:d} items, the ETA was {waves:d} times the time that batch"
    " took, give or take a poll"
)
def step_eta_at_first_batch(context: Context, done: int, total: int, waves: int) -> None:
    """The ETA in units of the pace the run measured, not of the emulator's batch time: virtual time moves with every
    poll's sleep, also while a create waits on a thread (the SDK looks its platform up in one on a client's first
    requests), so how long the first batch took depends on the load on the machine; the ETA from its pace does not."""
    w = world(context)
    seen: list[RunProgress] = _bulk(w)["progress"]
    first = next(p for p in seen if p.batches_done == 1)
    assert (first.items_done, first.items_total) == (done, total), first.line()
    eta = first.eta_seconds
    assert eta is not None, first.line()
    took = first.elapsed_seconds  # the batches went out as the run began
    poll = w.current_actor().configuration.batch.poll_interval
    low, high = waves * took - poll, waves * took + poll
    assert low <= eta <= high, f"expected {waves} x {took:g}s, give or take {poll:g}s: {first.line()}"
    # What the items' rate alone would have said: the items not done at the pace of those done.
    by_items = (total - done) * took / done
    assert not low <= by_items <= high, f"the items' rate ({by_items:.0f}s) would have said as much: {first.line()}"


@when("the actor maps the prompts, reporting progress to a callback")
def step_map_reporting(context: Context) -> None:
    w = world(context)
    seen: list[RunProgress] = []
    _bulk(w)["progress"] = seen
    _map(w, on_progress=seen.append)


@when(
    'a new program maps the prompts with {count:d} items per batch as run "{run_id}", reporting progress to a callback'
)
def step_new_program_reporting(context: Context, count: int, run_id: str) -> None:
    w = world(context)
    w.actor = new_program_actor(w, w.current_actor().name)
    seen: list[RunProgress] = []
    _bulk(w)["progress"] = seen
    _map(w, items_per_batch=count, run_id=run_id, on_progress=seen.append)


@then(
    "the progress counted {count:d} batches from the first report to the last, ending with {done:d} of {total:d} done"
)
def step_progress_batches(context: Context, count: int, done: int, total: int) -> None:
    seen: list[RunProgress] = _bulk(world(context))["progress"]
    assert {p.batches_total for p in seen} == {count}, [p.batches_total for p in seen]
    assert (seen[-1].batches_done, seen[-1].batches_total) == (done, total), seen[-1]


@then('the first report said "{first}" and the last "{last}"')
def step_first_last_reports(context: Context, first: str, last: str) -> None:
    seen: list[RunProgress] = _bulk(world(context))["progress"]
    assert seen[0].batches_text() == first, seen[0].batches_text()
    assert seen[-1].batches_text() == last, seen[-1].batches_text()


@then("the run's result says it used {count:d} batches")
def step_result_batches(context: Context, count: int) -> None:
    result = _result(world(context))
    assert result.batches == count, result.batches
    assert f"; {count} batch(es); $" in result.summary(), result.summary()


@when('the actor maps the prompts with {count:d} items per batch into the results directory "{name}"')
def step_map_results_dir(context: Context, count: int, name: str) -> None:
    w = world(context)
    _map(w, items_per_batch=count, results_dir=w.path(name))


@when('the actor maps jobs: "{doc}" with "{ask}" and citations, and "{image}" with "{describe}"')
def step_map_files(context: Context, doc: str, ask: str, image: str, describe: str) -> None:
    w = world(context)
    jobs = [
        {"prompt": ask, "file": str(w.path(doc)), "citations": True},
        {"prompt": describe, "file": str(w.path(image))},
    ]
    _map(w, jobs)


@when("the actor plans the prompts with {count:d} items per batch and a cost limit of ${limit:g}")
def step_plan(context: Context, count: int, limit: float) -> None:
    w = world(context)
    _bulk(w)["plan"] = w.run(w.current_actor().map(_prompts(w), dry_run=True, items_per_batch=count,
                                                   max_cost_usd=limit))  # fmt: skip


@when('the run "{run_id}" is retried')
def step_retry(context: Context, run_id: str) -> None:
    from lowtide.bulk.recorded.resume import retry_run

    w = world(context)
    result = w.run(retry_run(w.current_actor(), run_id))
    _bulk(w)["result"] = result


@when(
    'a program starts mapping the prompts with {count:d} items per batch as run "{run_id}"'
    " and stops once its batches are out"
)
def step_program_stops(context: Context, count: int, run_id: str, parallel: int | None = None) -> None:
    w = world(context)
    actor = new_program_actor(w, w.current_actor().name)
    expected = parallel or -(-len(_prompts(w)) // count)

    async def until_out() -> None:
        run = BulkRun(actor, run_id=run_id, items_per_batch=count, max_parallel_batches=parallel or 4)
        run.add_jobs(_prompts(w))
        task = asyncio.ensure_future(run.run())
        # Stop as soon as every batch is out: on the scenario's clock, they end 60 virtual seconds later.
        while w.emu.created_batches < expected or any(b[1] is None for b in actor.ledger.run_store.batches(run_id)):
            await asyncio.sleep(0)
            assert not task.done(), f"the run ended before it was stopped: {task.result()!r}"
        task.cancel()
        assert actor.ledger.run_store.run(run_id) is not None

    w.in_program(until_out)


@when(
    'a program starts mapping the prompts with {count:d} items per batch, 1 batch at a time, as run "{run_id}"'
    " and stops once its first batch is out"
)
def step_program_stops_first(context: Context, count: int, run_id: str) -> None:
    step_program_stops(context, count, run_id, parallel=1)


@when(
    "a new program maps the prompts with {count:d} items per batch and a cost limit of {items:g} items' worst case,"
    ' as run "{run_id}"'
)
def step_new_program_maps_limited(context: Context, count: int, items: float, run_id: str) -> None:
    w = world(context)
    w.actor = new_program_actor(w, w.current_actor().name)
    _map(w, items_per_batch=count, run_id=run_id, max_cost_usd=_cost_limit(w, items))


@then("no batch was created before the one the first program left out had ended")
def step_created_after_first(context: Context) -> None:
    first, *later = _batches(world(context))
    assert first.ended_at is not None, first
    assert all(batch.created_at >= first.ended_at for batch in later), [(b.created_at, b.ended_at) for b in later]


@when('a new program maps the prompts with {count:d} items per batch as run "{run_id}"')
def step_new_program_maps(context: Context, count: int, run_id: str) -> None:
    w = world(context)
    w.actor = new_program_actor(w, w.current_actor().name)
    _map(w, items_per_batch=count, run_id=run_id)


@when("{items:d} items of {size:d} bytes are split with at most {count:d} per batch and {limit:d} bytes")
def step_split(context: Context, items: int, size: int, count: int, limit: int) -> None:
    w = world(context)
    groups = w.attempt(lambda: list(split(((i, size) for i in range(items)), max_requests=count, max_bytes=limit)))
    _bulk(w)["groups"] = [len(group) for group in groups or []]


# -- outcomes --------------------------------------------------------------------------------------------------------


@then("the run has {count:d} results, each the emulated reply to its own prompt, in input order")
def step_results_in_order(context: Context, count: int) -> None:
    w = world(context)
    result = _result(w)
    assert len(result) == count, len(result)
    for index, item in enumerate(result):
        assert item.index == index, (index, item.index)
        if item.ok:
            prompt = _prompts(w)[index]
            assert item.text is not None, (index, item.text)
            assert item.text.startswith(emulated_reply_to(prompt)[:40]), (index, item.text)


@then("results {first:d} to {last:d} are the emulated replies to their prompts")
def step_some_replies(context: Context, first: int, last: int) -> None:
    w = world(context)
    for item in _result(w).items[first : last + 1]:
        assert item.ok, (item.index, item.status, item.reason)
        assert item.text is not None, (item.index, item.status, item.reason)
        assert item.text.startswith(emulated_reply_to(_prompts(w)[item.index])[:40]), item.text


@then("the run's groups are {done:d} completed, {failed:d} failed, {canceled:d} canceled and {not_run:d} not run")
def step_groups(context: Context, done: int, failed: int, canceled: int, not_run: int) -> None:
    step_groups_expired(context, done, failed, 0, canceled, not_run)


@then(
    "the run's groups are {done:d} completed, {failed:d} failed, {expired:d} expired, {canceled:d} canceled and"
    " {not_run:d} not run"
)
def step_groups_expired(context: Context, done: int, failed: int, expired: int, canceled: int, not_run: int) -> None:
    result = _result(world(context))
    groups = (result.completed, result.failed, result.expired, result.canceled, result.not_run)
    found = tuple(len(group) for group in groups)
    assert found == (done, failed, expired, canceled, not_run), (found, [(i.index, i.status) for i in result])


@then("{count:d} items are to retry, the failed one and the expired one")
def step_to_retry(context: Context, count: int) -> None:
    result = _result(world(context))
    statuses = [item.status for item in result.to_retry]
    assert statuses == [ItemStatus.FAILED, ItemStatus.EXPIRED], statuses
    assert len(statuses) == count, statuses


@then("result {index:d} failed with {name:w}")
def step_result_failed(context: Context, index: int, name: str) -> None:
    item = _result(world(context))[index]
    assert item.status is ItemStatus.FAILED, item.status
    assert type(item.error).__name__ == name, repr(item.error)


@then("result {index:d} is expired")
def step_result_expired(context: Context, index: int) -> None:
    assert _result(world(context))[index].status is ItemStatus.EXPIRED


@then("every one of the {count:d} results succeeded")
def step_all_ok(context: Context, count: int) -> None:
    w = world(context)
    w.succeeded()
    result = _result(w)
    assert len(result) == count, [(i.index, i.status, i.error, i.reason) for i in result]
    assert result.ok, [(i.index, i.status, i.error, i.reason) for i in result]


@then("every one of the {count:d} results succeeded, parsed as an {model:w}")
@then("every one of the {count:d} results succeeded, parsed as a {model:w}")
def step_all_parsed(context: Context, count: int, model: str) -> None:
    step_all_ok(context, count)
    for item in _result(world(context)):
        assert isinstance(item.parsed, MODELS[model]), item.parsed


@then('every item not run says "{text}"')
def step_not_run_reason(context: Context, text: str) -> None:
    items = _result(world(context)).not_run
    assert items, [i.reason for i in items]
    assert all(text in (i.reason or "") for i in items), [i.reason for i in items]


@then(
    "every item not run says the run has spent what its {answered:d} answers cost, and one more worst case would"
    " cross the limit"
)
def step_not_run_true_spend(context: Context, answered: int) -> None:
    w = world(context)
    result = _result(w)
    spent = sum((item.cost_usd or Decimal(0) for item in result.completed), Decimal(0))
    assert len(result.completed) == answered, result
    assert spent > 0, result
    limit = _bulk(w)["limit"]
    worst = _cost_limit(w, 1)
    expected = (
        f"cost limit ${limit}: the run has spent ${spent:.6f}, and the worst case of this request (${worst:.6f})"
        " would cross the limit"
    )
    assert spent + worst > limit, (spent, worst, limit)
    assert [i.reason for i in result.not_run] == [expected] * len(result.not_run), [i.reason for i in result.not_run]


@then('{first:d} failed items say "{one}" and {second:d} say "{other}"')
def step_failed_reasons(context: Context, first: int, one: str, second: int, other: str) -> None:
    reasons = [i.reason or "" for i in _result(world(context)).failed]
    assert sum(one in r for r in reasons) == first, reasons
    assert sum(other in r for r in reasons) == second, reasons


# A time limit passes while batches are out: which batch it cuts depends on how virtual time interleaves the run's
# timer with its pollers, so these steps check what holds whichever it cuts.


@then('every item was answered with the emulated reply to its prompt, or failed saying "{canceled}" or "{unsent}"')
def step_answered_or_cut(context: Context, canceled: str, unsent: str) -> None:
    w = world(context)
    for item, prompt in zip(_result(w).items, _prompts(w), strict=True):
        if item.status is ItemStatus.SUCCEEDED:
            assert item.response is not None, item
            assert item.response.text.startswith(emulated_reply_to(prompt)), (item.index, item.response.text)
        else:
            assert item.status is ItemStatus.FAILED, item
            assert canceled in (item.reason or "") or unsent in (item.reason or ""), item


@then('at least the last {count:d} items failed saying "{reason}", and no item before a sent one did')
def step_unsent_last(context: Context, count: int, reason: str) -> None:
    unsent = [reason in (item.reason or "") for item in _result(world(context)).items]
    assert all(unsent[-count:]), unsent
    first = unsent.index(True)
    assert all(unsent[first:]), unsent


@then("every batch the API received ended, or was canceled")
def step_nothing_left_running(context: Context) -> None:
    """Nothing is left running (and paid for) once a run has given up on it."""
    batches = _batches(world(context))
    left = [b.id for b in batches if b.processing_status != "ended" and b.cancel_initiated_at is None]
    assert not left, left


@then("the API received at most {count:d} batch, of {size:d} requests")
def step_at_most_batches(context: Context, count: int, size: int) -> None:
    batches = _batches(world(context))
    assert len(batches) <= count, batches
    assert all(_sizes(b) == size for b in batches), [_sizes(b) for b in batches]


@then("the API received {count:d} batch of {sizes} requests")
@then("the API received {count:d} batches of {sizes} requests")
def step_batches(context: Context, count: int, sizes: str) -> None:
    batches = _batches(world(context))
    # Batches created in the same (virtual) instant have no order: compare the sizes, not who came first.
    assert sorted(_sizes(b) for b in batches) == sorted(_numbers(sizes)), [_sizes(b) for b in batches]
    assert len(batches) == count


@then("the API canceled {count:d} batch")
@then("the API canceled {count:d} batches")
def step_canceled(context: Context, count: int) -> None:
    batches = _batches(world(context))
    assert sum(1 for b in batches if b.cancel_initiated_at is not None) == count


@then("the second batch held only items {items}")
def step_second_batch(context: Context, items: str) -> None:
    w = world(context)
    second = _batches(w)[1]

    async def custom_ids() -> list[str]:
        return [line.custom_id async for line in await w.client.messages.batches.results(second.id)]

    expected = sorted(w.custom_id(f"reviews-{n}-a2") for n in _numbers(items))
    assert sorted(w.run(custom_ids())) == expected


@then("the second run has the same id and the same {count:d} answers as the first")
def step_same_runs(context: Context, count: int) -> None:
    first, second = _bulk(world(context))["results"]
    assert first.run_id == second.run_id
    assert [i.text for i in first] == [i.text for i in second]
    assert len(second) == count
    assert all(i.ok for i in second)


@then("the batches hold {sizes} items")
def step_groups_sizes(context: Context, sizes: str) -> None:
    assert _bulk(world(context))["groups"] == _numbers(sizes), _bulk(world(context))["groups"]


@then("the plan has {count:d} batches of {sizes} requests, and a cost range from low to high")
def step_plan_batches(context: Context, count: int, sizes: str) -> None:
    plan = _bulk(world(context))["plan"]
    assert [b.requests for b in plan.batches] == _numbers(sizes)
    assert len(plan.batches) == count
    assert Decimal(0) < plan.cost_low_usd < plan.cost_high_usd, (plan.cost_low_usd, plan.cost_high_usd)


@then('the plan says "{text}"')
def step_plan_says(context: Context, text: str) -> None:
    lines = _bulk(world(context))["plan"].lines()
    assert any(text in line for line in lines), lines


@then("the ledger has no run")
def step_no_run(context: Context) -> None:
    assert world(context).ledger().run_store.runs() == []


@then("the callback saw items done rise to {items:d} of {total:d}, and batches done rise to {batches:d} of {of:d}")
def step_progress(context: Context, items: int, total: int, batches: int, of: int) -> None:
    seen: list[RunProgress] = _bulk(world(context))["progress"]
    done = [p.items_done for p in seen]
    assert done == sorted(done), done
    assert done[0] == 0, done
    last = seen[-1]
    assert (last.items_done, last.items_total, last.batches_done, last.batches_total) == (items, total, batches, of)


@then('"{folder}" holds {count:d} files with {lines:d} result lines in all')
def step_raw_files(context: Context, folder: str, count: int, lines: int) -> None:
    files = sorted(world(context).path(folder).glob("*.jsonl"))
    assert len(files) == count, files
    found = [json.loads(line) for f in files for line in f.read_text().splitlines()]
    assert len(found) == lines, found
    assert all("custom_id" in line and "result" in line for line in found), found


@then('"{name}" has {count:d} lines with indexes 0 to {last:d} in order, line {bad:d} failed')
def step_processed(context: Context, name: str, count: int, last: int, bad: int) -> None:
    lines = [json.loads(line) for line in world(context).path(name).read_text().splitlines()]
    assert [line["index"] for line in lines] == list(range(last + 1))
    assert len(lines) == count
    assert lines[bad]["status"] == "failed", lines[bad]
    assert lines[bad]["error"]["type"] == "BatchRequestErrored", lines[bad]
    assert all(line["status"] == "succeeded" and line["text"] for i, line in enumerate(lines) if i != bad)


@then(
    'in "{name}" each answered line\'s cost_usd is a JSON number with the exact digits of its cost, and line'
    " {bad:d}'s is null"
)
def step_cost_numbers(context: Context, name: str, bad: int) -> None:
    w = world(context)
    result = _result(w)
    for number, text in enumerate(w.path(name).read_text().splitlines()):
        # Read as the exact decimal a JSON number holds: a string would come back a `str`, a float lose digits.
        cost = json.loads(text, parse_float=Decimal)["cost_usd"]
        if number == bad:
            assert cost is None, text
            continue
        expected = result[number].cost_usd
        assert expected is not None, result[number]
        assert isinstance(cost, Decimal), f"cost_usd is a {type(cost).__name__}: {text}"
        assert cost == expected, (cost, expected)
        assert f'"cost_usd":{expected:f},' in text, text


@when('an item answered with the parsed value {parsed}, costing ${cost}, is written to "{name}"')
def step_write_big_item(context: Context, parsed: str, cost: str, name: str) -> None:
    from lowtide.bulk.outputs.results import ItemResult, write_lines
    from lowtide.types import ActorResponse, Cost, ProviderIds, Usage

    price = Decimal(cost)
    response: ActorResponse[Any] = ActorResponse(
        text="", content=[], parsed=json.loads(parsed), stop_reason="end_turn", usage=Usage(), model="m",
        provider="anthropic", mode=BatchProcessingMode.BATCH, ids=ProviderIds(),
        cost=Cost(total_usd=price, input_usd=price, output_usd=Decimal(0), pricing="batch", live_equivalent_usd=price),
    )  # fmt: skip
    item = ItemResult(0, "big", "run-0", ItemStatus.SUCCEEDED, answer=response)
    write_lines(world(context).path(name), [item.as_json()])


@then('the line in "{name}" reads the parsed value {parsed} and the cost {cost}, both as JSON numbers')
def step_read_big_item(context: Context, name: str, parsed: str, cost: str) -> None:
    [text] = world(context).path(name).read_text(encoding="utf-8").splitlines()
    line = json.loads(text, parse_float=Decimal)
    assert line["parsed"] == json.loads(parsed), text
    assert isinstance(line["cost_usd"], Decimal), text
    assert line["cost_usd"] == Decimal(cost), text
    assert f'"cost_usd":{cost},' in text, text


@then('no file under "{folder}" contains the API key')
def step_no_key(context: Context, folder: str) -> None:
    for file in world(context).path(folder).rglob("*"):
        if file.is_file():
            assert API_KEY not in file.read_text(), file


@then("the first request sent a document block with citations enabled, the second an image block")
def step_blocks(context: Context) -> None:
    w = world(context)
    keys = [item.key for item in _result(w)]
    requests = w.ledger().requests_for(keys)
    first = requests[0].params["messages"][0]["content"][0]
    second = requests[1].params["messages"][0]["content"][0]
    assert first["type"] == "document", first
    assert first["citations"] == {"enabled": True}, first
    assert second["type"] == "image", second
    assert second["source"]["media_type"] == "image/png", second


@then('result {index:d} has citations quoting "{title}"')
def step_citations(context: Context, index: int, title: str) -> None:
    item = _result(world(context))[index]
    assert item.citations, item
    assert all(c.get("document_title") == title and c.get("cited_text") for c in item.citations), item.citations


# -- stops in awkward places -----------------------------------------------------------------------------------------


@given(
    'a program that died had claimed items {first:d} to {last:d} of run "{run_id}" for the prompts,'
    " before any batch existed"
)
def step_dead_claims(context: Context, first: int, last: int, run_id: str) -> None:
    import socket

    from lowtide.ledger.store import NewRequest

    w = world(context)
    run = BulkRun(w.current_actor(), run_id=run_id, items_per_batch=3).add_jobs(_prompts(w))
    assert run.record() == run_id
    dead = f"{socket.gethostname()}/999999/dead"
    params = {i: to_message_params(w.current_actor().request(messages=[{"role": "user", "content": _prompts(w)[i]}]))
              for i in range(first, last + 1)}  # fmt: skip
    now = w.clock.now()
    w.ledger().claim(
        # Custom ids as a lowtide before ledger identities gave them (the key itself): never made again once claimed.
        [NewRequest(f"{run_id}-{i}", f"{run_id}-{i}", w.current_actor().name, "m", p) for i, p in params.items()],
        owner=dead,
        until=now + 3600,
        now=now,
    )


@when("the ledger is left as if the program had stopped after storing the results of one batch, before closing it")
def step_unclose_batch(context: Context) -> None:
    w = world(context)
    ledger = w.ledger()
    assert isinstance(ledger, Ledger), ledger  # a SQLite file: its SQL below
    with ledger.transaction() as db:
        db.execute("UPDATE batches SET state = 'ended' WHERE id = (SELECT id FROM batches ORDER BY intent_at LIMIT 1)")
    _bulk(w)["results calls"] = w.emu.calls["batches.results"]


@then('every batch of the run "{run_id}" is collected in the ledger')
def step_all_collected(context: Context, run_id: str) -> None:
    batches = world(context).ledger().run_store.batches(run_id)
    assert batches, "the run has no batches"
    assert all(state == "collected" for _, _, state, _ in batches), batches


@then("the API sent the results of {count:d} batches")
def step_results_calls(context: Context, count: int) -> None:
    assert world(context).emu.calls["batches.results"] == count, world(context).emu.calls


@then("every request of the run was created exactly once")
def step_created_once(context: Context) -> None:
    w = world(context)
    created = w.emu.created_custom_ids
    # Each by the custom id the ledger holds for it: a request claimed before (by an older lowtide) keeps its own.
    custom_ids = [record.custom_id for record in w.ledger().requests_for([item.key for item in _result(w)])]
    assert all(created[custom_id] == 1 for custom_id in custom_ids), {c: created[c] for c in custom_ids}


@when('the actor maps a job "{doc}" with "{ask}" and citations, for an {model:w}')
def step_map_cited_model(context: Context, doc: str, ask: str, model: str) -> None:
    w = world(context)
    _map(w, [{"prompt": ask, "file": str(w.path(doc)), "citations": True}], response_model=MODELS[model])


@then('result {index:d} maps citations to the field "{field}", each quoting "{title}" text that holds its value')
def step_field_citations(context: Context, index: int, field: str, title: str) -> None:
    item = _result(world(context))[index]
    assert item.field_citations is not None, item
    cited = item.field_citations.get(field)
    assert cited, item.field_citations
    value = " ".join(str(getattr(item.parsed, field)).split()).lower()
    for citation in cited:
        assert citation.get("document_title") == title, citation
        assert value in " ".join(str(citation.get("cited_text")).split()).lower(), (value, citation)


@when('the actor maps {count:d} prompts "{template}" and then "{ask}" with "{name}", 1 item per batch')
def step_map_then_file(context: Context, count: int, template: str, ask: str, name: str) -> None:
    w = world(context)
    jobs: list[Any] = [template.replace("{n}", str(n)) for n in range(count)]
    jobs.append({"prompt": ask, "file": str(w.path(name))})
    _map(w, jobs, items_per_batch=1)


@when('the response model "{path}" is imported')
def step_import_model(context: Context, path: str) -> None:
    from lowtide.bulk.recorded.model_paths import import_model

    w = world(context)
    w.value = w.attempt(lambda: import_model(path))


@then("it is the class {name:w}")
def step_imported(context: Context, name: str) -> None:
    w = world(context)
    w.succeeded()
    assert w.value.__name__ == name, w.value


@then('it is refused, saying "{text}"')
def step_import_refused(context: Context, text: str) -> None:
    error = world(context).failure()
    assert text in str(error), str(error)


@when(
    "the actor maps the prompts with {count:d} items per batch and a cost limit of {items:g} items' worst case,"
    ' as run "{run_id}"'
)
def step_map_cost_limit_as(context: Context, count: int, items: float, run_id: str) -> None:
    w = world(context)
    _map(w, items_per_batch=count, max_cost_usd=_cost_limit(w, items), run_id=run_id)


@given('the API will end request "{key}" as canceled')
def step_canceled_request(context: Context, key: str) -> None:
    w = world(context)
    w.emu.faults.outcome(w.custom_id(key), "canceled")


@when(
    'a run is built with the prompt "{first}" at {tokens:d} max tokens and the messages "{second}",'
    " and run synchronously"
)
def step_builder_sync(context: Context, first: str, tokens: int, second: str) -> None:
    w = world(context)
    run = w.current_actor().bulk(run_id="built").add(first, max_tokens=tokens)
    run.add(messages=[{"role": "user", "content": second}])
    _bulk(w)["result"] = run.run_sync()
    _bulk(w)["prompts"] = [first, second]


@then("the synchronous run answered both, the first with at most {tokens:d} max tokens")
def step_builder_answered(context: Context, tokens: int) -> None:
    w = world(context)
    result = _result(w)
    assert result.ok, result
    step_results_in_order(context, 2)
    request = w.ledger().request(result[0].key)
    assert request is not None
    assert request.params["max_tokens"] == tokens, request.params


@when("a run is built with {option:w} {value}")
def step_bad_option(context: Context, option: str, value: str) -> None:
    w = world(context)
    w.attempt(lambda: w.current_actor().bulk(**{option: json.loads(value)}))
