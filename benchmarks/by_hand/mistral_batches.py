"""Mistral's Batch API by hand with the official `mistralai` SDK: the requests sent inline in the create when they are
small enough (as lowtide does: up to 8 MiB of JSONL), else written as a JSONL file and uploaded; one job created,
polled until it ends, its output file streamed into a dict."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from by_hand import BatchTimes, ByHand, chat_text
from by_hand.floor import FloorLedger, Respond, dumps, store_lines
from harness import API_KEY, MAX_TOKENS, Emulator, key, prompt

MODEL = "mistral-small-latest"
INLINE_BYTES = 8 * 1024 * 1024
"""Above this much JSONL the requests go in an uploaded file, as lowtide's Mistral batches do."""
_ENDED = ("SUCCESS", "FAILED", "TIMEOUT_EXCEEDED", "CANCELLED")


async def raw_sdk(base_url: str, n: int, poll_interval: float) -> tuple[float, float, dict[str, str]]:
    """What a careful user of `mistralai` writes (Mistral's batch docs): the requests inline (or an uploaded file
    with `purpose="batch"` above 8 MiB), one job on `/v1/chat/completions` naming the model, polled, its output file
    streamed line by line."""
    from mistralai.client import Mistral

    async with Mistral(api_key=API_KEY, server_url=base_url) as client:
        started_at, start = time.time(), time.perf_counter()
        job = await _ended(client, await _create(client, _requests(n)), poll_interval)
        texts: dict[str, str] = {}
        assert isinstance(job.output_file, str), job
        response = await client.files.download_async(file_id=job.output_file)
        try:
            async for text in response.aiter_lines():
                if text:
                    line = json.loads(text)
                    texts[line["custom_id"]] = chat_text(line)
        finally:
            await response.aclose()
        return started_at, time.perf_counter() - start, texts


async def floor(
    base_url: str, n: int, poll_interval: float, ledger: Path, *, respond: Respond | None = None
) -> tuple[float, float, dict[str, str]]:
    """`raw_sdk`'s calls made durably (`floor.FloorLedger`): the requests' bodies stored as their intents before the
    job is created, inline or from a file as by hand; its output read by `floor.store_lines`."""
    from mistralai.client import Mistral

    with FloorLedger(ledger, respond) as durable:
        async with Mistral(api_key=API_KEY, server_url=base_url) as client:
            started_at, start = time.time(), time.perf_counter()
            requests = _requests(n)
            durable.intents((request["custom_id"], dumps(request["body"])) for request in requests)
            job = await _create(client, requests)
            del requests
            durable.created(job.id)
            job = await _ended(client, job, poll_interval)
            assert isinstance(job.output_file, str), job
            response = await client.files.download_async(file_id=job.output_file)
            try:
                await store_lines(durable, response.aiter_lines(), chat_text)
            finally:
                await response.aclose()
            return started_at, time.perf_counter() - start, durable.texts


def _requests(n: int) -> list[dict[str, Any]]:
    return [
        {"custom_id": key(i), "body": {"max_tokens": MAX_TOKENS, "messages": [{"role": "user", "content": prompt(i)}]}}
        for i in range(n)
    ]


async def _create(client: Any, requests: list[dict[str, Any]]) -> Any:
    """One job of `requests`: inline up to `INLINE_BYTES` of JSONL, else in an uploaded file (`requests` emptied
    once its JSONL is made)."""
    # One copy of the requests at a time: their JSONL's size is counted, not kept.
    if sum(len(json.dumps(request)) + 1 for request in requests) <= INLINE_BYTES:
        return await client.batch.jobs.create_async(endpoint="/v1/chat/completions", requests=requests, model=MODEL)
    body = "".join(json.dumps(request) + "\n" for request in requests).encode()
    requests.clear()  # (the caller's, not used again: one copy of the requests at a time, as before the upload)
    uploaded = await client.files.upload_async(
        file={"file_name": "batch_input.jsonl", "content": body}, purpose="batch"
    )
    del body
    return await client.batch.jobs.create_async(endpoint="/v1/chat/completions", input_files=[uploaded.id], model=MODEL)


async def _ended(client: Any, job: Any, poll_interval: float) -> Any:
    while job.status not in _ENDED:
        await asyncio.sleep(poll_interval)
        job = await client.batch.jobs.get_async(job_id=job.id)
    return job


def batch_times(emulator: Emulator) -> list[BatchTimes]:
    page = emulator.get_json("/v1/batch/jobs?page_size=100", {"authorization": f"Bearer {API_KEY}"})
    return [
        BatchTimes(float(job["created_at"]), job.get("completed_at") and float(job["completed_at"]))
        for job in page["data"]
    ]


BY_HAND = ByHand(
    provider="mistral",
    model=MODEL,
    sdk="mistralai.client",
    base_path="",
    raw_sdk=raw_sdk,
    batch_times=batch_times,
    created_ids_stat="mistral_created_custom_ids",
    floor=floor,
)
