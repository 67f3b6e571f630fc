"""Shared state and helpers of the OpenAI emulator steps (features/emulator_openai.feature): one `OpenAIScenario`
per scenario on `context.openai_scenario`, the official openai SDK wired to the emulator in process, and a strict
check of every SDK object against the SDK's own types."""

from __future__ import annotations

import base64
import json
import struct
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2
import openai
from pydantic import BaseModel
from step_context import Context

from lowtide.core.clock import ManualClock
from lowtide.emulator import Emulator, RunningServer

KEY = "sk-openai-scenario-key-7f3a"
MODEL = "gpt-4o-mini"


@dataclass
class OpenAIScenario:
    """What one OpenAI emulator scenario set up, did and saw."""

    runner: Any
    cleanups: list[Callable[[], object]]
    clock: ManualClock = field(default_factory=ManualClock)
    emulator: Emulator | None = None
    client: openai.AsyncOpenAI | None = None
    server: RunningServer | None = None
    state_file: str | None = None
    reply: Any = None
    previous: Any = None
    error: Exception | None = None
    raw: httpx2.Response | None = None
    files: dict[str, str] = field(default_factory=dict[str, str])
    batch: Any = None
    batches: list[str] = field(default_factory=list[str])
    expected_tokens: int = 0
    streamed: Any = None
    events: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    vectors: list[list[float]] = field(default_factory=list[list[float]])
    sleeps: int = 0
    snapshot: dict[str, Any] = field(default_factory=dict[str, Any])

    @property
    def emu(self) -> Emulator:
        assert self.emulator is not None, "start the emulator first"
        return self.emulator

    @property
    def sdk(self) -> openai.AsyncOpenAI:
        assert self.client is not None, "start the emulator first"
        return self.client

    def run(self, make: Callable[[], Awaitable[Any]]) -> Any:
        """Run an SDK call; an OpenAI error is kept for the Then steps instead of raised."""
        self.error = None

        async def call() -> Any:
            return await make()

        try:
            return self.runner.run(call())
        except openai.OpenAIError as error:
            self.error = error
            return None

    def file_id(self, name: str) -> str:
        return self.files.get(name, name)


def scenario(context: Context) -> OpenAIScenario:
    current = getattr(context, "openai_scenario", None)
    if not isinstance(current, OpenAIScenario):
        current = context.openai_scenario = OpenAIScenario(runner=context.runner, cleanups=context.cleanups)
    return current


def start(context: Context, **settings: Any) -> OpenAIScenario:
    s = scenario(context)
    s.emulator = Emulator(clock=s.clock, **settings)
    connect(s)
    return s


def connect(s: OpenAIScenario, max_retries: int = 0) -> None:
    s.client = s.emu.openai_client(api_key=KEY, max_retries=max_retries)
    s.cleanups.append(s.client.close)


def strict(value: Any, kind: type[BaseModel] | None = None) -> Any:
    """`value` validated again by its SDK type (or `kind`), strictly: the SDK itself builds objects without checking
    them, so a missing required field would otherwise go unnoticed."""
    model = kind if kind is not None else type(value)
    data = value.to_dict(mode="json") if hasattr(value, "to_dict") else value
    return model.model_validate(data)


def when(s: OpenAIScenario) -> int:
    """Seconds since the scenario's clock started."""
    return int(s.clock.now() - 1_800_000_000)


def raw_call(
    s: OpenAIScenario,
    method: str,
    path: str,
    *,
    headers: dict[str, str] | None = None,
    content: bytes | None = None,
    transport: Any = None,
) -> httpx2.Response:
    sent = {"authorization": f"Bearer {KEY}"} if headers is None else headers

    async def call() -> httpx2.Response:
        client = (
            httpx2.AsyncClient(transport=transport, base_url=s.emu.base_url)
            if transport is not None
            else s.emu.http_client()
        )
        async with client as http:
            response = await http.request(method, path, headers=sent, content=content)
            await response.aread()
            return response

    raw = s.raw = s.runner.run(call())
    return raw


def png(width: int, height: int) -> bytes:
    """The start of a PNG, as far as its header (all that says its size)."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + header + b"\x00\x00\x00\x00"


def jpeg(width: int, height: int) -> bytes:
    frame = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + frame + b"\xff\xd9"


def gif(width: int, height: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\x00\x00\x00;"


def webp(width: int, height: int) -> bytes:
    body = b"VP8X" + struct.pack("<I", 10) + b"\x00" * 4
    body += (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return b"RIFF" + struct.pack("<I", 4 + len(body)) + b"WEBP" + body


def data_url(media_type: str, raw: bytes) -> str:
    return f"data:{media_type};base64,{base64.b64encode(raw).decode()}"


def jsonl(items: list[Any]) -> bytes:
    """Lines of JSON; a string item is a line as it stands."""
    return "\n".join(item if isinstance(item, str) else json.dumps(item) for item in items).encode()


def request_line(custom_id: str, endpoint: str, index: int) -> dict[str, Any]:
    if endpoint == "/v1/embeddings":
        body: dict[str, Any] = {"model": "text-embedding-3-small", "input": f"Question {index}"}
    elif endpoint == "/v1/chat/completions":
        body = {"model": MODEL, "messages": [{"role": "user", "content": f"Question {index}"}]}
    else:
        body = {"model": MODEL, "input": f"Question {index}"}
    return {"custom_id": custom_id, "method": "POST", "url": endpoint, "body": body}


def wall_clock() -> float:
    return time.perf_counter()
