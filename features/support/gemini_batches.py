"""What the steps of features/emulator_gemini_batch.feature share (`emulator_gemini_batch_steps.py`, the jobs;
`emulator_gemini_files_steps.py`, the files): the scenario (the emulator, its manual clock, the google-genai client
pointed at it), and the calls and readings both make."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import httpx2
from google import genai
from google.genai import errors, types
from step_context import Context as StepContext

from lowtide.core.clock import ManualClock
from lowtide.emulator import Emulator
from lowtide.emulator.gemini.emulation import GeminiEmulation

KEY = "AIza-gemini-batch-scenario-key"
MODEL = "gemini-2.5-flash"


@dataclass
class GeminiBatchScenario:
    emulator: Emulator
    clock: ManualClock
    client: genai.Client
    version: str
    job: types.BatchJob | None = None
    file: types.File | None = None
    sent: bytes = b""
    prompts: dict[str, str] = field(default_factory=dict[str, str])
    error: errors.APIError | None = None
    failure: Exception | None = None
    raw: httpx2.Response | None = None
    downloaded: bytes = b""


class Context(StepContext, Protocol):
    gbatch: GeminiBatchScenario
    """The scenario's emulator, its clock, and the google-genai client pointed at it."""
    gbatch_state: Path
    """The state file of a scenario that starts the emulator again."""


def scenario(context: Context) -> GeminiBatchScenario:
    return context.gbatch


def start_emulator(context: Context, version: str = "v1beta", **settings: Any) -> GeminiBatchScenario:
    clock = ManualClock()
    settings.setdefault("processing_seconds", 100.0)
    emulator = Emulator(clock=clock, **settings)
    options = types.HttpOptions(
        base_url=emulator.base_url, api_version=version, httpx_async_client=emulator.http_client()
    )
    client = genai.Client(api_key=KEY, http_options=options)
    context.gbatch = GeminiBatchScenario(emulator, clock, client, version)
    return context.gbatch


def emulation_of(s: GeminiBatchScenario) -> GeminiEmulation:
    return s.emulator.emulation(GeminiEmulation)


def prompt_for(key: str) -> str:
    return f"What is the tide at {key}?"


def inline_request(key: str) -> types.InlinedRequestDict:
    request: types.InlinedRequestDict = {
        "contents": [{"role": "user", "parts": [{"text": prompt_for(key)}]}],
        "metadata": {"key": key},
    }
    if key == "bad-temperature":
        request["config"] = {"temperature": 3.0}
    return request


def run_call(context: Context, coroutine: Any) -> Any:
    s = scenario(context)
    s.error = s.failure = None
    try:
        return context.runner.run(coroutine)
    except errors.APIError as error:
        s.error = error
    except Exception as error:
        s.failure = error
    return None


def refresh_job(context: Context) -> types.BatchJob:
    s = scenario(context)
    assert s.job is not None
    assert s.job.name is not None
    job = context.runner.run(s.client.aio.batches.get(name=s.job.name))
    s.job = job
    return job


def raw_job(context: Context) -> dict[str, Any]:
    s = scenario(context)
    assert s.job is not None
    path = f"/{s.version}/{s.job.name}"

    async def fetch() -> dict[str, Any]:
        async with s.emulator.http_client() as http:
            answer = await http.get(path, headers={"x-goog-api-key": KEY})
            return answer.json()

    return context.runner.run(fetch())


def live_answer_text(context: Context, key: str) -> str:
    s = scenario(context)
    answer = context.runner.run(s.client.aio.models.generate_content(model=MODEL, contents=prompt_for(key)))
    return answer.text or ""


def jsonl_of(count: int, *, bad_row: bool = False) -> bytes:
    lines = [
        {"key": f"k{index}", "request": {"contents": [{"parts": [{"text": prompt_for(f"k{index}")}]}]}}
        for index in range(count)
    ]
    if bad_row:
        lines.append(
            {
                "key": "bad",
                "request": {
                    "contents": [{"parts": [{"text": prompt_for("bad")}]}],
                    "generationConfig": {"temperature": 3},
                },
            }
        )
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def upload_file(context: Context, content: bytes, name: str) -> None:
    s = scenario(context)
    config: types.UploadFileConfigDict = {"mime_type": "application/jsonl", "display_name": name}
    s.sent = content
    s.file = context.runner.run(s.client.aio.files.upload(file=io.BytesIO(content), config=config))


def upload_call(context: Context, headers: dict[str, str], content: bytes, query: str = "") -> httpx2.Response:
    s = scenario(context)

    async def send() -> httpx2.Response:
        async with s.emulator.http_client() as http:
            return await http.post(f"/upload/{s.version}/files{query}", content=content, headers=headers)

    return context.runner.run(send())


def upload_session(context: Context, size: int) -> str:
    start = {
        "x-goog-api-key": KEY,
        "x-goog-upload-protocol": "resumable",
        "x-goog-upload-command": "start",
        "x-goog-upload-header-content-length": str(size),
        "x-goog-upload-header-content-type": "text/plain",
    }
    answer = upload_call(context, start, b'{"file": {"displayName": "raw"}}')
    assert answer.headers["x-goog-upload-status"] == "active", answer
    url = answer.headers["x-goog-upload-url"]
    return url[url.index("?") :]


def assert_refused(answer: httpx2.Response, code: int, mention: str) -> None:
    assert answer.status_code == code, answer.text
    assert mention in answer.json()["error"]["message"], answer.text


def upload_start_headers(**changes: str | None) -> dict[str, str]:
    headers: dict[str, str | None] = {
        "x-goog-api-key": KEY,
        "x-goog-upload-protocol": "resumable",
        "x-goog-upload-command": "start",
        "x-goog-upload-header-content-length": "3",
        "x-goog-upload-header-content-type": "text/plain",
        **changes,
    }
    return {name.replace("_", "-"): value for name, value in headers.items() if value is not None}


def responses_file(context: Context) -> types.File:
    s = scenario(context)
    job = refresh_job(context)
    assert job.dest is not None, job
    assert job.dest.file_name is not None, job
    return context.runner.run(s.client.aio.files.get(name=job.dest.file_name))


def jsonl_lines(content: bytes) -> Iterator[dict[str, Any]]:
    for line in content.splitlines():
        yield json.loads(line)


def file_pages(context: Context, page_size: int | None = None) -> list[list[str]]:
    s = scenario(context)

    async def pages() -> list[list[str]]:
        pager = await s.client.aio.files.list(config={"page_size": page_size} if page_size else None)
        found = [[file.display_name or "" for file in pager.page]]
        while pager.config.get("page_token"):
            await pager.next_page()
            found.append([file.display_name or "" for file in pager.page])
        return found

    return context.runner.run(pages())


def listed_pages(context: Context, page_size: int | None = None) -> list[list[str]]:
    s = scenario(context)

    async def pages() -> list[list[str]]:
        pager = await s.client.aio.batches.list(config={"page_size": page_size} if page_size else None)
        found = [[job.display_name or "" for job in pager.page]]
        while pager.config.get("page_token"):
            await pager.next_page()
            found.append([job.display_name or "" for job in pager.page])
        return found

    return context.runner.run(pages())


def inline_responses(context: Context) -> dict[str, types.InlinedResponse]:
    job = refresh_job(context)
    assert job.dest is not None, job
    assert job.dest.inlined_responses is not None, job
    return {str((response.metadata or {})["key"]): response for response in job.dest.inlined_responses}


def assert_fails(context: Context, code: int, status: str, mention: str) -> None:
    """The last call failed with `code` and the status name `status`, its message mentioning `mention`."""
    error = scenario(context).error
    assert error is not None, scenario(context).failure
    assert (error.code, error.status) == (code, status), error
    assert mention in (error.message or ""), error.message
