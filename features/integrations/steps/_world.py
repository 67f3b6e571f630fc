"""What an integration scenario sets up and observes, kept on `context.world`."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from step_context import Context

from lowtide import Actor
from lowtide.emulator import Emulator, RunningServer, serve_in_thread
from lowtide.emulator.bedrock import CLIENT_ENVIRONMENT
from lowtide.emulator.bedrock.emulation import BedrockEmulation
from lowtide.emulator.bedrock.s3 import DEFAULT_BUCKET

T = TypeVar("T")

# Real seconds a scenario's call may take before it is called hung (batches end in about a second here).
HANG_SECONDS = 60.0
GEMINI_MODEL = "gemini-2.5-flash"


@dataclass(frozen=True)
class ServedProvider:
    """A provider whose actor builds its own SDK client, as a user's program does: from the actor's `base_url` (the
    emulator on a loopback socket) and the key in the environment."""

    model: str
    environment: dict[str, str | None]
    provider_options: dict[str, Any] = field(default_factory=dict[str, Any])


_AWS = dict(CLIENT_ENVIRONMENT)
_BEDROCK_JOBS = {"s3_bucket": DEFAULT_BUCKET, "role_arn": "arn:aws:iam::123456789012:role/lowtide-batch"}
SERVED_PROVIDERS = {
    "groq": ServedProvider("llama-3.1-8b-instant", {"GROQ_API_KEY": "gsk-emulator-key"}),
    "together": ServedProvider("meta-llama/Llama-3.3-70B-Instruct-Turbo", {"TOGETHER_API_KEY": "emulator-key"}),
    "mistral": ServedProvider("mistral-small-latest", {"MISTRAL_API_KEY": "emulator-key"}),
    # The emulated resource has a deployment of each OpenAI text model, named after it.
    "azure_openai": ServedProvider("gpt-4o-mini", {"AZURE_OPENAI_API_KEY": "emulator-key"}),
    # A job of one record: the emulated account's minimum is lowered to match (`World.served_url`).
    "bedrock": ServedProvider("amazon.nova-micro-v1:0", _AWS, {"bedrock": {**_BEDROCK_JOBS, "min_records": 1}}),
    # Gemini on Vertex AI: anonymous against the emulator on this machine, its batches' files in the emulated bucket.
    "vertex": ServedProvider(
        GEMINI_MODEL, {}, {"vertex": {"project": "agent-project", "location": "us-central1", "bucket": "agent-batches"}}
    ),
    # Claude on Vertex AI: the same project and bucket, the anthropic SDK's AnthropicVertex for its calls.
    "vertex_claude": ServedProvider(
        "claude-sonnet-4-6@20260217",
        {},
        {"vertex_claude": {"project": "agent-project", "location": "us-east5", "bucket": "agent-batches"}},
    ),
}
SERVED_API = {"vertex_claude": "vertex"}
"""The emulated API a provider's calls reach, where its name is not the provider's (Claude on Vertex AI's: Vertex
AI's)."""


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
    server: RunningServer | None = None

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
        """An actor of `provider` in `mode`: `anthropic` and `gemini` given their SDK's client over the emulator in
        process, the others (`SERVED_PROVIDERS`) building their own against the emulator on a socket."""
        if provider in SERVED_PROVIDERS:
            return self._served_actor(mode, provider, **overrides)
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

    def _served_actor(self, mode: str, provider: str, **overrides: Any) -> Actor:
        served = SERVED_PROVIDERS[provider]
        for variable, value in served.environment.items():
            self.set_env(variable, value)
        settings: dict[str, Any] = {
            "name": f"agent-{provider}",
            "provider": provider,
            "model": served.model,
            "max_tokens": 1024,
            "batch_processing": mode,
            "batch": {"poll_interval": 0.05, "coalesce_window": 0.5},
            "base_url": self.served_url(),
            "provider_options": served.provider_options,
        }
        settings.update(self.settings)
        settings.update(overrides)
        actor = Actor(settings)
        self.cleanups.append(actor.aclose)
        self.actor = actor
        return actor

    def served_url(self) -> str:
        """The emulator's address on a loopback socket, served from a thread until the scenario ends."""
        if self.server is None:
            self.emu.emulation(BedrockEmulation).jobs.min_records = 1
            serving = serve_in_thread(self.emu)
            self.server = serving.__enter__()
            self.cleanups.append(lambda: serving.__exit__(None, None, None))
        return self.server.url

    def set_env(self, variable: str, value: str | None) -> None:
        """Set (None: unset) an environment variable until the scenario ends."""
        previous = os.environ.get(variable)

        def restore() -> None:
            if previous is None:
                os.environ.pop(variable, None)
            else:
                os.environ[variable] = previous

        self.cleanups.append(restore)
        if value is None:
            os.environ.pop(variable, None)
        else:
            os.environ[variable] = value

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
