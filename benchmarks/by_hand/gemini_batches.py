"""Gemini's batch mode by hand with the official `google-genai` SDK: the requests sent inline when they are small
enough (as lowtide does: up to 16 MiB of JSONL), else written as a JSONL file and uploaded through the Files API;
one job created, polled until it ends, its inline responses (or its result file, downloaded) read into a dict."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import datetime
from typing import Any

from by_hand import BatchTimes, ByHand
from harness import API_KEY, MAX_TOKENS, Emulator, key, prompt

MODEL = "gemini-2.5-flash"
INLINE_BYTES = 16 * 1024 * 1024
"""Above this much JSONL the requests go in an uploaded file, as lowtide's Gemini batches do."""
_ENDED = ("JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED")


def _request(i: int) -> dict[str, Any]:
    return {
        "contents": [{"role": "user", "parts": [{"text": prompt(i)}]}],
        "generationConfig": {"maxOutputTokens": MAX_TOKENS},
    }


def _text(response: dict[str, Any]) -> str:
    candidates = response.get("candidates") or [{}]
    parts = (candidates[0].get("content") or {}).get("parts") or []
    return "".join(part.get("text", "") for part in parts if not part.get("thought"))


async def raw_sdk(base_url: str, n: int, poll_interval: float) -> tuple[float, float, dict[str, str]]:
    """What a careful user of google-genai writes: inline requests (or an uploaded file above 16 MiB), one job,
    polled until it ends, the answers read by key."""
    from google import genai
    from google.genai import types

    client = genai.Client(api_key=API_KEY, http_options=types.HttpOptions(base_url=base_url))
    try:
        started_at, start = time.time(), time.perf_counter()
        lines = [json.dumps({"key": key(i), "request": _request(i)}) for i in range(n)]
        size = sum(len(line) + 1 for line in lines)
        source: Any
        if size <= INLINE_BYTES:
            source = [
                types.InlinedRequest(
                    contents=[types.Content(role="user", parts=[types.Part(text=prompt(i))])],
                    config=types.GenerateContentConfig(max_output_tokens=MAX_TOKENS),
                    metadata={"key": key(i)},
                )
                for i in range(n)
            ]
        else:
            uploaded = await client.aio.files.upload(
                file=_jsonl("\n".join(lines).encode()),
                config=types.UploadFileConfig(mime_type="application/jsonl", display_name="benchmark.jsonl"),
            )
            assert uploaded.name is not None
            source = uploaded.name
        del lines
        job = await client.aio.batches.create(
            model=MODEL, src=source, config=types.CreateBatchJobConfig(display_name="benchmark")
        )
        del source
        name = job.name
        assert name is not None
        while job.state is None or job.state.name not in _ENDED:
            await asyncio.sleep(poll_interval)
            job = await client.aio.batches.get(name=name)
        texts: dict[str, str] = {}
        assert job.dest is not None, job
        if job.dest.inlined_responses is not None:
            for item in job.dest.inlined_responses:
                if item.response is not None and item.metadata is not None:
                    texts[item.metadata["key"]] = item.response.text or ""
        else:
            assert job.dest.file_name is not None, job
            content = await client.aio.files.download(file=job.dest.file_name)
            for text in content.decode().splitlines():
                if text.strip():
                    line = json.loads(text)
                    if "response" in line:
                        texts[line["key"]] = _text(line["response"])
        return started_at, time.perf_counter() - start, texts
    finally:
        await client.aio.aclose()


def _jsonl(body: bytes) -> Any:
    import io

    return io.BytesIO(body)


def batch_times(emulator: Emulator) -> list[BatchTimes]:
    page = emulator.get_json("/v1beta/batches?pageSize=100", {"x-goog-api-key": API_KEY})
    jobs = page.get("batches") or page.get("operations") or []
    times: list[BatchTimes] = []
    for job in jobs:
        metadata = job.get("metadata", job)
        created, ended = metadata.get("createTime"), metadata.get("endTime")
        if created:
            times.append(BatchTimes(_epoch(created), _epoch(ended) if ended else None))
    return times


def _epoch(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


BY_HAND = ByHand(
    provider="gemini",
    model=MODEL,
    sdk="google.genai",
    base_path="",
    raw_sdk=raw_sdk,
    batch_times=batch_times,
    created_ids_stat="gemini_created_custom_ids",
)
