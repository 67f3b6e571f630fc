"""Steps for live mode at the rate limits: an emulator with limits and latency, on a virtual clock."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Protocol

import anthropic
import httpx2
import yaml
from _support import world
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import Actor, ActorResponse, BudgetExceededError
from lowtide.core.clock import VirtualClock
from lowtide.emulator import Emulator, Latency, RateLimits
from lowtide.errors import InvalidRequestError, OverloadedError
from lowtide.live.events import LiveEvent, PauseEnded, PauseStarted, QuotaAdmitted, QuotaSettled, Retried
from lowtide.live.retries import classify
from lowtide.types import ActorRequest

if TYPE_CHECKING:
    from lowtide.ledger.store import LedgerStore
    from lowtide.live.reports import QuotaReport


class LiveContext(StepContext, Protocol):
    """What `live(context)` keeps on the context; the modules that call it (step modules of their own, importing
    this one: no isinstance check on `Live` holds across the two copies of it) declare `live_mode` too."""

    live_mode: Live


class Context(LiveContext, Protocol):
    """What this module keeps on the scenario's context."""

    live_report: tuple[QuotaReport, float]
    live_ledgers: dict[str, LedgerStore]


_BASE = {"model": "claude-sonnet-5-5", "max_tokens": 64, "batch_processing": "live"}


@dataclass
class Live:
    clock: VirtualClock = field(default_factory=VirtualClock)
    latency: float = 2.0
    limits: dict[str, int] = field(default_factory=dict[str, int])
    emulator: Emulator | None = None
    client: Any = None
    actors: dict[str, Actor] = field(default_factory=dict[str, Actor])
    events: list[LiveEvent] = field(default_factory=list[LiveEvent])
    outcomes: list[ActorResponse[Any] | BaseException] = field(default_factory=list[ActorResponse[Any] | BaseException])
    started: float = 0.0
    ended: float = 0.0
    in_flight: int = 0
    in_flight_seen: list[tuple[float, int]] = field(default_factory=list[tuple[float, int]])
    middleware_log: list[str] = field(default_factory=list[str])
    at_risk: list[Decimal] = field(default_factory=list[Decimal])
    """Spent plus reserved under the live spending cap, at every event."""

    def api(self) -> Emulator:
        if self.emulator is None:
            self.emulator = Emulator(
                clock=self.clock, rate_limits=RateLimits(**self.limits), latency=Latency(self.latency)
            )
            self.client = self.emulator.client(api_key="live-key")
        return self.emulator

    def actor(self, name: str = "live", settings: dict[str, Any] | None = None, **options: Any) -> Actor:
        self.api()
        configuration = {**_BASE, "name": name, **(settings or {})}
        actor = Actor(configuration, client=self.client, clock=self.clock, observers=[self.observe], **options)
        self.actors[name] = actor
        return actor

    def observe(self, event: LiveEvent) -> None:
        self.events.append(event)
        for actor in self.actors.values():
            caps = actor._providers._caps  # pyright: ignore[reportPrivateUsage]
            self.at_risk.extend(cap.spent + cap.reserved for cap in caps.values())
        if isinstance(event, QuotaAdmitted):
            self.in_flight += 1
            self.in_flight_seen.append((self.clock.now(), self.in_flight))
        elif isinstance(event, QuotaSettled):
            self.in_flight -= 1


def live(context: LiveContext) -> Live:
    if not hasattr(context, "live_mode"):
        context.live_mode = Live()
    return context.live_mode


async def _gather(lv: Live, calls: list[Any]) -> None:
    lv.started = lv.clock.now()
    results = await asyncio.gather(*calls, return_exceptions=True)
    lv.ended = lv.clock.now()
    lv.outcomes = list(results)


# -- the API ----------------------------------------------------------------------------------------------------------


@given("a live API emulated on a virtual clock, answering each call in {seconds:g} seconds")
def step_api(context: Context, seconds: float) -> None:
    live(context).latency = seconds


@given("the API answers each live call in {seconds:g} seconds")
def step_latency(context: Context, seconds: float) -> None:
    live(context).latency = seconds


@given("the API allows {count:d} {what} per minute per key")
def step_limit(context: Context, count: int, what: str) -> None:
    name = {"requests": "rpm", "input tokens": "input_tpm", "output tokens": "output_tpm", "tokens": "tpm"}[what]
    live(context).limits[name] = count


@given("another program has just used up the key's requests")
def step_stranger(context: Context) -> None:
    lv = live(context)
    api = lv.api()
    stranger = api.client(api_key="live-key")
    rpm = lv.limits["rpm"]

    async def use_up() -> None:
        await asyncio.gather(
            *(
                stranger.messages.create(
                    model="claude-sonnet-5-5", max_tokens=16, messages=[{"role": "user", "content": f"stranger {n}"}]
                )
                for n in range(rpm)
            )
        )

    world(context).run(use_up())


@given("the API fails the next {times:d} live call(s) with {status:d}")
def step_fail_next(context: Context, times: int, status: int) -> None:
    live(context).api().faults.fail_next("messages.create", status, times=times)


@given("the API's connection drops after each of the next {times:d} live call(s) is answered")
def step_drop(context: Context, times: int) -> None:
    live(context).api().faults.drop_after_commit("messages.create", times=times)


# -- the actors -------------------------------------------------------------------------------------------------------


@given("a live actor with:")
def step_actor(context: Context) -> None:
    live(context).actor(settings=yaml.safe_load(context.text))


@given("a live OpenAI actor with:")
def step_openai_actor(context: Context) -> None:
    lv = live(context)
    api = lv.api()
    settings = {
        **_BASE,
        "name": "openai-live",
        "provider": "openai",
        "model": "gpt-5-mini",
        **yaml.safe_load(context.text),
    }
    actor = Actor(settings, client=api.openai_client(api_key="live-key"), clock=lv.clock, observers=[lv.observe])
    lv.actors["openai-live"] = actor


@given('a live actor "{name}" with:')
def step_named_actor(context: Context, name: str) -> None:
    live(context).actor(name, yaml.safe_load(context.text))


@given('a live actor "{name}" on the same client with:')
def step_same_client(context: Context, name: str) -> None:
    live(context).actor(name, yaml.safe_load(context.text))


@given('a live actor whose middleware are "outer" and "inner", and "inner" answers "cached" prompts itself')
def step_middleware(context: Context) -> None:
    lv = live(context)

    async def outer(request: ActorRequest, call_next: Any) -> ActorResponse[Any]:
        lv.middleware_log.append("outer in")
        response = await call_next(request)
        lv.middleware_log.append("outer out")
        return response

    remembered: list[ActorResponse[Any]] = []

    async def inner(request: ActorRequest, call_next: Any) -> ActorResponse[Any]:
        lv.middleware_log.append("inner in")
        prompt = str(request.messages[-1].content)
        response = remembered[0] if "cached" in prompt and remembered else await call_next(request)
        remembered.append(response)
        lv.middleware_log.append("inner out")
        return response

    lv.actor(middleware=[outer, inner])


@given('a live actor whose error classifier retries invalid requests as "server" and never overloaded answers, with:')
def step_classifier(context: Context) -> None:
    def classifier(error: BaseException) -> str | None:
        if isinstance(error, InvalidRequestError):
            return "server"
        if isinstance(error, OverloadedError):
            return None
        return classify(error)

    live(context).actor(settings=yaml.safe_load(context.text), retry_classifier=classifier)


@given("a live actor with a failing observer and a recording one")
def step_observers(context: Context) -> None:
    lv = live(context)

    def broken(event: LiveEvent) -> None:
        raise RuntimeError("this observer is broken")

    lv.api()
    actor = Actor({**_BASE, "name": "observed"}, client=lv.client, clock=lv.clock, observers=[broken, lv.observe])
    lv.actors["observed"] = actor


# -- calls ------------------------------------------------------------------------------------------------------------


@when("{count:d} live calls are made at once")
def step_calls(context: Context, count: int) -> None:
    lv = live(context)
    actor = next(iter(lv.actors.values()))
    world(context).run(_gather(lv, [actor.run(f"Question {n}") for n in range(count)]))


@when("{count:d} live calls with prompts of {size:d} characters are made at once")
def step_long_calls(context: Context, count: int, size: int) -> None:
    lv = live(context)
    actor = next(iter(lv.actors.values()))
    prompts = [f"Question {n} " + "x" * (size - len(f"Question {n} ")) for n in range(count)]
    world(context).run(_gather(lv, [actor.run(prompt) for prompt in prompts]))


@when('"{first}" and "{second}" each make {count:d} live calls at once')
def step_two_actors(context: Context, first: str, second: str, count: int) -> None:
    lv = live(context)
    calls = [lv.actors[name].run(f"{name} {n}") for name in (first, second) for n in range(count)]
    world(context).run(_gather(lv, calls))


@given('a live actor "{name}" on the same client, on a ledger the program opened itself, with:')
def step_actor_own_ledger(context: Context, name: str) -> None:
    from lowtide.ledger.store import open_ledger

    ledger = open_ledger(str(world(context).path(f"{name}.sqlite3")))
    context.live_ledgers = {**getattr(context, "live_ledgers", {}), name: ledger}
    live(context).actor(name, yaml.safe_load(context.text), ledger=ledger)


@when('the actor "{name}" is closed, and the ledger the program opened for it')
def step_close_actor_and_ledger(context: Context, name: str) -> None:
    step_close_actor(context, name)
    context.live_ledgers[name].close()


@when('the actor "{name}" is closed')
def step_close_actor(context: Context, name: str) -> None:
    world(context).run(live(context).actors[name].aclose())


@when('"{name}" makes {count:d} live calls at once')
def step_one_actor_calls(context: Context, name: str, count: int) -> None:
    lv = live(context)
    world(context).run(_gather(lv, [lv.actors[name].run(f"{name} {n}") for n in range(count)]))
    assert all(isinstance(outcome, ActorResponse) for outcome in lv.outcomes), lv.outcomes


@when('a new live actor "{name}" on the same client and a ledger of its own makes {count:d} live calls at once')
def step_new_actor_calls(context: Context, name: str, count: int) -> None:
    lv = live(context)
    lv.actor(name, {"live": {"rpm": 20}}, ledger=str(world(context).path(f"{name}.sqlite3")))
    step_one_actor_calls(context, name, count)


@when("one live call is made")
def step_one_call(context: Context) -> None:
    lv = live(context)
    actor = next(iter(lv.actors.values()))
    world(context).run(_gather(lv, [actor.run("One question")]))


@when('the live call "{prompt}" is made')
def step_named_call(context: Context, prompt: str) -> None:
    lv = live(context)
    actor = next(iter(lv.actors.values()))
    world(context).run(_gather(lv, [actor.run(prompt)]))


# -- outcomes ---------------------------------------------------------------------------------------------------------


@then("all {count:d} calls are answered")
def step_all_answered(context: Context, count: int) -> None:
    outcomes = live(context).outcomes
    failed = [o for o in outcomes if isinstance(o, BaseException)]
    assert not failed, failed[:3]
    assert len(outcomes) == count, len(outcomes)


@then("the API answered no call with 429")
def step_no_429(context: Context) -> None:
    assert live(context).api().rate_limited == 0, live(context).api().rate_limited


@then("no call failed with a 429")
def step_no_429_surfaced(context: Context) -> None:
    assert not [o for o in live(context).outcomes if isinstance(o, BaseException)]


@then("the calls took between {low:g} and {high:g} seconds")
def step_took(context: Context, low: float, high: float) -> None:
    lv = live(context)
    took = lv.ended - lv.started
    assert low <= took <= high, took


@then("the call ended between {low:g} and {high:g} seconds after it started")
def step_call_took(context: Context, low: float, high: float) -> None:
    step_took(context, low, high)


@then("the quota knows the limit of {count:d} requests per minute")
def step_learned(context: Context, count: int) -> None:
    lv = live(context)
    actor = next(iter(lv.actors.values()))

    async def caller() -> Any:
        return actor._live(actor.provider())  # pyright: ignore[reportPrivateUsage]

    quota = world(context).run(caller()).quota
    assert quota.known_limits[0] == count, quota.known_limits


@then("the quota knows the limits of {rpm:d} requests and {tpm:d} tokens per minute")
def step_learned_openai(context: Context, rpm: int, tpm: int) -> None:
    lv = live(context)
    actor = next(iter(lv.actors.values()))

    async def caller() -> Any:
        return actor._live(actor.provider())  # pyright: ignore[reportPrivateUsage]

    limits = world(context).run(caller()).quota.known_limits
    assert (limits[0], limits[3]) == (rpm, tpm), limits


@then("some calls are answered and the rest refused with BudgetExceededError, unsent")
def step_capped(context: Context) -> None:
    lv = live(context)
    answered = [o for o in lv.outcomes if isinstance(o, ActorResponse)]
    refused = [o for o in lv.outcomes if isinstance(o, BudgetExceededError)]
    assert answered, lv.outcomes[:3]
    assert refused, [type(o).__name__ for o in lv.outcomes]
    assert len(answered) + len(refused) == len(lv.outcomes), [type(o).__name__ for o in lv.outcomes]
    assert lv.api().calls["messages.create"] == len(answered), (lv.api().calls, len(answered))


@then("what the answered calls cost is at most ${limit:g}")
def step_cap_kept(context: Context, limit: float) -> None:
    costs = [o.cost.total_usd for o in live(context).outcomes if isinstance(o, ActorResponse) and o.cost is not None]
    assert sum(costs) <= Decimal(str(limit)), sum(costs)


@then("at no time did the calls in flight risk more than ${limit:g} beside what was spent")
def step_cap_never_over(context: Context, limit: float) -> None:
    at_risk = live(context).at_risk
    assert at_risk, "no event saw the cap"
    assert max(at_risk) <= Decimal(str(limit)), max(at_risk)


@then("every call was settled with fewer output tokens than it reserved")
def step_settled(context: Context) -> None:
    events = live(context).events
    reserved = [e.output_tokens for e in events if isinstance(e, QuotaAdmitted)]
    used = [e.output_tokens for e in events if isinstance(e, QuotaSettled)]
    assert len(reserved) == len(used) == 30, (len(reserved), len(used))
    assert max(used) < min(reserved), (max(used), min(reserved))


@then("the observers saw the scope pause once, and the pause end")
def step_paused(context: Context) -> None:
    events = live(context).events
    started = [e for e in events if isinstance(e, PauseStarted)]
    ended = [e for e in events if isinstance(e, PauseEnded)]
    assert len(started) >= 1, events
    assert len(ended) == len(started), (started, ended)


@then("at most {count:d} calls were in flight right after the pause")
def step_slow_start(context: Context, count: int) -> None:
    lv = live(context)
    ends = [e.until for e in lv.events if isinstance(e, PauseStarted)]
    after = [n for at, n in lv.in_flight_seen if at >= max(ends) and at < max(ends) + lv.latency]
    assert after, lv.in_flight_seen
    assert max(after) <= count, after


@then("at most {count:d} calls were in flight before the first answer")
def step_ramp_start(context: Context, count: int) -> None:
    lv = live(context)
    before = [n for at, n in lv.in_flight_seen if at < lv.started + lv.latency]
    assert before, lv.in_flight_seen
    assert max(before) <= count, before


@then("{count:d} calls were in flight at once right after the first answers")
def step_opened(context: Context, count: int) -> None:
    lv = live(context)
    first = lv.started + lv.latency
    after = [n for at, n in lv.in_flight_seen if first <= at < first + lv.latency]
    assert after, lv.in_flight_seen
    assert max(after) == count, after


@then("at most {count:d} calls were in flight in the second round after the pause")
def step_slow_after_pause(context: Context, count: int) -> None:
    lv = live(context)
    ended = max(e.until for e in lv.events if isinstance(e, PauseStarted)) + lv.latency
    after = [n for at, n in lv.in_flight_seen if ended <= at < ended + lv.latency]
    assert after, lv.in_flight_seen
    assert max(after) <= count, (after, lv.in_flight_seen)


def _single(context: Context) -> tuple[ActorResponse[Any] | BaseException, int]:
    lv = live(context)
    [outcome] = lv.outcomes
    attempts = sum(1 for e in lv.events if type(e).__name__ == "AttemptStarted")
    return outcome, attempts


@then("the call succeeds after {attempts:d} attempt(s)")
def step_succeeds(context: Context, attempts: int) -> None:
    outcome, made = _single(context)
    assert isinstance(outcome, ActorResponse), outcome
    assert made == attempts, made


@then("the call fails with {name:w} after {attempts:d} attempt(s)")
def step_fails(context: Context, name: str, attempts: int) -> None:
    outcome, made = _single(context)
    assert type(outcome).__name__ == name, repr(outcome)
    assert made == attempts, made


@then('the middleware saw "{order}"')
def step_middleware_order(context: Context, order: str) -> None:
    assert live(context).middleware_log == [part.strip() for part in order.split(",")], live(context).middleware_log


@then("the API received {count:d} live call(s)")
def step_api_calls(context: Context, count: int) -> None:
    assert live(context).api().calls["messages.create"] == count, live(context).api().calls


@then("the events seen were {names}")
def step_events(context: Context, names: str) -> None:
    seen = [type(e).__name__ for e in live(context).events]
    assert seen == [n.strip() for n in names.split(",")], seen


@then('the observers were told the retry was for "{reason}"')
def step_retry_reason(context: Context, reason: str) -> None:
    retried = [e for e in live(context).events if isinstance(e, Retried)]
    assert [e.reason for e in retried] == [reason], retried


@when('the {provider} headers "{headers}" are read')
def step_read_headers(context: Context, provider: str, headers: str) -> None:
    from lowtide.providers.anthropic.ratelimits import quota_report as anthropic_report
    from lowtide.providers.openai.ratelimits import quota_report as openai_report

    given = dict(pair.strip().split("=", 1) for pair in headers.split(","))
    now = 1_800_000_000.0
    context.live_report = (anthropic_report(given) if provider == "anthropic" else openai_report(given, now=now), now)


@then("the report says {said}")
def step_report(context: Context, said: str) -> None:
    report, now = context.live_report
    if said == "nothing":
        assert report.empty, report
        assert report.retry_after is None, report
        return
    if said.startswith("retry after"):
        assert report.retry_after == float(said.split()[2]), report
        return
    kind, rest = said.split(" ", 1)
    budget = report.requests if kind == "requests" else report.tokens
    assert budget is not None, report
    limit, left = (int(part.split()[0]) for part in rest.split(", ")[:2])
    assert (budget.limit, budget.remaining) == (limit, left), budget
    when = rest.split(", ")[2]
    if when == "full at an unknown time":
        assert budget.reset_at is None, budget
    elif when.startswith("full in"):
        assert budget.reset_at is not None
        assert abs(budget.reset_at - now - float(when.split()[2])) < 1e-6, budget
    else:
        stamp = datetime.fromisoformat(when.removeprefix("full at ").replace("Z", "+00:00")).timestamp()
        assert budget.reset_at == stamp, budget


@given(
    "each call takes from 0 to {to:g} seconds to reach the API and from 0 to {back:g} to come back, as drawn with seed"
    " {seed:d}"
)
def step_loaded_machine(context: Context, to: float, back: float, seed: int) -> None:
    lv = live(context)
    api = lv.api()
    inner = api.transport()
    clock = lv.clock
    draws = random.Random(seed)

    class Loaded(httpx2.AsyncBaseTransport):
        """A loaded machine's event loops: each call's way to the API, and its answer's way back, takes its time."""

        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            if not request.url.path.endswith("/messages"):
                return await inner.handle_async_request(request)
            await clock.sleep(draws.random() * to)
            response = await inner.handle_async_request(request)
            await clock.sleep(draws.random() * back)
            return response

    http = httpx2.AsyncClient(transport=Loaded(), base_url=api.base_url)
    lv.client = anthropic.AsyncAnthropic(api_key="live-key", base_url=api.base_url, http_client=http, max_retries=0)


@given("the first {count:d} calls take {seconds:g} seconds to reach the API, and the others none")
def step_on_the_way(context: Context, count: int, seconds: float) -> None:
    lv = live(context)
    api = lv.api()
    inner = api.transport()
    clock = lv.clock
    sent = [0]

    class Slow(httpx2.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            if request.url.path.endswith("/messages"):
                sent[0] += 1
                if sent[0] <= count:
                    await clock.sleep(seconds)
            return await inner.handle_async_request(request)

    http = httpx2.AsyncClient(transport=Slow(), base_url=api.base_url)
    lv.client = anthropic.AsyncAnthropic(api_key="live-key", base_url=api.base_url, http_client=http, max_retries=0)
