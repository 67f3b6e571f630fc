"""Steps of streaming.feature's early leaver: a live actor over a socket to the scenario's emulator, whose streams
wait after their first piece (`held_streams.HeldStreams`), read by a loop that breaks out after that piece, so that
the stream's close is seen by the emulator while the rest is still held: by order, not by time."""

from __future__ import annotations

import asyncio
from contextlib import ExitStack
from typing import Any, Protocol

from _support import API_KEY, set_env, world
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


# Each provider's live streaming actor as a user's program makes it: its SDK client built by lowtide from `base_url`
# (the held emulator's address, plus where the provider's API sits on it) and the key in the environment.
_ACTORS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "anthropic": (_MODEL, "", {}),
    "openai responses": ("gpt-5.4-mini", "/v1", {"openai": {"endpoint": "responses"}}),
    "openai chat_completions": ("gpt-5.4-mini", "/v1", {"openai": {"endpoint": "chat_completions"}}),
    "groq": ("llama-3.1-8b-instant", "", {}),
    "together": ("meta-llama/Llama-3.3-70B-Instruct-Turbo", "", {}),
    "fireworks": ("accounts/fireworks/models/gpt-oss-20b", "/fireworks", {}),
    "xai": ("grok-3-mini", "/xai/v1", {}),
    "openai_compatible": ("gpt-4o-mini", "", {}),
    "gemini": ("gemini-2.5-flash", "", {}),
    "mistral": ("mistral-small-latest", "", {}),
    "azure_openai": ("gpt-4o-mini", "", {}),  # the emulated resource has a deployment of each OpenAI text model
}
_KEYS = (
    "OPENAI_API_KEY", "GROQ_API_KEY", "TOGETHER_API_KEY", "FIREWORKS_API_KEY", "XAI_API_KEY", "GEMINI_API_KEY",
    "MISTRAL_API_KEY", "AZURE_OPENAI_API_KEY", "COMPAT_KEY",
)  # fmt: skip


@given("a streaming live actor on {api} over a socket, to an emulator holding its streams after their first piece")
def step_held_actor(context: Context, api: str) -> None:
    w = world(context)
    held = context.held_streams = HeldStreams(w.emu)
    stack = ExitStack()
    w.cleanups.append(stack.close)
    url, _ = stack.enter_context(app_in_thread(held))
    w.cleanups.append(held.release)  # nothing stays held past the scenario
    for variable in _KEYS:
        set_env(w, variable, API_KEY)
    provider = api.split(" ")[0]
    model, path, options = _ACTORS[api]
    settings: dict[str, Any] = {"name": "teller", "provider": provider, "model": model, "batch_processing": "live"}
    if provider == "openai_compatible":
        options = {"openai_compatible": {"base_url": f"{url}/v1", "api_key_env": "COMPAT_KEY"}}
    else:
        settings["base_url"] = url + path
    w.add_actor({**settings, "provider_options": options}, client=None, api_key=API_KEY)


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
