"""What each provider's API holds, asked through its official SDK: every batch listed, every one waited for until it
ends, every result read, and how many times each custom id appears in all their results. The soak's proof that
nothing was created twice comes from the API as a user of the SDK would see it, not from lowtide or the emulator's
admin routes.

One function per provider (`AUDITS`), each `(base_url, api_key, timeout) -> {batch id: custom ids}`: every batch the
API lists, by the id the API gave it, with the custom id of every result line it holds (`created_ids` counts them).
Gemini's jobs carry the custom id as the key of each inline request's metadata, or of each line of a result file;
Mistral's jobs name it in each line of their output and error files; Fireworks' jobs in each line of their output
dataset's files, read through the signed URLs the SDK gives.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from openai import OpenAI

__all__ = ["AUDITS", "Audit", "created_ids"]

Audit = Callable[[str, str, float], dict[str, list[str]]]
_Batch = TypeVar("_Batch")


def created_ids(batches: dict[str, list[str]]) -> Counter[str]:
    """How many times each custom id appears in all the batches' results."""
    seen: Counter[str] = Counter()
    for custom_ids in batches.values():
        seen.update(custom_ids)
    return seen


def _anthropic(base_url: str, api_key: str, timeout: float) -> dict[str, list[str]]:
    import anthropic

    client = anthropic.Anthropic(api_key=api_key, base_url=base_url, max_retries=2)
    try:
        batches = _until_ended(
            lambda: list(client.messages.batches.list(limit=100)),
            lambda batch: batch.processing_status == "ended",
            lambda batch: batch.id,
            timeout,
        )
        return {
            batch.id: [result.custom_id for result in client.messages.batches.results(batch.id)] for batch in batches
        }
    finally:
        client.close()


def _openai(base_url: str, api_key: str, timeout: float) -> dict[str, list[str]]:
    import openai

    return _openai_shaped(openai.OpenAI(api_key=api_key, base_url=f"{base_url}/v1", max_retries=2), timeout)


def _azure_openai(base_url: str, api_key: str, timeout: float) -> dict[str, list[str]]:
    import openai

    client = openai.AzureOpenAI(api_key=api_key, azure_endpoint=base_url, api_version="2024-10-21", max_retries=2)
    return _openai_shaped(client, timeout)


def _openai_shaped(client: OpenAI, timeout: float) -> dict[str, list[str]]:
    ended = ("completed", "failed", "expired", "cancelled")
    try:
        batches = _until_ended(
            lambda: list(client.batches.list(limit=100)),
            lambda batch: batch.status in ended,
            lambda batch: batch.id,
            timeout,
        )
        held: dict[str, list[str]] = {}
        for batch in batches:
            texts = [client.files.content(f).text for f in (batch.output_file_id, batch.error_file_id) if f]
            held[batch.id] = _custom_ids(texts, "custom_id")
        return held
    finally:
        client.close()


def _gemini(base_url: str, api_key: str, timeout: float) -> dict[str, list[str]]:
    from google import genai
    from google.genai import types

    ended = {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED"}
    options = types.HttpOptions(base_url=base_url, retry_options=types.HttpRetryOptions(attempts=3))
    client = genai.Client(api_key=api_key, http_options=options)
    try:
        jobs = _until_ended(
            lambda: list(client.batches.list(config={"page_size": 100})),
            lambda job: job.state is not None and job.state.value in ended,
            lambda job: str(job.name),
            timeout,
        )
        held: dict[str, list[str]] = {}
        for job in jobs:
            dest, ids = job.dest, held.setdefault(str(job.name), [])
            if dest is not None and dest.inlined_responses is not None:
                ids.extend(str((item.metadata or {}).get("key")) for item in dest.inlined_responses)
            elif dest is not None and dest.file_name:
                ids.extend(_custom_ids([client.files.download(file=dest.file_name).decode()], "key"))
        return held
    finally:
        client.close()


def _bedrock(base_url: str, api_key: str, timeout: float) -> dict[str, list[str]]:
    """Bedrock's jobs through boto3: listed by the control plane, each one's output read from S3 (its records'
    `recordId`s), any credentials (the emulator checks no signature)."""
    import boto3.session
    from botocore.config import Config

    session = boto3.session.Session(
        aws_access_key_id="AKIDAUDIT", aws_secret_access_key=api_key, region_name="us-east-1"
    )
    config = Config(retries={"total_max_attempts": 3})
    control = session.client("bedrock", endpoint_url=base_url, config=config)
    s3 = session.client("s3", endpoint_url=base_url, config=config)
    ended = {"Completed", "PartiallyCompleted", "Failed", "Stopped", "Expired"}
    jobs = _until_ended(
        lambda: list(control.list_model_invocation_jobs(maxResults=1000)["invocationJobSummaries"]),
        lambda job: job["status"] in ended,
        lambda job: str(job["jobArn"]),
        timeout,
    )
    held: dict[str, list[str]] = {}
    for job in jobs:
        bucket, _, prefix = job["outputDataConfig"]["s3OutputDataConfig"]["s3Uri"].removeprefix("s3://").partition("/")
        name = job["inputDataConfig"]["s3InputDataConfig"]["s3Uri"].rsplit("/", 1)[-1]
        key = f"{prefix.rstrip('/')}/{job['jobArn'].rsplit('/', 1)[-1]}/{name}.out".lstrip("/")
        text = s3.get_object(Bucket=bucket, Key=key)["Body"].read().decode()
        held[str(job["jobArn"])] = _custom_ids([text], "recordId")
    return held


def _mistral(base_url: str, api_key: str, timeout: float) -> dict[str, list[str]]:
    from mistralai.client import Mistral, models

    ended = {"SUCCESS", "FAILED", "TIMEOUT_EXCEEDED", "CANCELLED"}

    def listed(client: Mistral) -> list[models.BatchJob]:
        jobs: list[models.BatchJob] = []
        page = 0
        while True:
            data = client.batch.jobs.list(page=page, page_size=100).data or []
            jobs.extend(data)
            if len(data) < 100:
                return jobs
            page += 1

    with Mistral(api_key=api_key, server_url=base_url) as client:
        jobs = _until_ended(lambda: listed(client), lambda job: job.status in ended, lambda job: job.id, timeout)
        held: dict[str, list[str]] = {}
        for job in jobs:
            files = [f for f in (job.output_file, job.error_file) if isinstance(f, str) and f]
            texts = [client.files.download(file_id=f).read().decode() for f in files]
            held[job.id] = _custom_ids(texts, "custom_id")
        return held


def _groq(base_url: str, api_key: str, timeout: float) -> dict[str, list[str]]:
    import groq

    client = groq.Groq(api_key=api_key, base_url=base_url, max_retries=2)
    ended = ("completed", "failed", "expired", "cancelled")
    try:
        batches = _until_ended(
            lambda: list(client.batches.list().data),
            lambda batch: batch.status in ended,
            lambda batch: batch.id,
            timeout,
        )
        held: dict[str, list[str]] = {}
        for batch in batches:
            texts = [client.files.content(f).text() for f in (batch.output_file_id, batch.error_file_id) if f]
            held[batch.id] = _custom_ids(texts, "custom_id")
        return held
    finally:
        client.close()


def _together(base_url: str, api_key: str, timeout: float) -> dict[str, list[str]]:
    import together

    client = together.Together(api_key=api_key, base_url=base_url, max_retries=2)
    ended = ("COMPLETED", "FAILED", "EXPIRED", "CANCELLED")
    try:
        jobs = _until_ended(
            lambda: list(client.batches.list()),
            lambda job: job.status in ended,
            lambda job: str(job.id),
            timeout,
        )
        held: dict[str, list[str]] = {}
        for job in jobs:
            texts = [client.files.content(f).text() for f in (job.output_file_id, job.error_file_id) if f]
            held[str(job.id)] = _custom_ids(texts, "custom_id")
        return held
    finally:
        client.close()


def _fireworks(base_url: str, api_key: str, timeout: float) -> dict[str, list[str]]:
    import fireworks
    import httpx

    from _crash_providers import FIREWORKS_ACCOUNT

    ended = {"JOB_STATE_COMPLETED", "JOB_STATE_FAILED", "JOB_STATE_EXPIRED", "JOB_STATE_CANCELLED"}
    client = fireworks.Fireworks(
        api_key=api_key, base_url=f"{base_url}/fireworks", account_id=FIREWORKS_ACCOUNT, max_retries=2
    )
    try:
        jobs = _until_ended(
            lambda: list(client.batch_inference_jobs.list(page_size=200)),
            lambda job: job.state in ended or job.state == "JOB_STATE_EARLY_STOPPED",
            lambda job: str(job.name),
            timeout,
        )
        held: dict[str, list[str]] = {}
        for job in jobs:
            ids = held.setdefault(str(job.name), [])
            if not job.output_dataset_id:
                continue
            files = client.datasets.get_download_endpoint(job.output_dataset_id.rsplit("/", 1)[-1])
            # A signed URL carries its own authority: fetched without the account's key.
            texts = [httpx.get(url, timeout=30.0).text for url in (files.filename_to_signed_urls or {}).values()]
            ids.extend(_custom_ids(texts, "custom_id"))
        return held
    finally:
        client.close()


def _openrouter(base_url: str, api_key: str, timeout: float) -> dict[str, list[str]]:
    """OpenRouter's batches through the openai SDK at its base URL (as OpenRouter documents its API): every batch
    listed, page after page; each one's results read from the batch itself once it has ended (`GET /batches/{id}`,
    which the SDK's typed methods do not shape: read as JSON)."""
    import openai

    client = openai.OpenAI(api_key=api_key, base_url=f"{base_url}/openrouter/api/v1", max_retries=2)
    ended = ("completed", "failed", "expired", "cancelled")

    def listed() -> list[dict[str, object]]:
        batches: list[dict[str, object]] = []
        after: str | None = None
        while True:
            params: dict[str, object] = {"limit": 100, **({"after": after} if after else {})}
            page = client.get("/batches", cast_to=object, options={"params": params})
            assert isinstance(page, dict), page
            batches.extend(page.get("data") or [])
            if not page.get("has_more"):
                return batches
            after = str(page["last_id"])

    try:
        batches = _until_ended(listed, lambda b: b.get("status") in ended, lambda b: str(b.get("id")), timeout)
        held: dict[str, list[str]] = {}
        for batch in batches:
            shown = client.get(f"/batches/{batch['id']}", cast_to=object)
            assert isinstance(shown, dict), shown
            held[str(batch["id"])] = [str(result["custom_id"]) for result in shown.get("results") or []]
        return held
    finally:
        client.close()


def _custom_ids(texts: list[str], field: str) -> list[str]:
    """The `field` of every line of JSON lines `texts` (a batch's output and error files)."""
    return [json.loads(line)[field] for text in texts for line in text.splitlines() if line.strip()]


def _until_ended(
    listed: Callable[[], list[_Batch]],
    has_ended: Callable[[_Batch], bool],
    name: Callable[[_Batch], str],
    timeout: float,
) -> list[_Batch]:
    deadline = time.monotonic() + timeout
    while True:
        batches = listed()
        if all(has_ended(batch) for batch in batches):
            return batches
        if time.monotonic() > deadline:
            raise AssertionError(f"Batches still running after {timeout:g} s: {[name(b) for b in batches]}")
        time.sleep(0.2)


AUDITS: dict[str, Audit] = {
    "anthropic": _anthropic,
    "openai": _openai,
    "gemini": _gemini,
    "bedrock": _bedrock,
    "mistral": _mistral,
    "azure_openai": _azure_openai,
    "groq": _groq,
    "together": _together,
    # An OpenAI-compatible endpoint's batches are the emulator's OpenAI batches, audited through the openai SDK.
    "openai_compatible": _openai,
    "fireworks": _fireworks,
    "openrouter": _openrouter,
}
