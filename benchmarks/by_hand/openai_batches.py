"""OpenAI's Batch API by hand with the official `openai` SDK: the input file written and uploaded, one batch created,
polled until it completes, the output file streamed into a dict."""

from __future__ import annotations

import asyncio
import json
import time

from by_hand import BatchTimes, ByHand
from harness import API_KEY, MAX_TOKENS, Emulator, key, prompt

MODEL = "gpt-5.4-mini"


async def raw_sdk(base_url: str, n: int, poll_interval: float) -> tuple[float, float, dict[str, str]]:
    """The same by hand with the official `openai` SDK: the input file written and uploaded, one batch created, polled
    until it completes, the output file streamed into a dict."""
    from openai import AsyncOpenAI

    async with AsyncOpenAI(base_url=f"{base_url}/v1", api_key=API_KEY) as client:
        started_at, start = time.time(), time.perf_counter()
        lines = (
            json.dumps(
                {
                    "custom_id": key(i),
                    "method": "POST",
                    "url": "/v1/responses",
                    "body": {
                        "model": MODEL,
                        "max_output_tokens": MAX_TOKENS,
                        "input": [{"role": "user", "content": prompt(i)}],
                    },
                }
            )
            for i in range(n)
        )
        uploaded = await client.files.create(file=("input.jsonl", "\n".join(lines).encode()), purpose="batch")
        batch = await client.batches.create(
            input_file_id=uploaded.id, endpoint="/v1/responses", completion_window="24h"
        )
        while batch.status not in ("completed", "failed", "expired", "cancelled"):
            await asyncio.sleep(poll_interval)
            batch = await client.batches.retrieve(batch.id)
        texts: dict[str, str] = {}
        assert batch.output_file_id is not None, batch
        async with client.files.with_streaming_response.content(batch.output_file_id) as response:
            async for text in response.iter_lines():
                if text:
                    line = json.loads(text)
                    body = line["response"]["body"]
                    texts[line["custom_id"]] = "".join(
                        part["text"]
                        for item in body["output"]
                        if item["type"] == "message"
                        for part in item["content"]
                        if part["type"] == "output_text"
                    )
        return started_at, time.perf_counter() - start, texts


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
)
