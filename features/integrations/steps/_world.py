"""What an integration scenario sets up and observes, kept on `context.world`."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from step_context import Context

from lowtide import Actor
from lowtide.emulator import Emulator

T = TypeVar("T")

# Real seconds a scenario's call may take before it is called hung (batches end in about a second here).
HANG_SECONDS = 60.0
GEMINI_MODEL = "gemini-2.5-flash"


@dataclass
class World:
    runner: asyncio.Runner
    cleanups: list[Any]
    emulator: Emulator | None = None
    actor: Actor | None = None
    settings: dict[str, Any] = field(default_factory=dict[str, Any])
    results: list[Any] = field(default_factory=list[Any])
    error: BaseException | None = None
    tool_calls: list[str] = field(default_factory=list[str])
    tasks: list[asyncio.Task[Any]] = field(default_factory=list[asyncio.Task[Any]])

    @property
    def emu(self) -> Emulator:
        assert self.emulator is not None, "no emulator: add 'Given an emulated Anthropic API'"
        return self.emulator

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        async def guarded() -> T:
            try:
                return await asyncio.wait_for(coro, HANG_SECONDS)
            except TimeoutError:
                raise AssertionError(f"the call hung: no answer after {HANG_SECONDS:g} real seconds") from None

        return self.runner.run(guarded())

    def attempt(self, coro: Coroutine[Any, Any, T]) -> T | None:
        self.error = None
        try:
            return self.run(coro)
        except AssertionError:
            raise
        except Exception as exc:
            self.error = exc
            return None

    def new_actor(self, mode: str = "batch", provider: str = "anthropic", **overrides: Any) -> Actor:
        """An actor of `provider` (`anthropic` or `gemini`) in `mode`, its SDK's client over the emulator."""
        settings: dict[str, Any] = {
            "name": "agent",
            "provider": provider,
            "model": GEMINI_MODEL if provider == "gemini" else "claude-sonnet-5-5",
            "max_tokens": 1024,
            "batch_processing": mode,
            "batch": {"poll_interval": 0.05, "coalesce_window": 0.5},
        }
        settings.update(self.settings)
        settings.update(overrides)
        actor = Actor(settings, client=self._gemini_client() if provider == "gemini" else self.emu.client())
        self.cleanups.append(actor.aclose)
        self.actor = actor
        return actor

    def _gemini_client(self) -> Any:
        """google-genai's client over the emulator's Gemini API (imported here: only the Gemini scenarios need it)."""
        from google import genai
        from google.genai import types

        http = self.emu.http_client()
        self.cleanups.append(http.aclose)
        options = types.HttpOptions(base_url=self.emu.base_url, api_version="v1beta", httpx_async_client=http)
        return genai.Client(api_key="emulator-key", http_options=options)

    def created_requests(self) -> int:
        return sum(self.emu.created_custom_ids.values())


def world(context: Context) -> World:
    current = getattr(context, "world", None)
    if not isinstance(current, World):
        current = context.world = World(context.runner, context.cleanups)
    return current
