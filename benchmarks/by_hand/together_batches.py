"""Together's Batch API by hand with the official `together` SDK: the input file written and uploaded
(`files.upload` takes a path: Together's three-step upload), one job created, polled until it ends, the output file
streamed into a dict."""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from by_hand import BatchTimes, ByHand, chat_text
from by_hand.floor import FloorLedger, Respond, dumps, kept, store_lines
from harness import API_KEY, MAX_TOKENS, Emulator, key, prompt

MODEL = "meta-llama/Llama-3.3-70B-Instruct-Turbo"
_ENDED = ("COMPLETED", "FAILED", "EXPIRED", "CANCELLED")
_HEADERS = {"authorization": f"Bearer {API_KEY}", "user-agent": "Together/Python lowtide-benchmark"}
"""The emulator tells Together's calls from OpenAI's (the same paths) by the SDK's user agent."""


async def raw_sdk(base_url: str, n: int, poll_interval: float) -> tuple[float, float, dict[str, str]]:
    """What a careful user of `AsyncTogether` writes (Together's batch docs): the JSONL written to a file and
    uploaded with `purpose="batch-api"` (`check=False`, as lowtide uploads it: the SDK's own check of the file reads
    it whole once more), one job for `/v1/chat/completions`, polled, its output file streamed line by line."""
    from together import AsyncTogether

    async with AsyncTogether(base_url=base_url, api_key=API_KEY) as client:
        started_at, start = time.time(), time.perf_counter()
        job = await _ended(client, await _create(client, await _uploaded(client, n)), poll_interval)
        texts: dict[str, str] = {}
        assert job.output_file_id is not None, job
        async with client.files.with_streaming_response.content(job.output_file_id) as response:
            async for text in response.iter_lines():
                if text:
                    answer = json.loads(text)
                    texts[answer["custom_id"]] = chat_text(answer)
        return started_at, time.perf_counter() - start, texts


async def floor(
    base_url: str, n: int, poll_interval: float, ledger: Path, *, respond: Respond | None = None
) -> tuple[float, float, dict[str, str]]:
    """`raw_sdk`'s calls made durably (`floor.FloorLedger`): each line's body kept as its intent while the input file
    is written, all stored before the job is created; its output read by `floor.store_lines`."""
    from together import AsyncTogether

    with FloorLedger(ledger, respond) as durable:
        async with AsyncTogether(base_url=base_url, api_key=API_KEY) as client:
            started_at, start = time.time(), time.perf_counter()
            intents: list[tuple[str, bytes]] = []
            file_id = await _uploaded(client, n, intents)
            durable.intents(intents)
            del intents
            job = await _create(client, file_id)
            durable.created(str(job.id))
            job = await _ended(client, job, poll_interval)
            assert job.output_file_id is not None, job
            async with client.files.with_streaming_response.content(job.output_file_id) as response:
                await store_lines(durable, response.iter_lines(), chat_text)
            return started_at, time.perf_counter() - start, durable.texts


async def _uploaded(client: Any, n: int, intents: list[tuple[str, bytes]] | None = None) -> str:
    """The id of the input file of `n` requests, written and uploaded (each request's body added to `intents` as its
    intent, when given)."""
    with tempfile.TemporaryDirectory(prefix="together-by-hand-") as folder:
        path = Path(folder) / "batch_input.jsonl"
        with path.open("w") as out:
            for i in range(n):
                line = {
                    "custom_id": key(i),
                    "method": "POST",
                    "url": "/v1/chat/completions",
                    "body": {
                        "model": MODEL,
                        "max_tokens": MAX_TOKENS,
                        "messages": [{"role": "user", "content": prompt(i)}],
                    },
                }
                out.write(json.dumps(line) + "\n")
                if intents is not None:
                    intents.append((key(i), kept(dumps(line["body"]))))
        uploaded = await client.files.upload(path, purpose="batch-api", check=False)
    return str(uploaded.id)


async def _create(client: Any, file_id: str) -> Any:
    created = await client.batches.create(endpoint="/v1/chat/completions", input_file_id=file_id)
    job = created.job
    assert job is not None, created
    assert job.id is not None, job
    return job


async def _ended(client: Any, job: Any, poll_interval: float) -> Any:
    job_id = job.id
    while job.status not in _ENDED:
        await asyncio.sleep(poll_interval)
        job = await client.batches.retrieve(job_id)
    return job


def batch_times(emulator: Emulator) -> list[BatchTimes]:
    listed = emulator.get_json("/v1/batches", _HEADERS)
    jobs = listed if isinstance(listed, list) else listed.get("data", [])
    return [
        BatchTimes(_epoch(job["created_at"]), _epoch(job["completed_at"]) if job.get("completed_at") else None)
        for job in jobs
    ]


def _epoch(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


BY_HAND = ByHand(
    provider="together",
    model=MODEL,
    sdk="together",
    base_path="",
    raw_sdk=raw_sdk,
    batch_times=batch_times,
    created_ids_stat="together_created_custom_ids",
    floor=floor,
)
