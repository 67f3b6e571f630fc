"""Steps for the clocks that polling and the emulator share."""

from __future__ import annotations

import time

from _support import names, world
from step_context import Context, given, then, when

from lowtide import Clock, SystemClock


@given("a manual clock")
def step_manual_clock(context: Context) -> None:
    w = world(context)
    w.value = w.clock.now()


@when("the clock sleeps {first:g} seconds, then {second:g} seconds")
def step_manual_sleeps(context: Context, first: float, second: float) -> None:
    w = world(context)

    async def sleep_twice() -> None:
        await w.clock.sleep(first)
        await w.clock.sleep(second)

    w.run(sleep_twice())


@when("the manual clock is moved back {seconds:g} seconds")
def step_manual_back(context: Context, seconds: float) -> None:
    w = world(context)
    try:
        w.clock.advance(-seconds)
    except ValueError as exc:
        w.error = exc


@then('it refuses with "{message}"')
def step_refuses(context: Context, message: str) -> None:
    error = world(context).failure()
    assert isinstance(error, ValueError), error
    assert str(error) == message, str(error)


@then("the manual clock says {seconds:g} seconds have passed")
def step_manual_elapsed(context: Context, seconds: float) -> None:
    w = world(context)
    assert w.clock.now() - w.value == seconds, w.clock.now() - w.value


@then("the manual clock recorded the waits {waits}")
def step_manual_waits(context: Context, waits: str) -> None:
    assert world(context).clock.sleeps == [float(item) for item in names(waits)], world(context).clock.sleeps


@given("the system clock")
def step_system_clock(context: Context) -> None:
    clock = SystemClock()
    assert isinstance(clock, Clock)
    world(context).value = clock


@then("the system clock tells the time within a second of the real time")
def step_system_now(context: Context) -> None:
    assert abs(world(context).value.now() - time.time()) < 1


@then("the system clock can wait {seconds:g} seconds")
def step_system_sleep(context: Context, seconds: float) -> None:
    w = world(context)
    w.run(w.value.sleep(seconds))
