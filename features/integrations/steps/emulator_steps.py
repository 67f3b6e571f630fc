"""The emulated API and the actor the scenarios' frameworks are given."""

from __future__ import annotations

from _world import SERVED_API, world
from step_context import Context, given, then


@given("an emulated Anthropic API that ends batches after {seconds:f} seconds")
def step_emulator(context: Context, seconds: float) -> None:
    from lowtide.emulator import Emulator

    world(context).emulator = Emulator(processing_seconds=seconds)


@given("every provider's API emulated on a loopback socket, ending batches after {seconds:f} seconds")
def step_served_emulator(context: Context, seconds: float) -> None:
    from lowtide.emulator import Emulator

    w = world(context)
    w.emulator = Emulator(processing_seconds=seconds)
    w.served_url()


@given("the actor allows {attempts:d} attempt per request")
def step_attempts(context: Context, attempts: int) -> None:
    world(context).settings["batch"] = {"poll_interval": 0.05, "coalesce_window": 0.5, "max_attempts": attempts}


@given("the actor retries each kind of live error once")
def step_live_retries(context: Context) -> None:
    kinds = ("rate_limited", "overloaded", "server", "connection", "timeout")
    world(context).settings["live"] = {"retries": dict.fromkeys(kinds, 1)}


@given("the API answers the next {count:d} calls to {route} with status {status:d}")
def step_fail_next(context: Context, count: int, route: str, status: int) -> None:
    world(context).emu.faults.fail_next(route, status, times=count)


@then("the emulator created {count:d} batch")
@then("the emulator created {count:d} batches")
def step_batches_created(context: Context, count: int) -> None:
    created = world(context).emu.created_batches
    assert created == count, f"the emulator created {created} batches, not {count}"


@then("the emulator was sent {count:d} requests, none of them twice")
def step_requests_created(context: Context, count: int) -> None:
    created = world(context).emu.created_custom_ids
    twice = [custom_id for custom_id, times in created.items() if times > 1]
    assert not twice, f"requests sent twice: {twice[:5]}"
    assert len(created) == count, f"the emulator was sent {len(created)} requests, not {count}"


@then("no batch was created and no message was sent")
def step_nothing_sent(context: Context) -> None:
    calls = world(context).emu.calls
    assert calls["batches.create"] == 0, f"a batch was created: {dict(calls)}"
    assert calls["messages.create"] == 0, f"a message was sent: {dict(calls)}"


@given("the actor waits at most {seconds:f} seconds for a batch")
def step_max_wait(context: Context, seconds: float) -> None:
    world(context).settings["batch"] = {"poll_interval": 0.05, "coalesce_window": 0.1, "max_wait": seconds}


@then("the emulated Gemini API answered {count:d} generateContent call(s) live")
def step_gemini_calls(context: Context, count: int) -> None:
    calls = world(context).emu.calls["gemini.generate_content"]
    assert calls == count, f"the emulated Gemini API answered {calls} generateContent calls, not {count}"


@then("only the emulated {provider} API was called, and it created {count:d} batch(es)")
def step_only_provider(context: Context, provider: str, count: int) -> None:
    """Every call the emulator served was to `provider`'s API (route names `<provider>.<...>`), and the batches its
    API created (its `<provider>_created_batches` counter)."""
    emu = world(context).emu
    provider = SERVED_API.get(provider, provider)
    called = {route: times for route, times in emu.calls.items() if times}
    others = sorted(route for route in called if not route.startswith(f"{provider}."))
    assert called, "the emulator served no call"
    assert not others, f"the emulator served {called}"
    created = sum(int(str(e.stats().get(f"{provider}_created_batches", 0))) for e in emu.emulations)
    assert created == count, f"the emulated {provider} API created {created} batches, not {count}"
