"""Fireworks' Batch Inference API by hand with the official `fireworks-ai` SDK: an input dataset created and its JSONL
uploaded, one batch inference job created from it, polled until it ends, the output dataset's files read through the
signed URLs `datasets.get_download_endpoint` gives, streamed line by line into a dict."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx

from by_hand import BatchTimes, ByHand
from harness import API_KEY, MAX_TOKENS, Emulator, epoch, key, prompt

MODEL = "accounts/fireworks/models/gpt-oss-20b"
ACCOUNT = "benchmark"
"""The account the jobs and datasets belong to (lowtide's actor names it in `provider_options`)."""
_ENDED = ("JOB_STATE_COMPLETED", "JOB_STATE_FAILED", "JOB_STATE_EXPIRED", "JOB_STATE_CANCELLED")


async def raw_sdk(base_url: str, n: int, poll_interval: float) -> tuple[float, float, dict[str, str]]:
    """What a careful user of `AsyncFireworks` writes (Fireworks' batch inference docs): a dataset of `n` rows
    (`custom_id`, `body`) created and uploaded, one job naming the model, polled, its output dataset's results file
    streamed from its signed URL (without the account's key)."""
    from fireworks import AsyncFireworks

    async with AsyncFireworks(api_key=API_KEY, base_url=f"{base_url}/fireworks", account_id=ACCOUNT) as client:
        started_at, start = time.time(), time.perf_counter()
        rows = b"".join(
            json.dumps(
                {
                    "custom_id": key(i),
                    "body": {"max_tokens": MAX_TOKENS, "messages": [{"role": "user", "content": prompt(i)}]},
                }
            ).encode()
            + b"\n"
            for i in range(n)
        )
        dataset, job_id = "by-hand-input", "by-hand-job"
        await client.datasets.create(
            dataset_id=dataset,
            dataset={"display_name": dataset, "example_count": str(n), "format": "CHAT", "user_uploaded": {}},
        )
        await client.datasets.upload(dataset, file=(f"{dataset}.jsonl", rows, "application/jsonl"))
        job = await client.batch_inference_jobs.create(
            batch_inference_job_id=job_id,
            model=MODEL,
            input_dataset_id=f"accounts/{ACCOUNT}/datasets/{dataset}",
            output_dataset_id=f"accounts/{ACCOUNT}/datasets/{job_id}-output",
        )
        while job.state not in _ENDED:
            await asyncio.sleep(poll_interval)
            job = await client.batch_inference_jobs.get(job_id)
        assert job.output_dataset_id is not None, job
        urls = await client.datasets.get_download_endpoint(job.output_dataset_id.rsplit("/", 1)[-1])
        texts: dict[str, str] = {}
        async with httpx.AsyncClient(timeout=60.0) as http:
            for url in (urls.filename_to_signed_urls or {}).values():
                async with http.stream("GET", url) as response:
                    async for text in response.aiter_lines():
                        if text:
                            line = json.loads(text)
                            if "response" in line:
                                texts[line["custom_id"]] = _text(line["response"])
        return started_at, time.perf_counter() - start, texts


def _text(body: dict[str, Any]) -> str:
    return str(body["choices"][0]["message"]["content"] or "")


def batch_times(emulator: Emulator) -> list[BatchTimes]:
    headers = {"authorization": f"Bearer {API_KEY}"}
    listed = emulator.get_json(f"/fireworks/v1/accounts/{ACCOUNT}/batchInferenceJobs", headers)
    # A job shows no end time (its `updateTime` is the emulator's now): its end is left unknown.
    return [BatchTimes(epoch(job["createTime"]), None) for job in listed.get("batchInferenceJobs", [])]


BY_HAND = ByHand(
    provider="fireworks",
    model=MODEL,
    sdk="fireworks",
    base_path="/fireworks",
    raw_sdk=raw_sdk,
    batch_times=batch_times,
    created_ids_stat="fireworks_created_custom_ids",
    provider_options={"fireworks": {"account_id": ACCOUNT}},
)
