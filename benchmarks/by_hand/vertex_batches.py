"""Vertex AI's Gemini batch prediction by hand with the official SDKs: the input JSONL written to Cloud Storage
(`google-cloud-storage`, in a worker thread: it is synchronous), one batch prediction job created from it
(`google-genai` with `vertexai=True`), polled until it ends, its output folder's `.jsonl` files read into a dict.
Anonymous against the emulator, as lowtide's actor is (a fixed placeholder token on loopback), its Storage calls
sent to the emulator through `STORAGE_EMULATOR_HOST`, as Google's SDK reads it."""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any

from by_hand import BatchTimes, ByHand
from harness import API_KEY, MAX_TOKENS, Emulator, epoch, key, prompt

MODEL = "gemini-2.5-flash"
PROJECT = "benchmark-project"
LOCATION = "us-central1"
BUCKET = "benchmark-batches"
_ENDED = ("JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_PARTIALLY_SUCCEEDED")


async def raw_sdk(base_url: str, n: int, poll_interval: float) -> tuple[float, float, dict[str, str]]:
    """What a careful user of google-genai and google-cloud-storage writes (Vertex AI's batch prediction docs): the
    requests as `{key, request}` lines uploaded to the bucket, one job naming the model, the input and an output
    prefix, polled, then every `.jsonl` file under the job's output directory read."""
    from google import genai
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import storage
    from google.genai import types
    from google.oauth2 import credentials as oauth2

    os.environ["STORAGE_EMULATOR_HOST"] = base_url
    bucket = storage.Client(project=PROJECT, credentials=AnonymousCredentials()).bucket(BUCKET)
    client = genai.Client(
        vertexai=True,
        project=PROJECT,
        location=LOCATION,
        credentials=oauth2.Credentials(token="emulator"),
        http_options=types.HttpOptions(base_url=base_url),
    )
    started_at, start = time.time(), time.perf_counter()
    lines = b"".join(
        json.dumps(
            {
                "key": key(i),
                "request": {
                    "contents": [{"role": "user", "parts": [{"text": prompt(i)}]}],
                    "generationConfig": {"maxOutputTokens": MAX_TOKENS},
                },
            }
        ).encode()
        + b"\n"
        for i in range(n)
    )
    blob = bucket.blob("by-hand/input.jsonl")
    await asyncio.to_thread(blob.upload_from_string, lines, content_type="application/jsonl")
    job = await client.aio.batches.create(
        model=MODEL,
        src=f"gs://{BUCKET}/by-hand/input.jsonl",
        config=types.CreateBatchJobConfig(dest=f"gs://{BUCKET}/by-hand/output"),
    )
    assert job.name is not None, job
    while job.state is None or job.state.value not in _ENDED:
        await asyncio.sleep(poll_interval)
        job = await client.aio.batches.get(name=job.name)
    output = job.dest.gcs_uri if job.dest is not None else None
    assert output is not None, job
    prefix = output.removeprefix(f"gs://{BUCKET}/").rstrip("/") + "/"
    texts: dict[str, str] = {}
    for listed in await asyncio.to_thread(lambda: list(bucket.list_blobs(prefix=prefix))):
        if listed.name.endswith(".jsonl"):
            content: bytes = await asyncio.to_thread(listed.download_as_bytes)
            for raw in content.splitlines():
                if raw.strip():
                    row = json.loads(raw)
                    if not row.get("status"):
                        texts[row["key"]] = _text(row["response"])
    return started_at, time.perf_counter() - start, texts


def _text(response: dict[str, Any]) -> str:
    return "".join(part.get("text", "") for part in response["candidates"][0]["content"]["parts"])


def batch_times(emulator: Emulator) -> list[BatchTimes]:
    headers = {"authorization": f"Bearer {API_KEY}"}
    listed = emulator.get_json(f"/v1beta1/projects/{PROJECT}/locations/{LOCATION}/batchPredictionJobs", headers)
    return [
        BatchTimes(epoch(job["createTime"]), epoch(job["endTime"]) if job.get("endTime") else None)
        for job in listed.get("batchPredictionJobs", [])
    ]


BY_HAND = ByHand(
    provider="vertex",
    model=MODEL,
    sdk="google.genai",
    base_path="",
    raw_sdk=raw_sdk,
    batch_times=batch_times,
    created_ids_stat="vertex_created_custom_ids",
    provider_options={"vertex": {"project": PROJECT, "location": LOCATION, "bucket": BUCKET}},
)
