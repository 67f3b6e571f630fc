"""Steps for live bulk runs: `actor.map(..., mode="live")` against the in-process emulator on a virtual clock, and
`lowtide run --mode live` against the emulator on a socket."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Protocol

import httpx
import yaml
from _support import world
from pydantic import BaseModel, ConfigDict, model_validator
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import Actor, ConfigurationError, ItemResult, RunResult, StructuredOutputError
from lowtide.bulk.planning.live_plan import LivePlan
from lowtide.bulk.progress.reporters import RunProgress
from lowtide.bulk.recorded.resume import retry_run
from lowtide.bulk.running.interrupts import exit_status
from lowtide.core.clock import VirtualClock
from lowtide.emulator import Emulator, Latency, RateLimits
from lowtide.ledger.store import RequestState
from lowtide.live.events import CallSucceeded, ItemFinished, LiveEvent, QuotaAdmitted, QuotaSettled, RunProgressed


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    live_bulk: LiveBulk


_BASE = {"name": "bulk-live", "model": "claude-sonnet-5-5", "max_tokens": 64}


@dataclass
class LiveBulk:
    clock: VirtualClock = field(default_factory=VirtualClock)
    latency: float = 2.0
    stagger: float = 0.0
    limits: dict[str, int] = field(default_factory=dict[str, int])
    emulator: Emulator | None = None
    actor: Actor | None = None
    result: RunResult | None = None
    plan: LivePlan | None = None
    run_id: str | None = None
    prompts: list[str] = field(default_factory=list[str])
    progress: list[RunProgress] = field(default_factory=list[RunProgress])
    events: list[LiveEvent] = field(default_factory=list[LiveEvent])
    started: float = 0.0
    ended: float = 0.0
    calls_before: int = 0
    stored_before: int = 0
    post_seen: list[str] = field(default_factory=list[str])
    post_process: Any = None
    post_timeout: float | None = None
    kill_after: tuple[int, asyncio.Event] | None = None
    refusal: object = None
    progress_before: int = 0
    in_flight: int = 0
    most_in_flight: int = 0
    extra_observer: Any = None
    unstored_at_finish: int = 0
    in_flight_at_signal: int = 0

    def observe(self, event: LiveEvent) -> None:
        self.events.append(event)
        if isinstance(event, QuotaAdmitted):
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        elif isinstance(event, QuotaSettled):
            self.in_flight -= 1
        if self.kill_after is not None:
            answers, enough = self.kill_after
            # Answers handed on (stored first): on a store across the network, a call's answer is stored some
            # time after the call succeeded, and a kill in between loses it, as it would lose a call in flight.
            if sum(isinstance(e, ItemFinished) and e.status == "succeeded" for e in self.events) >= answers:
                enough.set()
        if self.extra_observer is not None:
            self.extra_observer(event)
        if isinstance(event, ItemFinished) and event.status == "succeeded":
            record = self.the_actor.ledger.request(f"{event.run_id}-{event.index}")
            self.unstored_at_finish += record is None or record.state is not RequestState.SUCCEEDED

    def api(self) -> Emulator:
        if self.emulator is None:
            latency = _Staggered(self.latency, step=self.stagger)
            self.emulator = Emulator(clock=self.clock, rate_limits=RateLimits(**self.limits), latency=latency)
        return self.emulator

    @property
    def the_actor(self) -> Actor:
        assert self.actor is not None, "no actor yet"
        return self.actor

    @property
    def the_result(self) -> RunResult:
        assert self.result is not None, "no run yet"
        return self.result

    def calls(self) -> int:
        return self.api().calls["messages.create"]


@dataclass(frozen=True)
class _Staggered(Latency):
    """`Latency`, each answer `step` seconds slower than the one before."""

    step: float = 0.0
    answered: list[int] = field(default_factory=lambda: [0])

    def of(self, output_tokens: int) -> float:
        self.answered[0] += 1
        return super().of(output_tokens) + self.step * self.answered[0]


def lb(context: Context) -> LiveBulk:
    if not hasattr(context, "live_bulk"):
        # On a PostgreSQL ledger, time stands still while the loop waits on the server, as it does for a local one.
        on_server = getattr(context, "postgres_url", None) is not None
        context.live_bulk = LiveBulk(clock=VirtualClock(wait_for_io=on_server))
    return context.live_bulk


def _prompts(count: int) -> list[str]:
    return [f"Question {n}: what is {n} squared?" for n in range(count)]


async def _map(state: LiveBulk, prompts: list[str], **options: Any) -> RunResult:
    state.prompts = prompts
    state.started = state.clock.now()
    try:
        result = await state.the_actor.map(prompts, mode="live", on_progress=state.progress.append, **options)
    finally:
        state.ended = state.clock.now()
    state.run_id = result.run_id
    return result


# -- the API and the actor ----------------------------------------------------------------------------------------


@given("a live API emulated on a virtual clock for bulk runs, answering each call in {seconds:g} seconds")
def step_api(context: Context, seconds: float) -> None:
    lb(context).latency = seconds


@given("the emulated API answers each live call in {seconds:g} seconds")
def step_latency(context: Context, seconds: float) -> None:
    lb(context).latency = seconds


@given("each live answer takes {step:g} seconds longer than the one before")
def step_stagger(context: Context, step: float) -> None:
    """No two answers at the same instant: which calls are in flight when something happens does not depend on the
    order in which the event loop wakes calls answered together (a ledger across the network reorders them)."""
    lb(context).stagger = step


@given("the emulated API allows {count:d} requests per minute per key")
def step_rpm(context: Context, count: int) -> None:
    lb(context).limits["rpm"] = count


@given("the emulated API fails the next live call with {status:d}")
@given("the emulated API fails the next {times:d} live calls with {status:d}")
def step_fail(context: Context, status: int, times: int = 1) -> None:
    lb(context).api().faults.fail_next("messages.create", status, times=times)


@given("a live bulk actor with:")
def step_actor(context: Context) -> None:
    state = lb(context)
    client = state.api().client(api_key="bulk-live-key")
    settings = {**_BASE, **(yaml.safe_load(context.text) or {})}
    state.actor = Actor(settings, client=client, clock=state.clock, observers=[state.observe])
    world(context).cleanups.append(state.actor.aclose)


@given(
    "a post-processor that fails on prompt {failing:d} and takes {slow:g} seconds on prompt {late:d},"
    " with a timeout of {timeout:g} seconds"
)
def step_post_processor(context: Context, failing: int, slow: float, late: int, timeout: float) -> None:
    state = lb(context)

    async def post_process(item: ItemResult) -> None:
        if item.index == failing:
            raise ValueError(f"cannot file prompt {failing}")
        if item.index == late:
            await state.clock.sleep(slow)
        state.post_seen.append(item.text or "")

    state.post_process = post_process
    state.post_timeout = timeout


# -- running ----------------------------------------------------------------------------------------------------


@when("the actor maps {count:d} prompts in live mode, with a results directory")
def step_map_results(context: Context, count: int) -> None:
    state, w = lb(context), world(context)
    state.result = w.run(_map(state, _prompts(count), results_dir=w.path("results")))


@when("the actor maps {count:d} prompts in live mode and the process dies after {answers:d} answers")
def step_map_crash(context: Context, count: int, answers: int) -> None:
    state = lb(context)

    async def until_killed() -> None:
        enough = asyncio.Event()
        state.kill_after = (answers, enough)
        task = asyncio.ensure_future(_map(state, _prompts(count)))
        await asyncio.wait({task, asyncio.ensure_future(enough.wait())}, return_when=asyncio.FIRST_COMPLETED)
        task.cancel()  # as a kill would: the calls in flight are lost (an answer being stored is kept)
        await asyncio.gather(task, return_exceptions=True)

    world(context).run(until_killed())


@when("the actor maps {count:d} prompts in live mode and {name} arrives after {answers:d} answers")
@when("the actor maps {count:d} prompts in live mode and {name} arrives {twice} after {answers:d} answers")
def step_map_signal(context: Context, count: int, name: str, answers: int, twice: str = "") -> None:
    """The signal sent to this process, as a user's Ctrl-C or a supervisor's SIGTERM would be, from inside the run
    (an observer), once `answers` calls have succeeded; `twice`: sent again at once."""
    state = lb(context)
    signum = signal.Signals[name]
    sent: list[bool] = []

    def observe(event: LiveEvent) -> None:
        if not sent and sum(isinstance(e, CallSucceeded) for e in state.events) >= answers:
            sent.append(True)
            state.in_flight_at_signal = state.in_flight
            for _ in range(2 if twice == "twice" else 1):
                os.kill(os.getpid(), signum)

    state.extra_observer = observe
    try:
        state.result = world(context).run(_map(state, _prompts(count)))
    finally:
        state.extra_observer = None
    assert sent, "the signal was never sent"


@when("the actor maps the same {count:d} prompts in live mode again")
def step_map_again(context: Context, count: int) -> None:
    state = lb(context)
    _stored(context)
    assert state.run_id is not None
    rows = state.the_actor.ledger.run_store.items(state.run_id, with_jobs=False)
    state.stored_before = sum(1 for row in rows if row.request_state is not None and row.request_state.final)
    state.calls_before = state.calls()
    state.progress_before = len(state.progress)
    state.result = world(context).run(_map(state, _prompts(count)))


@when('the actor maps {count:d} prompts in live mode, aborting on "{classes}" by {how}')
def step_map_abort(context: Context, count: int, classes: str, how: str) -> None:
    state = lb(context)
    mode = {"draining": "drain", "cancelling": "cancel"}[how]
    state.result = world(context).run(_map(state, _prompts(count), abort_on=classes.split(","), abort_mode=mode))


@when("the actor maps {count:d} prompts in live mode with a time limit of {seconds:g} seconds")
def step_map_deadline(context: Context, count: int, seconds: float) -> None:
    state = lb(context)
    state.result = world(context).run(_map(state, _prompts(count), time_limit=seconds))


@when("the actor maps {count:d} prompts in live mode with the post-processor")
def step_map_post(context: Context, count: int) -> None:
    state = lb(context)
    options = {"post_process": state.post_process, "post_process_timeout": state.post_timeout}
    state.result = world(context).run(_map(state, _prompts(count), **options))


@when("the actor maps {count:d} prompts in live mode with a cost limit of ${limit}")
def step_map_cost(context: Context, count: int, limit: str) -> None:
    state = lb(context)
    state.result = world(context).run(_map(state, _prompts(count), max_cost_usd=Decimal(limit)))


@when("the run is retried")
def step_retry(context: Context) -> None:
    state = lb(context)
    assert state.run_id is not None
    state.result = world(context).run(retry_run(state.the_actor, state.run_id))


@when("the post-processor is mended and the run is retried with it")
def step_retry_mended(context: Context) -> None:
    state = lb(context)
    assert state.run_id is not None
    state.post_seen.clear()
    state.calls_before = state.calls()

    async def mended(item: ItemResult) -> None:
        state.post_seen.append(item.text or "")

    run = retry_run(state.the_actor, state.run_id, post_process=mended, post_process_timeout=5.0)
    state.result = world(context).run(run)


@when("the actor plans {count:d} prompts in live mode")
def step_plan(context: Context, count: int) -> None:
    state = lb(context)
    plan = world(context).run(state.the_actor.map(_prompts(count), mode="live", dry_run=True))
    assert isinstance(plan, LivePlan), plan
    state.plan = plan


# -- outcomes ---------------------------------------------------------------------------------------------------


def _stored(context: Context) -> int:
    state = lb(context)
    assert state.run_id is not None or state.prompts
    store = state.the_actor.ledger.run_store
    runs = store.runs()
    assert runs, "no run in the ledger"
    rows = store.items(runs[-1].id, with_jobs=False)
    state.run_id = runs[-1].id
    return sum(1 for row in rows if row.request_state is RequestState.SUCCEEDED)


@then("the run's {count:d} results are in input order, each the emulated reply to its prompt")
def step_in_order(context: Context, count: int) -> None:
    result = lb(context).the_result
    assert len(result) == count
    assert [item.index for item in result] == list(range(count))
    for item, prompt in zip(result, lb(context).prompts, strict=True):
        assert item.ok, item
        assert item.text, (prompt, item.text)
        assert prompt in item.text, (prompt, item.text)


@then("the API answered each of the {count:d} prompts exactly once, and no call with 429")
def step_once(context: Context, count: int) -> None:
    api = lb(context).api()
    answers = api.live_answers
    assert len(answers) == count, (len(answers), count)
    assert set(answers.values()) == {1}, sorted(answers.values())
    assert api.rate_limited == 0, api.rate_limited
    for item in lb(context).the_result:
        assert item.error is None or "429" not in str(item.error), item.error


@then("the run took between {low:g} and {high:g} seconds")
def step_took(context: Context, low: float, high: float) -> None:
    state = lb(context)
    took = state.ended - state.started
    assert low <= took <= high, took


@then("progress was reported with calls in flight and ended at {done:d} of {total:d} items")
def step_progress(context: Context, done: int, total: int) -> None:
    seen = lb(context).progress
    assert any((p.calls_in_flight or 0) > 0 for p in seen), seen[:3]
    last = seen[-1]
    assert (last.items_done, last.items_total) == (done, total), last
    assert "call(s) in flight" in last.line(), last.line()


@then("the results directory holds {count:d} lines in input order, each with its usage and cost")
def step_directory(context: Context, count: int) -> None:
    lines = world(context).path("results/results.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == count
    for index, line in enumerate(lines):
        data = json.loads(line)
        assert data["index"] == index, data
        assert data["status"] == "succeeded", data
        assert data["usage"]["output_tokens"] > 0, data
        assert data["cost_usd"] > 0, data
        assert {"cache_read_input_tokens", "cache_creation_input_tokens"} <= set(data["usage"]), data


@then('the run\'s summary says "{text}" with its cost and tokens summed over the items')
def step_summary(context: Context, text: str) -> None:
    result = lb(context).the_result
    summary = result.summary()
    assert text in summary, summary
    total = sum((item.cost_usd or Decimal(0) for item in result), Decimal(0))
    assert total > 0, summary
    assert f"${total:.6f} at live prices" in summary, summary
    used = result.usage()
    assert used["output_tokens"] == sum(item.response.usage.output_tokens for item in result if item.response)
    assert f"{used['output_tokens']:,} out" in summary, summary
    assert result.as_json()["usage"] == used
    assert result.as_json()["mode"] == "live"


@then("the ledger holds a stored answer for at least {count:d} of the {total:d} items")
def step_stored(context: Context, count: int, total: int) -> None:
    stored = _stored(context)
    assert count <= stored < total, stored


@then("all {count:d} items succeeded")
def step_all(context: Context, count: int) -> None:
    result = lb(context).the_result
    assert len(result) == count, result.counts()
    assert result.ok, result.counts()


@then("the second go called the API only for the items that had no stored answer")
def step_second_go(context: Context) -> None:
    state = lb(context)
    second = state.calls() - state.calls_before
    assert second == len(state.prompts) - state.stored_before, (second, state.stored_before)


@then('{ok:d} items succeeded, {failed:d} failed with "{why}" and {not_run:d} were not run with "{reason}"')
def step_counts(context: Context, ok: int, failed: int, why: str, not_run: int, reason: str) -> None:
    result = lb(context).the_result
    counts = result.counts()
    why_not = sorted({f"{type(item.error).__name__} {item.reason}" for item in result if not item.ok})
    assert (counts["succeeded"], counts["failed"], counts["not-run"]) == (ok, failed, not_run), (counts, why_not)
    for item in result.failed:
        text = f"{type(item.error).__name__}: {item.error} {item.reason}"
        assert any(part in text for part in why.split("|")), text
    for item in result.not_run:
        assert item.reason is not None, item.reason
        assert reason in item.reason, item.reason


@then('the run ended "interrupted by {name}", exit status {status:d}, once its calls in flight were answered')
def step_interrupted_drained(context: Context, name: str, status: int) -> None:
    state = lb(context)
    assert state.the_result.interrupted == name, state.the_result.interrupted
    assert f"interrupted by {name};" in state.the_result.summary(), state.the_result.summary()
    assert exit_status(name) == status
    assert state.in_flight_at_signal > 0, "no call was in flight when the signal came"
    assert state.in_flight == 0, state.in_flight
    rows = _rows(state)
    assert not [row for row in rows if row.status == "failed"], rows


@then('the run ended "interrupted by {name}", its calls in flight canceled with "{reason}"')
def step_interrupted_cancelled(context: Context, name: str, reason: str) -> None:
    state = lb(context)
    assert state.the_result.interrupted == name, state.the_result.interrupted
    cut = [row for row in _rows(state) if row.reason == reason]
    assert cut, "no call was canceled in flight"
    assert all(row.status == "failed" for row in cut), cut
    assert all(row.request_state is None for row in cut), cut


@then("every answer the API gave is stored in the ledger")
def step_every_answer_stored(context: Context) -> None:
    state = lb(context)
    given = sum(state.api().live_answers.values())
    stored = sum(1 for row in _rows(state) if row.request_state is RequestState.SUCCEEDED)
    assert given == stored > 0, (given, stored)


@then('the items never started were recorded not run with "{reason}"')
def step_not_started(context: Context, reason: str) -> None:
    state = lb(context)
    rows = _rows(state)
    never = [row for row in rows if row.request_state is None]
    assert never, rows
    assert all(row.status == "not-run" and row.reason == reason for row in never), never


def _rows(state: LiveBulk) -> list[Any]:
    runs = state.the_actor.ledger.run_store.runs()
    assert runs, "no run in the ledger"
    state.run_id = runs[-1].id
    return list(state.the_actor.ledger.run_store.items(state.run_id, with_jobs=False))


@then(
    "the actor's observers saw each of the {count:d} items finish after its answer was stored, and the run's"
    " progress up to {done:d} of {total:d}"
)
def step_observed_items(context: Context, count: int, done: int, total: int) -> None:
    state = lb(context)
    finished = [e for e in state.events if isinstance(e, ItemFinished)]
    assert sorted(e.index for e in finished) == list(range(count)), [e.index for e in finished]
    assert {e.status for e in finished} == {"succeeded"}, {e.status for e in finished}
    assert {e.run_id for e in finished} == {state.the_result.run_id}
    assert state.unstored_at_finish == 0, state.unstored_at_finish
    for event in finished:  # each reported after its call succeeded
        call = next(
            i for i, e in enumerate(state.events) if isinstance(e, CallSucceeded) and e.key.endswith(f"-{event.index}")
        )
        assert call < state.events.index(event), event
    progress = [e.progress for e in state.events if isinstance(e, RunProgressed)]
    assert progress, "no progress event"
    assert progress[0].items_done == 0, progress[0]
    assert (progress[-1].items_done, progress[-1].items_total) == (done, total), progress[-1]


@then("no answer was stored for the calls cancelled in flight")
def step_cancelled_unstored(context: Context) -> None:
    state = lb(context)
    assert state.run_id is not None
    rows = state.the_actor.ledger.run_store.items(state.run_id, with_jobs=False)
    cut = [row for row in rows if row.reason and row.reason.startswith("canceled in flight")]
    assert cut, rows
    assert all(row.request_state is None for row in cut), cut


@then('item {index:d} failed with "{reason}" and kept its answer')
def step_item_failed(context: Context, index: int, reason: str) -> None:
    item = lb(context).the_result[index]
    assert item.status.value == "failed", item
    assert item.reason is not None, item
    assert reason in item.reason, item
    assert item.response is not None, item
    assert item.text, item


@then("the post-processor saw the answers of the {count:d} other items")
def step_post_seen(context: Context, count: int) -> None:
    assert len(lb(context).post_seen) == count, lb(context).post_seen


@then("the run's real cost is within ${limit}")
def step_within(context: Context, limit: str) -> None:
    result = lb(context).the_result
    assert result.cost_usd is not None, result
    assert 0 < result.cost_usd <= Decimal(limit), result.cost_usd


@then("at most {count:d} call was in flight at once")
def step_most_in_flight(context: Context, count: int) -> None:
    assert lb(context).most_in_flight == count, lb(context).most_in_flight


@then(
    "the plan has {count:d} items to call, their estimated input tokens, {output:d} output tokens at most"
    " and a cost range"
)
def step_plan_items(context: Context, count: int, output: int) -> None:
    plan = lb(context).plan
    assert plan is not None
    assert plan.items == count, plan
    assert plan.output_tokens_max == output, plan
    assert plan.input_tokens > count, plan
    assert plan.cost_low_usd is not None
    assert plan.cost_high_usd is not None
    assert 0 < plan.cost_low_usd < plan.cost_high_usd, plan
    text = "\n".join(plan.lines())
    assert "cost at live prices: $" in text, text
    assert "nothing was sent" in text, text


@then("the plan expects about {duration} at the configured limits, bound by {limit}")
def step_plan_time(context: Context, duration: str, limit: str) -> None:
    plan = lb(context).plan
    assert plan is not None
    text = "\n".join(plan.lines())
    assert f"expected time: about {duration} (bound by {limit})" in text, text


@then("the API was not called, and the ledger holds no run")
def step_not_called(context: Context) -> None:
    state = lb(context)
    assert sum(state.api().calls.values()) == 0, state.api().calls
    assert state.the_actor.ledger.run_store.runs() == []


@then("the socket API served no live call")
def step_socket_none(context: Context) -> None:
    emulator = world(context).emulator
    assert emulator is not None
    assert emulator.calls["messages.create"] == 0, emulator.calls


@then("the socket API served {count:d} live calls")
def step_socket_calls(context: Context, count: int) -> None:
    emulator = world(context).emulator
    assert emulator is not None
    assert emulator.calls["messages.create"] == count, emulator.calls
    assert set(emulator.live_answers.values()) == {1}
    assert len(emulator.live_answers) == count


@given("the socket API fails the next live call with {status:d}")
def step_socket_fault(context: Context, status: int) -> None:
    [url] = world(context).witnessed["server url"]
    fault = {"route": "messages.create", "status": status, "times": 1}
    httpx.post(f"{url}/_emulator/faults", json=fault, timeout=10.0).raise_for_status()


@then("the socket API served {count:d} live calls, answering {answered:d}")
def step_socket_answered(context: Context, count: int, answered: int) -> None:
    emulator = world(context).emulator
    assert emulator is not None
    assert emulator.calls["messages.create"] == count, emulator.calls
    assert len(emulator.live_answers) == answered, emulator.live_answers
    assert set(emulator.live_answers.values()) == {1}, emulator.live_answers


@when("the actor maps {count:d} prompts with {options}")
def step_map_options(context: Context, count: int, options: str) -> None:
    state = lb(context)
    given: dict[str, Any] = {}
    for part in options.split(" and "):
        name, _, value = part.partition(" ")
        text = value.strip('"')
        numbers = {"post_process_timeout": float, "items_per_batch": int, "max_parallel_batches": int}
        given[name] = numbers[name](text) if name in numbers else text
    state.refusal = world(context).attempt(lambda: world(context).run(state.the_actor.map(_prompts(count), **given)))


@then('the map is refused with "{message}"')
def step_refused(context: Context, message: str) -> None:
    failure = world(context).failure()
    assert isinstance(failure, ConfigurationError), failure
    assert message in str(failure), str(failure)


@when("the actor plans {count:d} prompts in live mode with a cost limit of ${limit}")
def step_plan_limit(context: Context, count: int, limit: str) -> None:
    state = lb(context)
    run = state.the_actor.map(_prompts(count), mode="live", dry_run=True, max_cost_usd=Decimal(limit))
    plan = world(context).run(run)
    assert isinstance(plan, LivePlan), plan
    state.plan = plan


@then('the live plan says "{first}", "{second}" and "{third}"')
def step_plan_says(context: Context, first: str, second: str, third: str) -> None:
    plan = lb(context).plan
    assert plan is not None
    text = "\n".join(plan.lines())
    for part in (first, second, third):
        assert part in text, text
    assert plan.as_json()["items"] == plan.items


@then("the second go's progress began from the stored answers, its ETA unknown until it had answers of its own")
def step_second_progress(context: Context) -> None:
    state = lb(context)
    first = state.progress[state.progress_before]
    assert first.items_done == state.stored_before, (first, state.stored_before)
    assert first.done_before == state.stored_before, first
    assert first.eta_seconds is None, first
    assert "ETA unknown" in first.line(), first.line()


class Picky(BaseModel):
    """A response model no answer fits: its validator refuses every value."""

    model_config = ConfigDict(extra="allow")

    @model_validator(mode="after")
    def refuse(self) -> Picky:
        raise ValueError("no answer fits")


@when("the actor maps {count:d} prompts in live mode into a response model no answer fits")
def step_map_picky(context: Context, count: int) -> None:
    state = lb(context)
    state.stored_before = 0
    state.calls_before = state.calls()
    state.result = world(context).run(_map(state, _prompts(count), response_model=Picky))


@when("the actor maps the same {count:d} prompts in live mode into that model again")
def step_map_picky_again(context: Context, count: int) -> None:
    state = lb(context)
    state.calls_before = state.calls()
    state.stored_before = count
    state.result = world(context).run(_map(state, _prompts(count), response_model=Picky))


@then("every item failed with the answer that did not fit kept, and its cost counted")
def step_picky_failed(context: Context) -> None:
    result = lb(context).the_result
    for item in result:
        assert item.status.value == "failed", item
        assert isinstance(item.error, StructuredOutputError), item.error
        assert item.response is not None, item
        assert item.cost_usd is not None, item
        assert item.cost_usd > 0, item
    assert result.cost_usd is not None, result
    assert result.cost_usd > 0, result.cost_usd
