"""Steps of streaming.feature's early leaver: a live actor over a socket to the scenario's emulator, whose streams
wait after their first piece (`held_streams.HeldStreams`), read by a loop that breaks out after that piece, so that
the stream's close is seen by the emulator while the rest is still held: by order, not by time."""

from __future__ import annotations

import asyncio
from contextlib import ExitStack
from typing import Protocol

from _support import API_KEY, world
from held_streams import HOLD_SECONDS, HeldStreams
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.http.server import app_in_thread
from lowtide.streaming import TextDelta
from lowtide.types import ActorResponse

_MODEL = "claude-sonnet-5-5"


class Context(StepContext, Protocol):
    """What these steps keep on the scenario's context."""

    held_streams: HeldStreams
    first_piece_while_held: bool


_PROMPT = "Describe the harbour at low tide, in some detail."


@given("a streaming live actor on anthropic over a socket, to an emulator holding its streams after their first piece")
def step_held_actor(context: Context) -> None:
    w = world(context)
    held = context.held_streams = HeldStreams(w.emu)
    stack = ExitStack()
    w.cleanups.append(stack.close)
    url, _ = stack.enter_context(app_in_thread(held))
    w.cleanups.append(held.release)  # nothing stays held past the scenario
    settings = {"name": "teller", "provider": "anthropic", "model": _MODEL, "batch_processing": "live"}
    w.add_actor({**settings, "base_url": url}, client=None, api_key=API_KEY)


@when("the actor's answer is read until its first piece, then the reader breaks out of its loop")
def step_break_out(context: Context) -> None:
    w, held = world(context), context.held_streams

    async def read() -> None:
        async for event in w.current_actor().stream(_PROMPT):
            if isinstance(event, TextDelta):
                context.first_piece_while_held = held.held == 1 and not held.overran
                break

    w.run(read())


@then("the emulator saw the stream closed while the rest was held, and nothing was left unretrieved")
def step_closed_while_held(context: Context) -> None:
    w, held = world(context), context.held_streams
    assert context.first_piece_while_held is True, "the first piece came after the emulator had let the rest go"

    async def closed() -> bool:
        # The left generator is closed by the loop once it is collected (its finalizer schedules `aclose`): waited
        # for on the loop, as a held stream's close, never by time (the bound is the failure's only).
        return await asyncio.to_thread(held.closed_while_held.wait, HOLD_SECONDS)

    assert w.run(closed()), "the actor kept reading the emulator's stream after its reader left"
    # An exception no one retrieved fails the scenario by itself: environment.py's loop handler, after its collection.


@then("the actor's next streamed answer comes whole after it")
def step_next_whole(context: Context) -> None:
    w, held = world(context), context.held_streams
    held.release()

    async def read() -> str:
        pieces: list[str] = []
        async for event in w.current_actor().stream(_PROMPT):
            if isinstance(event, TextDelta):
                pieces.append(event.text)
            elif isinstance(event, ActorResponse):
                assert "".join(pieces) == event.text, (pieces, event.text)
                return event.text
        raise AssertionError("the stream ended without its response")

    assert w.run(read()).startswith("Emulated reply")
    assert held.streams == 2, held.streams
