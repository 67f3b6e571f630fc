"""Azure OpenAI's Batch API by hand with the official `openai` SDK's `AsyncAzureOpenAI`: the input file (Chat
Completions lines, each naming the deployment as its model) uploaded, one batch created at Azure's `/chat/completions`,
polled until it ends, the output file streamed into a dict."""

from __future__ import annotations

import asyncio
import json
import time

from by_hand import BatchTimes, ByHand, chat_text
from harness import API_KEY, MAX_TOKENS, Emulator, key, prompt

DEPLOYMENT = "gpt-4o-mini"
"""A deployment named after its model, as the emulator's Azure resource has one for each."""
API_VERSION = "2024-10-21"
"""Azure's API version with batches (and their metadata), as lowtide's default."""
_ENDED = ("completed", "failed", "expired", "cancelled")


async def raw_sdk(base_url: str, n: int, poll_interval: float) -> tuple[float, float, dict[str, str]]:
    """What a careful user of `AsyncAzureOpenAI` writes: the resource's endpoint (the SDK adds `/openai`), the JSONL
    uploaded with `purpose="batch"`, one batch with a 24-hour window, polled, its output file streamed line by line."""
    from openai import AsyncAzureOpenAI

    async with AsyncAzureOpenAI(azure_endpoint=base_url, api_version=API_VERSION, api_key=API_KEY) as client:
        started_at, start = time.time(), time.perf_counter()
        lines = (
            json.dumps(
                {
                    "custom_id": key(i),
                    "method": "POST",
                    "url": "/chat/completions",
                    "body": {
                        "model": DEPLOYMENT,
                        "max_completion_tokens": MAX_TOKENS,
                        "messages": [{"role": "user", "content": prompt(i)}],
                    },
                }
            )
            for i in range(n)
        )
        uploaded = await client.files.create(file=("input.jsonl", "\n".join(lines).encode()), purpose="batch")
        batch = await client.batches.create(
            input_file_id=uploaded.id, endpoint="/chat/completions", completion_window="24h"
        )
        while batch.status not in _ENDED:
            await asyncio.sleep(poll_interval)
            batch = await client.batches.retrieve(batch.id)
        texts: dict[str, str] = {}
        assert batch.output_file_id is not None, batch
        async with client.files.with_streaming_response.content(batch.output_file_id) as response:
            async for text in response.iter_lines():
                if text:
                    line = json.loads(text)
                    texts[line["custom_id"]] = chat_text(line)
        return started_at, time.perf_counter() - start, texts


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
)
