"""Groq's Batch API by hand with the official `groq` SDK: the input file uploaded, one batch created, polled until it
ends, the output file streamed into a dict (Groq's API is OpenAI's, under `/openai/v1`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from by_hand import BatchTimes, ByHand, chat_text
from by_hand.floor import Respond
from by_hand.openai_shaped import floor_batch, one_batch
from harness import API_KEY, MAX_TOKENS, Emulator, prompt

MODEL = "llama-3.1-8b-instant"


async def raw_sdk(base_url: str, n: int, poll_interval: float) -> tuple[float, float, dict[str, str]]:
    """What a careful user of `AsyncGroq` writes (Groq's batch docs): the JSONL uploaded with `purpose="batch"`, one
    batch for `/v1/chat/completions` with a 24-hour window, polled, its output file streamed line by line."""
    from groq import AsyncGroq

    async with AsyncGroq(base_url=base_url, api_key=API_KEY) as client:
        started_at, start = time.time(), time.perf_counter()
        texts = await one_batch(client, n, poll_interval, **_SHAPE)
        return started_at, time.perf_counter() - start, texts


async def floor(
    base_url: str, n: int, poll_interval: float, ledger: Path, *, respond: Respond | None = None
) -> tuple[float, float, dict[str, str]]:
    """The same calls made by the least a durable client must do (`openai_shaped.floor_batch`)."""
    from groq import AsyncGroq

    async with AsyncGroq(base_url=base_url, api_key=API_KEY) as client:
        started_at, start = time.time(), time.perf_counter()
        texts = await floor_batch(client, n, poll_interval, ledger, **_SHAPE, respond=respond)
        return started_at, time.perf_counter() - start, texts


def _body(i: int) -> dict[str, object]:
    return {"model": MODEL, "max_completion_tokens": MAX_TOKENS, "messages": [{"role": "user", "content": prompt(i)}]}


_SHAPE: Any = {
    "url": "/v1/chat/completions",
    "endpoint": "/v1/chat/completions",
    "body": _body,
    "text_of": chat_text,
    "content_type": "application/jsonl",
}
"""What Groq's batch sends and how a line's text is read, for `one_batch` and `floor_batch`."""


def batch_times(emulator: Emulator) -> list[BatchTimes]:
    page = emulator.get_json("/openai/v1/batches", {"authorization": f"Bearer {API_KEY}"})
    return [
        BatchTimes(float(b["created_at"]), b.get("completed_at") and float(b["completed_at"])) for b in page["data"]
    ]


BY_HAND = ByHand(
    provider="groq",
    model=MODEL,
    sdk="groq",
    base_path="",
    raw_sdk=raw_sdk,
    batch_times=batch_times,
    created_ids_stat="groq_created_custom_ids",
    floor=floor,
)
