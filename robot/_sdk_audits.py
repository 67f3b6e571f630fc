"""What each provider's API holds, asked through its official SDK: every batch listed, every one waited for until it
ends, every result read, and how many times each custom id appears in all their results. The soak's proof that
nothing was created twice comes from the API as a user of the SDK would see it, not from lowtide or the emulator's
admin routes.

One function per provider (`AUDITS`), each `(base_url, api_key, timeout) -> (batches, Counter[custom_id])`. Gemini's
jobs carry the custom id as the key of each inline request's metadata, or of each line of a result file.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from typing import TypeVar

__all__ = ["AUDITS", "Audit"]

Audit = Callable[[str, str, float], tuple[int, Counter[str]]]
_Batch = TypeVar("_Batch")


def _anthropic(base_url: str, api_key: str, timeout: float) -> tuple[int, Counter[str]]:
    import anthropic

    client = anthropic.Anthropic(api_key=api_key, base_url=base_url, max_retries=2)
    try:
        batches = _until_ended(
            lambda: list(client.messages.batches.list(limit=100)),
            lambda batch: batch.processing_status == "ended",
            lambda batch: batch.id,
            timeout,
        )
        seen: Counter[str] = Counter()
        for batch in batches:
            seen.update(result.custom_id for result in client.messages.batches.results(batch.id))
        return len(batches), seen
    finally:
        client.close()


def _openai(base_url: str, api_key: str, timeout: float) -> tuple[int, Counter[str]]:
    import openai

    client = openai.OpenAI(api_key=api_key, base_url=f"{base_url}/v1", max_retries=2)
    ended = ("completed", "failed", "expired", "cancelled")
    try:
        batches = _until_ended(
            lambda: list(client.batches.list(limit=100)),
            lambda batch: batch.status in ended,
            lambda batch: batch.id,
            timeout,
        )
        seen: Counter[str] = Counter()
        for batch in batches:
            for file_id in (batch.output_file_id, batch.error_file_id):
                if file_id:
                    text = client.files.content(file_id).text
                    seen.update(json.loads(line)["custom_id"] for line in text.splitlines() if line.strip())
        return len(batches), seen
    finally:
        client.close()


def _gemini(base_url: str, api_key: str, timeout: float) -> tuple[int, Counter[str]]:
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
        seen: Counter[str] = Counter()
        for job in jobs:
            dest = job.dest
            if dest is not None and dest.inlined_responses is not None:
                seen.update(str((item.metadata or {}).get("key")) for item in dest.inlined_responses)
            elif dest is not None and dest.file_name:
                text = client.files.download(file=dest.file_name).decode()
                seen.update(json.loads(line)["key"] for line in text.splitlines() if line.strip())
        return len(jobs), seen
    finally:
        client.close()


def _groq(base_url: str, api_key: str, timeout: float) -> tuple[int, Counter[str]]:
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
        seen: Counter[str] = Counter()
        for batch in batches:
            for file_id in (batch.output_file_id, batch.error_file_id):
                if file_id:
                    text = client.files.content(file_id).text()
                    seen.update(json.loads(line)["custom_id"] for line in text.splitlines() if line.strip())
        return len(batches), seen
    finally:
        client.close()


def _together(base_url: str, api_key: str, timeout: float) -> tuple[int, Counter[str]]:
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
        seen: Counter[str] = Counter()
        for job in jobs:
            for file_id in (job.output_file_id, job.error_file_id):
                if file_id:
                    text = client.files.content(file_id).text()
                    seen.update(json.loads(line)["custom_id"] for line in text.splitlines() if line.strip())
        return len(jobs), seen
    finally:
        client.close()


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
    "groq": _groq,
    "together": _together,
}
