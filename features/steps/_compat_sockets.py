"""The groq and together SDKs as a program builds them (from their base-URL and key variables alone), against the
emulator on a loopback socket (features/emulator_groq.feature, features/emulator_together.feature): what each SDK is,
what it did in a scenario, and the checks both features make of its answers. `{sdk:Sdk}` in a step text matches
"groq" or "together" and gives the `Sdk`."""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

import groq
import httpx
import parse
import together
from _socket_emulator import SocketEmulator
from _support import set_env, world
from behave.api.step_matchers import register_type
from step_context import Context as StepContext

__all__ = ["GROQ_SDK", "TOGETHER_SDK", "Context", "Sdk", "SdkSocket", "batch_lines", "call", "serve"]


@dataclass(frozen=True)
class Sdk:
    """One SDK as the emulator scenarios build it."""

    name: str
    """As step texts and the emulator's stats name it: "groq"."""
    module: ModuleType
    base_url_variable: str
    key_variable: str
    key: str
    build: Callable[[], Any]
    """A client from the environment alone, its own retries off."""
    api_path: str
    """Where its API's paths start, after the base URL: "/openai/v1"."""


GROQ_SDK = Sdk(
    name="groq",
    module=groq,
    base_url_variable="GROQ_BASE_URL",
    key_variable="GROQ_API_KEY",
    key="gsk-emulated-groq-scenario-key-81c4",
    build=lambda: groq.AsyncGroq(max_retries=0),
    api_path="/openai/v1",
)
TOGETHER_SDK = Sdk(
    name="together",
    module=together,
    base_url_variable="TOGETHER_BASE_URL",
    key_variable="TOGETHER_API_KEY",
    key="tgp-emulated-together-scenario-key-27b9",
    build=lambda: together.AsyncTogether(max_retries=0),
    api_path="/v1",
)
_BY_NAME = {sdk.name: sdk for sdk in (GROQ_SDK, TOGETHER_SDK)}


@parse.with_pattern(r"groq|together")
def _sdk(string: str) -> Sdk:
    return _BY_NAME[string]


register_type(Sdk=_sdk)


@dataclass
class SdkSocket:
    """What the SDK did against the scenario's emulator."""

    sdk: Sdk
    file_ids: list[str] = field(default_factory=list[str])
    batch_id: str = ""
    error: Exception | None = None
    cancel_status: str = ""
    upload: Path | None = None

    @property
    def file_id(self) -> str:
        return self.file_ids[-1]


class Context(StepContext, Protocol):
    sdk_socket: SdkSocket
    socket_emulator: SocketEmulator


def serve(context: Context, sdk: Sdk, seconds: float) -> None:
    """The emulator on a socket whose batches take `seconds`, its address and a key in `sdk`'s variables."""
    context.sdk_socket = SdkSocket(sdk)
    context.socket_emulator = SocketEmulator(sdk.base_url_variable, processing_seconds=seconds)
    set_env(world(context), sdk.key_variable, sdk.key)
    context.socket_emulator.serve(world(context))


def call(context: Context, make: Callable[[Any], Coroutine[Any, Any, Any]]) -> Any:
    """An SDK call by a client built as a program builds it (from the environment alone); the SDK's error is kept."""
    s = context.sdk_socket
    s.error = None

    async def calling() -> Any:
        client = s.sdk.build()
        try:
            return await make(client)
        finally:
            await client.close()

    try:
        return world(context).run(calling())
    except s.sdk.module.APIError as exc:
        s.error = exc
        return None


def batch_lines(count: int, models: list[str]) -> str:
    """A batch input file of `count` chat requests, naming `models` in turn, custom ids r0, r1, ..."""
    return "\n".join(
        json.dumps(
            {
                "custom_id": f"r{index}",
                "method": "POST",
                "url": "/v1/chat/completions",
                "body": {"model": models[index % len(models)], "messages": [{"role": "user", "content": f"Q{index}"}]},
            }
        )
        for index in range(count)
    )


def check_output(context: Context, output_file_id: str, model: str, count: int) -> None:
    """The output file holds an answer from `model` for each of the `count` requests."""

    async def read(client: Any) -> bytes:
        return await (await client.files.content(output_file_id)).read()

    lines = [json.loads(line) for line in call(context, read).splitlines()]
    assert sorted(line["custom_id"] for line in lines) == [f"r{index}" for index in range(count)], lines
    assert {line["response"]["body"]["model"] for line in lines} == {model}, lines
    assert all(line["response"]["status_code"] == 200 for line in lines), lines


def check_stats(context: Context, batches: int, ids: int) -> None:
    """The emulator's stats count `batches` batches created, with `ids` custom ids, for the scenario's SDK."""
    stats = httpx.get(f"{context.socket_emulator.url}/_emulator/stats", timeout=30).json()
    name = context.sdk_socket.sdk.name
    assert stats[f"{name}_created_batches"] == batches, stats
    assert len(stats[f"{name}_created_custom_ids"]) == ids, stats
