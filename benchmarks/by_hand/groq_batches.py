"""Groq's Batch API by hand with the official `groq` SDK: the input file uploaded, one batch created, polled until it
ends, the output file streamed into a dict (Groq's API is OpenAI's, under `/openai/v1`)."""

from __future__ import annotations

import asyncio
import json
import time

from by_hand import BatchTimes, ByHand, chat_text
from harness import API_KEY, MAX_TOKENS, Emulator, key, prompt

MODEL = "llama-3.1-8b-instant"
_ENDED = ("completed", "failed", "expired", "cancelled")


async def raw_sdk(base_url: str, n: int, poll_interval: float) -> tuple[float, float, dict[str, str]]:
    """What a careful user of `AsyncGroq` writes (Groq's batch docs): the JSONL uploaded with `purpose="batch"`, one
    batch for `/v1/chat/completions` with a 24-hour window, polled, its output file streamed line by line."""
    from groq import AsyncGroq

    async with AsyncGroq(base_url=base_url, api_key=API_KEY) as client:
        started_at, start = time.time(), time.perf_counter()
        lines = (
            json.dumps(
                {
                    "custom_id": key(i),
                    "method": "POST",
                    "url": "/v1/chat/completions",
                    "body": {
                        "model": MODEL,
                        "max_completion_tokens": MAX_TOKENS,
                        "messages": [{"role": "user", "content": prompt(i)}],
                    },
                }
            )
            for i in range(n)
        )
        uploaded = await client.files.create(
            file=("input.jsonl", "\n".join(lines).encode(), "application/jsonl"), purpose="batch"
        )
        assert uploaded.id is not None, uploaded
        batch = await client.batches.create(
            input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h"
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
)
