"""Steps for cancellations a library loses: an API client whose batch look swallows the `CancelledError` it was
sent (as `asyncio.wait_for` does on Python 3.11 when its answer arrives in the same moment), and the PostgreSQL
ledger's connection pool handing a connection to a task cancelled at that moment."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Protocol

import anthropic
import httpx2
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import Actor
from lowtide.core.clock import ManualClock
from lowtide.emulator import Emulator
from lowtide.ledger.memory import MemoryLedger
from lowtide.ledger.records import BatchState


class _LosingTransport(httpx2.AsyncBaseTransport):
    """The emulator's transport; once armed, the next look at a batch waits until it is cancelled, swallows the
    cancellation and goes on with the look, as a library that lost it would."""

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self._inner = inner
        self.armed = False
        self.waiting = asyncio.Event()
        self.lost = False
        self.looks = 0
        self.looks_after_loss = 0

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        path = request.url.path
        if request.method == "GET" and path.startswith("/v1/messages/batches/") and not path.endswith("/results"):
            self.looks += 1
            if self.lost:
                self.looks_after_loss += 1
            if self.armed:
                self.armed = False
                self.waiting.set()
                try:
                    await asyncio.get_running_loop().create_future()  # until cancelled
                except asyncio.CancelledError:
                    self.lost = True  # swallowed: the look goes on, its answer arrives
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


@dataclass
class _Losing:
    api_clock: ManualClock
    transport: _LosingTransport
    ledger: MemoryLedger
    actor: Actor
    call: asyncio.Task[Any] | None = None
    closed: bool = False
    close_error: BaseException | None = None


class Context(StepContext, Protocol):
    losing: _Losing
    pool_sweep: _Sweep


@given("a batch actor whose API client loses the cancellation of the batch look it is waiting on")
def step_losing_actor(context: Context) -> None:
    api_clock = ManualClock()
    emulator = Emulator(clock=api_clock, processing_seconds=60)  # never ends while the actor runs: its clock waits
    transport = _LosingTransport(emulator.transport())
    client = anthropic.AsyncAnthropic(
        api_key="emulator-key",
        base_url=emulator.base_url,
        http_client=httpx2.AsyncClient(transport=transport, base_url=emulator.base_url),
        max_retries=0,
    )
    ledger = MemoryLedger()
    actor = Actor(
        {
            "name": "planner",
            "model": "claude-haiku-4-5",
            "batch_processing": "batch",
            "max_tokens": 64,
            "batch": {"poll_interval": 0.01, "coalesce_window": 0.01},
        },
        client=client,
        ledger=ledger,
    )
    context.losing = _Losing(api_clock, transport, ledger, actor)

    async def close() -> None:
        losing = context.losing
        losing.api_clock.advance(61)  # should the poller still run, its batch ends: nothing outlives the scenario
        await actor.aclose()
        if losing.call is not None:
            losing.call.cancel()
            await asyncio.gather(losing.call, return_exceptions=True)
        await client.close()

    context.cleanups.append(close)


@when('the actor is asked "{prompt}" and its batch has been looked at while it runs')
def step_ask(context: Context, prompt: str) -> None:
    losing = context.losing

    async def asked() -> None:
        losing.call = asyncio.ensure_future(losing.actor.run(prompt))
        for _ in range(2000):
            if losing.transport.looks >= 2:
                return
            await asyncio.sleep(0.005)
        raise AssertionError(f"the batch was looked at {losing.transport.looks} times in 10 seconds")

    context.runner.run(asked())


@when("the actor is closed while its poller waits on a look at the batch")
def step_close(context: Context) -> None:
    losing = context.losing

    async def closed() -> None:
        losing.transport.armed = True
        await asyncio.wait_for(losing.transport.waiting.wait(), 10)
        try:
            await asyncio.wait_for(losing.actor.aclose(), 10)
            losing.closed = True
        except TimeoutError as exc:
            losing.close_error = exc

    context.runner.run(closed())


@then("the actor is closed within 10 seconds")
def step_closed(context: Context) -> None:
    losing = context.losing
    assert losing.transport.lost, "the look was not cancelled"
    looks = losing.transport.looks_after_loss
    assert losing.closed, f"the actor was still closing after 10 seconds ({looks} looks at the batch since)"


@then("the batch was not looked at after the look that lost the cancellation")
def step_no_more_looks(context: Context) -> None:
    after = context.losing.transport.looks_after_loss
    assert after == 0, f"the batch was looked at {after} times after the cancellation was lost"


@then("the ledger still holds the call's batch, for a later collect")
def step_batch_kept(context: Context) -> None:
    batches = context.losing.ledger.batches()
    assert len(batches) == 1, batches
    assert batches[0].state is BatchState.WAITING, batches[0]
    assert batches[0].provider_batch_id is not None, batches[0]


# -- the PostgreSQL ledger's pool --------------------------------------------------------------------------------------


@dataclass
class _Sweep:
    pool: Any
    trials: int = 0
    went_on: list[tuple[int, int]] = field(default_factory=list[tuple[int, int]])


@given("the scenario's PostgreSQL ledger's connection pool, of one connection")
def step_pool(context: Context) -> None:
    from lowtide.ledger.postgres.pool import PostgresPool

    pool = PostgresPool(context.postgres_url, max_size=1)
    context.pool_sweep = _Sweep(pool)
    context.cleanups.append(pool.aclose)


async def _steps(count: int) -> None:
    for _ in range(count):
        await asyncio.sleep(0)


@when(
    "a task waits for that connection while another holds it, and is cancelled 0 to 5 loop steps after it is given"
    " back, for each of 0 to 5 steps of waiting first"
)
def step_sweep(context: Context) -> None:
    sweep = context.pool_sweep
    pool = sweep.pool

    async def swept() -> None:
        async with pool.connection("open the pool"):
            pass
        for waited in range(6):
            for after in range(6):
                give_back = asyncio.Event()

                async def hold(give_back: asyncio.Event) -> None:
                    async with pool.connection("hold the connection"):
                        await give_back.wait()

                async def use() -> None:
                    async with pool.connection("use the connection") as db:
                        await db.execute("SELECT 1")

                holder = asyncio.ensure_future(hold(give_back))
                await _steps(5)
                user = asyncio.ensure_future(use())
                await _steps(waited)
                give_back.set()
                await _steps(after)
                if user.cancel():
                    sweep.trials += 1
                    try:
                        await user
                        sweep.went_on.append((waited, after))
                    except asyncio.CancelledError:
                        pass
                else:
                    await user
                await holder

    context.runner.run(swept())


@then("each cancelled task ended cancelled, none of them went on to use the connection")
def step_all_cancelled(context: Context) -> None:
    sweep = context.pool_sweep
    assert sweep.trials >= 20, f"only {sweep.trials} of 36 tasks were still waiting when cancelled"
    assert not sweep.went_on, f"{len(sweep.went_on)} of {sweep.trials} cancelled tasks went on: {sweep.went_on}"


@then("the pool still hands out its connection")
def step_pool_usable(context: Context) -> None:
    pool = context.pool_sweep.pool

    async def used() -> int:
        async with pool.connection("use the connection") as db:
            row = await (await db.execute("SELECT 41 + 1")).fetchone()
            assert row is not None
            return int(row[0])

    assert context.runner.run(asyncio.wait_for(used(), 10)) == 42
