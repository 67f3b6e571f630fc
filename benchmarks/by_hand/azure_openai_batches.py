"""Azure OpenAI's Batch API by hand with the official `openai` SDK's `AsyncAzureOpenAI`: the input file (Chat
Completions lines, each naming the deployment as its model) uploaded, one batch created at Azure's `/chat/completions`,
polled until it ends, the output file streamed into a dict."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from by_hand import BatchTimes, ByHand, chat_text
from by_hand.floor import Respond
from by_hand.openai_shaped import floor_batch, one_batch
from harness import API_KEY, MAX_TOKENS, Emulator, prompt

DEPLOYMENT = "gpt-4o-mini"
"""A deployment named after its model, as the emulator's Azure resource has one for each."""
API_VERSION = "2024-10-21"
"""Azure's API version with batches (and their metadata), as lowtide's default."""


async def raw_sdk(base_url: str, n: int, poll_interval: float) -> tuple[float, float, dict[str, str]]:
    """What a careful user of `AsyncAzureOpenAI` writes: the resource's endpoint (the SDK adds `/openai`), the JSONL
    uploaded with `purpose="batch"`, one batch with a 24-hour window, polled, its output file streamed line by line."""
    from openai import AsyncAzureOpenAI

    async with AsyncAzureOpenAI(azure_endpoint=base_url, api_version=API_VERSION, api_key=API_KEY) as client:
        started_at, start = time.time(), time.perf_counter()
        texts = await one_batch(client, n, poll_interval, **_SHAPE)
        return started_at, time.perf_counter() - start, texts


async def floor(
    base_url: str, n: int, poll_interval: float, ledger: Path, *, respond: Respond | None = None
) -> tuple[float, float, dict[str, str]]:
    """The same calls made by the least a durable client must do (`openai_shaped.floor_batch`)."""
    from openai import AsyncAzureOpenAI

    async with AsyncAzureOpenAI(azure_endpoint=base_url, api_version=API_VERSION, api_key=API_KEY) as client:
        started_at, start = time.time(), time.perf_counter()
        texts = await floor_batch(client, n, poll_interval, ledger, **_SHAPE, respond=respond)
        return started_at, time.perf_counter() - start, texts


def _body(i: int) -> dict[str, object]:
    return {
        "model": DEPLOYMENT,
        "max_completion_tokens": MAX_TOKENS,
        "messages": [{"role": "user", "content": prompt(i)}],
    }


_SHAPE: Any = {"url": "/chat/completions", "endpoint": "/chat/completions", "body": _body, "text_of": chat_text}
"""What Azure's Chat Completions batch sends and how a line's text is read, for `one_batch` and `floor_batch`."""


def batch_times(emulator: Emulator) -> list[BatchTimes]:
    page = emulator.get_json(f"/openai/batches?limit=100&api-version={API_VERSION}", {"api-key": API_KEY})
    return [
        BatchTimes(float(b["created_at"]), b.get("completed_at") and float(b["completed_at"])) for b in page["data"]
    ]


BY_HAND = ByHand(
    provider="azure_openai",
    model=DEPLOYMENT,
    sdk="openai",
    base_path="",
    raw_sdk=raw_sdk,
    batch_times=batch_times,
    created_ids_stat="azure_openai_created_custom_ids",
    floor=floor,
)
