"""OpenAI's Batch API by hand with the official `openai` SDK: the input file written and uploaded, one batch created,
polled until it completes, the output file streamed into a dict."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from by_hand import BatchTimes, ByHand
from by_hand.floor import Respond
from by_hand.openai_shaped import floor_batch, one_batch
from harness import API_KEY, MAX_TOKENS, Emulator, prompt

MODEL = "gpt-5.4-mini"


async def raw_sdk(base_url: str, n: int, poll_interval: float) -> tuple[float, float, dict[str, str]]:
    """The same by hand with the official `openai` SDK: the input file written and uploaded, one batch created, polled
    until it completes, the output file streamed into a dict."""
    from openai import AsyncOpenAI

    async with AsyncOpenAI(base_url=f"{base_url}/v1", api_key=API_KEY) as client:
        started_at, start = time.time(), time.perf_counter()
        texts = await one_batch(client, n, poll_interval, **_SHAPE)
        return started_at, time.perf_counter() - start, texts


async def floor(
    base_url: str, n: int, poll_interval: float, ledger: Path, *, respond: Respond | None = None
) -> tuple[float, float, dict[str, str]]:
    """The same calls made by the least a durable client must do (`openai_shaped.floor_batch`)."""
    from openai import AsyncOpenAI

    async with AsyncOpenAI(base_url=f"{base_url}/v1", api_key=API_KEY) as client:
        started_at, start = time.time(), time.perf_counter()
        texts = await floor_batch(client, n, poll_interval, ledger, **_SHAPE, respond=respond)
        return started_at, time.perf_counter() - start, texts


def _body(i: int) -> dict[str, object]:
    return {"model": MODEL, "max_output_tokens": MAX_TOKENS, "input": [{"role": "user", "content": prompt(i)}]}


def _responses_text(line: dict[str, Any]) -> str:
    body = line["response"]["body"]
    return "".join(
        part["text"]
        for item in body["output"]
        if item["type"] == "message"
        for part in item["content"]
        if part["type"] == "output_text"
    )


_SHAPE: Any = {"url": "/v1/responses", "endpoint": "/v1/responses", "body": _body, "text_of": _responses_text}
"""What the Responses API's batch sends and how a line's text is read, for `one_batch` and `floor_batch`."""


def batch_times(emulator: Emulator) -> list[BatchTimes]:
    page = emulator.get_json("/v1/batches?limit=100", {"authorization": f"Bearer {API_KEY}"})
    return [
        BatchTimes(float(b["created_at"]), b.get("completed_at") and float(b["completed_at"])) for b in page["data"]
    ]


BY_HAND = ByHand(
    provider="openai",
    model=MODEL,
    sdk="openai",
    base_path="/v1",
    raw_sdk=raw_sdk,
    batch_times=batch_times,
    created_ids_stat="openai_created_custom_ids",
    floor=floor,
)
