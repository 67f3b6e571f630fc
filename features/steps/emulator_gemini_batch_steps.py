"""Steps of features/emulator_gemini_batch.feature: the official google-genai SDK against the emulator's Gemini Files
and Batch APIs, in process on a manual clock (its `httpx_async_client` over the emulator's transport) or over a
socket. Every step text names "Gemini", so that it cannot clash with the other step modules."""

from __future__ import annotations

import io
import json
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import _support  # noqa: F401  (registers the Q type of quoted step text)
import httpx2
from google import genai
from google.genai import _api_client, errors, types
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.clock import ManualClock
from lowtide.emulator import Emulator, serve_in_thread
from lowtide.emulator.core.faults import garble_kind
from lowtide.emulator.core.outcomes import outcome_kind
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


def _s(context: Context) -> GeminiBatchScenario:
    return context.gbatch


def _start(context: Context, version: str = "v1beta", **settings: Any) -> GeminiBatchScenario:
    clock = ManualClock()
    settings.setdefault("processing_seconds", 100.0)
    emulator = Emulator(clock=clock, **settings)
    options = types.HttpOptions(
        base_url=emulator.base_url, api_version=version, httpx_async_client=emulator.http_client()
    )
    client = genai.Client(api_key=KEY, http_options=options)
    context.gbatch = GeminiBatchScenario(emulator, clock, client, version)
    return context.gbatch


def _gemini(s: GeminiBatchScenario) -> GeminiEmulation:
    return s.emulator.emulation(GeminiEmulation)


def _prompt(key: str) -> str:
    return f"What is the tide at {key}?"


def _inline(key: str) -> types.InlinedRequestDict:
    request: types.InlinedRequestDict = {
        "contents": [{"role": "user", "parts": [{"text": _prompt(key)}]}],
        "metadata": {"key": key},
    }
    if key == "bad-temperature":
        request["config"] = {"temperature": 3.0}
    return request


def _run(context: Context, coroutine: Any) -> Any:
    s = _s(context)
    s.error = s.failure = None
    try:
        return context.runner.run(coroutine)
    except errors.APIError as error:
        s.error = error
    except Exception as error:
        s.failure = error
    return None


def _refresh(context: Context) -> types.BatchJob:
    s = _s(context)
    assert s.job is not None
    assert s.job.name is not None
    job = context.runner.run(s.client.aio.batches.get(name=s.job.name))
    s.job = job
    return job


def _raw_job(context: Context) -> dict[str, Any]:
    s = _s(context)
    assert s.job is not None
    path = f"/{s.version}/{s.job.name}"

    async def fetch() -> dict[str, Any]:
        async with s.emulator.http_client() as http:
            answer = await http.get(path, headers={"x-goog-api-key": KEY})
            return answer.json()

    return context.runner.run(fetch())


def _answer_text(context: Context, key: str) -> str:
    s = _s(context)
    answer = context.runner.run(s.client.aio.models.generate_content(model=MODEL, contents=_prompt(key)))
    return answer.text or ""


def _jsonl(count: int, *, bad_row: bool = False) -> bytes:
    lines = [
        {"key": f"k{index}", "request": {"contents": [{"parts": [{"text": _prompt(f"k{index}")}]}]}}
        for index in range(count)
    ]
    if bad_row:
        lines.append(
            {
                "key": "bad",
                "request": {
                    "contents": [{"parts": [{"text": _prompt("bad")}]}],
                    "generationConfig": {"temperature": 3},
                },
            }
        )
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


# -- the emulator ----------------------------------------------------------------------------------------------------


@given('the Gemini batch emulator runs on a manual clock, called through API version "{version}"')
def step_start(context: Context, version: str) -> None:
    _start(context, version)


@given("the Gemini batch emulator runs on a manual clock, cancels taking {seconds:d} seconds")
def step_start_cancel(context: Context, seconds: int) -> None:
    _start(context, "v1beta", cancel_seconds=float(seconds))


@given("the Gemini batch emulator runs on a manual clock taking {hours:d} hours per job")
def step_start_slow(context: Context, hours: int) -> None:
    _start(context, "v1beta", processing_seconds=hours * 3600.0)


@given("the Gemini batch emulator runs on a manual clock with inline batches of at most {limit:d} bytes")
def step_start_small(context: Context, limit: int) -> None:
    _start(context, "v1beta", max_batch_bytes=limit)


@given("the google-genai SDK uploads in chunks of {size:d} bytes")
def step_chunks(context: Context, size: int) -> None:
    before = _api_client.CHUNK_SIZE
    _api_client.CHUNK_SIZE = size

    def restore() -> None:
        _api_client.CHUNK_SIZE = before

    context.cleanups.append(restore)


@when("{seconds:d} seconds pass on the Gemini batch clock")
def step_advance(context: Context, seconds: int) -> None:
    _s(context).clock.advance(seconds)


@given('the Gemini emulator\'s request "{key}" is armed to fail with "{error_type}"')
def step_arm(context: Context, key: str, error_type: str) -> None:
    _s(context).emulator.faults.outcome(key, "errored", error_type=error_type)


@when('the Gemini batch emulator\'s "{route}" fails next with {status:d} asking for a wait of {seconds:d} seconds')
def step_fault_wait(context: Context, route: str, status: int, seconds: int) -> None:
    _s(context).emulator.faults.fail_next(route, status, retry_after=seconds)


@when('the Gemini batch emulator\'s "{route}" fails next with {status:d}')
def step_fault(context: Context, route: str, status: int) -> None:
    _s(context).emulator.faults.fail_next(route, status)


@given('the Gemini emulator\'s "{route}" drops its next answer after committing')
def step_drop(context: Context, route: str) -> None:
    _s(context).emulator.faults.drop_after_commit(route)


@given("the Gemini emulator fails its next batch")
def step_fail_next_batch(context: Context) -> None:
    _gemini(_s(context)).fail_batches()


# -- batches ---------------------------------------------------------------------------------------------------------


def _create(context: Context, name: str, src: Any) -> None:
    s = _s(context)
    job = _run(context, s.client.aio.batches.create(model=MODEL, src=src, config={"display_name": name}))
    if job is not None:
        s.job = job


@when('I create a Gemini batch "{name}" of "{model}" inline with the keys "{keys}"')
def step_create_inline(context: Context, name: str, model: str, keys: str) -> None:
    _create(context, name, [_inline(key.strip()) for key in keys.split(",")])


@when('I create a Gemini batch "{name}" of "{model}" inline with {count:d} long requests')
def step_create_long(context: Context, name: str, model: str, count: int) -> None:
    requests: list[types.InlinedRequestDict] = [
        {"contents": [{"role": "user", "parts": [{"text": "tide " * 40}]}], "metadata": {"key": f"r{index}"}}
        for index in range(count)
    ]
    _create(context, name, requests)


@when('I create a Gemini batch "{name}" of "{model}" from the uploaded file')
def step_create_file(context: Context, name: str, model: str) -> None:
    file = _s(context).file
    assert file is not None
    assert file.name is not None
    _create(context, name, file.name)


@when('I create Gemini batches named "{names}", a second apart')
def step_create_many(context: Context, names: str) -> None:
    for name in names.split(","):
        _create(context, name.strip(), [_inline("a")])
        _s(context).clock.advance(1)


@when("I cancel the Gemini batch")
def step_cancel(context: Context) -> None:
    s = _s(context)
    assert s.job is not None
    assert s.job.name is not None
    _run(context, s.client.aio.batches.cancel(name=s.job.name))


@when("I delete the Gemini batch")
def step_delete(context: Context) -> None:
    s = _s(context)
    assert s.job is not None
    assert s.job.name is not None
    _run(context, s.client.aio.batches.delete(name=s.job.name))
    assert s.error is None, s.error


@then('the Gemini batch is "{state}" with the display name "{name}"')
def step_state(context: Context, state: str, name: str) -> None:
    job = _refresh(context)
    assert job.state == state, job.state
    assert job.display_name == name, job.display_name
    assert job.create_time is not None
    assert (job.end_time is not None) == job.done, job


@then("the Gemini batch stats count {total:d} requests, {failed:d} failed, {pending} pending")
def step_stats(context: Context, total: int, failed: int, pending: str) -> None:
    stats = _raw_job(context)["metadata"]["batchStats"]
    assert stats["requestCount"] == str(total), stats
    assert stats["failedRequestCount"] == str(failed), stats
    waiting = int(stats["pendingRequestCount"])
    assert (waiting == 0) if pending == "none" else (0 < waiting < total), stats
    if pending == "none":
        assert int(stats["successfulRequestCount"]) == total - failed, stats


def _responses(context: Context) -> dict[str, types.InlinedResponse]:
    job = _refresh(context)
    assert job.dest is not None, job
    assert job.dest.inlined_responses is not None, job
    return {str((response.metadata or {})["key"]): response for response in job.dest.inlined_responses}


@then("each Gemini batch answer, joined by key, is the answer generateContent gives its prompt")
def step_each_answer(context: Context) -> None:
    responses = _responses(context)
    assert responses
    for key, response in responses.items():
        assert response.error is None, response.error
        assert response.response is not None
        assert response.response.text == _answer_text(context, key), (key, response.response.text)


@then('the Gemini batch answer for "{key}" is the answer generateContent gives its prompt')
def step_one_answer(context: Context, key: str) -> None:
    response = _responses(context)[key]
    assert response.response is not None, response
    assert response.response.text == _answer_text(context, key)


@then('the Gemini batch answer for "{key}" is the error {code:d} mentioning "{mention}"')
def step_one_error(context: Context, key: str, code: int, mention: str) -> None:
    response = _responses(context)[key]
    assert response.response is None, response
    assert response.error is not None
    assert response.error.code == code, response.error
    assert mention in (response.error.message or ""), response.error


@then("the Gemini batch has no output")
def step_no_output(context: Context) -> None:
    job = _refresh(context)
    assert job.dest is None, job.dest
    assert "output" not in _raw_job(context)["metadata"]


@then('the Gemini batch\'s error mentions "{mention}"')
def step_job_error(context: Context, mention: str) -> None:
    error = _raw_job(context)["error"]
    assert mention in error["message"], error


def _listed(context: Context, page_size: int | None = None) -> list[list[str]]:
    s = _s(context)

    async def pages() -> list[list[str]]:
        pager = await s.client.aio.batches.list(config={"page_size": page_size} if page_size else None)
        found = [[job.display_name or "" for job in pager.page]]
        while pager.config.get("page_token"):
            await pager.next_page()
            found.append([job.display_name or "" for job in pager.page])
        return found

    return context.runner.run(pages())


@then('the Gemini batch list in pages of {size:d} is "{first}" then "{second}"')
def step_list_pages(context: Context, size: int, first: str, second: str) -> None:
    expected = [[name.strip() for name in page.split(",")] for page in (first, second)]
    assert _listed(context, size) == expected, _listed(context, size)


@then("the Gemini batch list is empty")
def step_list_empty(context: Context) -> None:
    assert _listed(context) == [[]], _listed(context)


@then('listing Gemini batches finds exactly one named "{name}"')
def step_list_one(context: Context, name: str) -> None:
    assert _listed(context) == [[name]], _listed(context)


@then('listing Gemini batches fails with {code:d} "{status}" mentioning "{mention}"')
def step_list_fails(context: Context, code: int, status: str, mention: str) -> None:
    _run(context, _s(context).client.aio.batches.list())
    step_fails(context, code, status, mention)


@then('getting the Gemini batch fails with {code:d} "{status}" mentioning "{mention}"')
def step_get_fails(context: Context, code: int, status: str, mention: str) -> None:
    s = _s(context)
    assert s.job is not None
    assert s.job.name is not None
    _run(context, s.client.aio.batches.get(name=s.job.name))
    step_fails(context, code, status, mention)


@then('the Gemini batch call fails with {code:d} "{status}" mentioning "{mention}"')
def step_fails(context: Context, code: int, status: str, mention: str) -> None:
    error = _s(context).error
    assert error is not None, _s(context).failure
    assert (error.code, error.status) == (code, status), error
    assert mention in (error.message or ""), error.message


@then('the Gemini batch error asks for a retry delay of "{delay}"')
def step_retry(context: Context, delay: str) -> None:
    error = _s(context).error
    assert error is not None
    assert isinstance(error.details, dict)
    details = error.details["error"]["details"]
    assert {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay} in details, details


@then("the Gemini batch create failed without an answer")
def step_dropped(context: Context) -> None:
    s = _s(context)
    assert s.error is None, (s.error, s.failure)
    assert s.failure is not None, (s.error, s.failure)
    assert s.job is None


@then('the Gemini emulator created {count:d} batch holding the keys "{keys}"')
def step_created(context: Context, count: int, keys: str) -> None:
    gemini = _gemini(_s(context))
    assert gemini.created_batches == count
    assert dict(gemini.created_custom_ids) == {key.strip(): 1 for key in keys.split(",")}, gemini.created_custom_ids


# -- raw calls -------------------------------------------------------------------------------------------------------


@when('I post to the Gemini batch emulator "{path}" the body {body}')
def step_raw(context: Context, path: str, body: str) -> None:
    s = _s(context)

    async def send() -> httpx2.Response:
        async with s.emulator.http_client() as http:
            if body.startswith("GET"):
                headers = {} if "without a key" in body else {"x-goog-api-key": KEY}
                return await http.get(path, headers=headers)
            return await http.post(path, content=body.encode(), headers={"x-goog-api-key": KEY})

    s.raw = context.runner.run(send())


@then('the Gemini batch raw answer is {code:d} "{status}" mentioning "{mention}"')
def step_raw_answer(context: Context, code: int, status: str, mention: str) -> None:
    raw = _s(context).raw
    assert raw is not None
    error = raw.json()["error"]
    assert (raw.status_code, error["code"], error["status"]) == (code, code, status), raw.json()
    assert mention in error["message"], error


def _upload_call(context: Context, headers: dict[str, str], content: bytes, query: str = "") -> httpx2.Response:
    s = _s(context)

    async def send() -> httpx2.Response:
        async with s.emulator.http_client() as http:
            return await http.post(f"/upload/{s.version}/files{query}", content=content, headers=headers)

    return context.runner.run(send())


def _session(context: Context, size: int) -> str:
    start = {
        "x-goog-api-key": KEY,
        "x-goog-upload-protocol": "resumable",
        "x-goog-upload-command": "start",
        "x-goog-upload-header-content-length": str(size),
        "x-goog-upload-header-content-type": "text/plain",
    }
    answer = _upload_call(context, start, b'{"file": {"displayName": "raw"}}')
    assert answer.headers["x-goog-upload-status"] == "active", answer
    url = answer.headers["x-goog-upload-url"]
    return url[url.index("?") :]


def _refused(answer: httpx2.Response, code: int, mention: str) -> None:
    assert answer.status_code == code, answer.text
    assert mention in answer.json()["error"]["message"], answer.text


@then('a Gemini upload with the offset 5 before any byte is refused with {code:d} mentioning "{mention}"')
def step_upload_offset(context: Context, code: int, mention: str) -> None:
    query = _session(context, 10)
    answer = _upload_call(context, {"x-goog-upload-command": "upload", "x-goog-upload-offset": "5"}, b"abc", query)
    _refused(answer, code, mention)
    assert answer.headers["x-goog-upload-status"] == "final"


@then('a Gemini upload to an unknown session is refused with {code:d} mentioning "{mention}"')
def step_upload_unknown(context: Context, code: int, mention: str) -> None:
    headers = {"x-goog-upload-command": "upload, finalize", "x-goog-upload-offset": "0"}
    _refused(_upload_call(context, headers, b"abc", "?upload_id=nowhere"), code, mention)


@then('a Gemini upload finalized short of its announced size is refused with {code:d} mentioning "{mention}"')
def step_upload_short(context: Context, code: int, mention: str) -> None:
    query = _session(context, 10)
    asked = _upload_call(context, {"x-goog-upload-command": "query"}, b"", query)
    assert asked.headers["x-goog-upload-size-received"] == "0", asked.headers
    headers = {"x-goog-upload-command": "upload, finalize", "x-goog-upload-offset": "0"}
    _refused(_upload_call(context, headers, b"abc", query), code, mention)


@then('a Gemini upload start without the resumable protocol is refused with {code:d} mentioning "{mention}"')
def step_upload_protocol(context: Context, code: int, mention: str) -> None:
    _refused(_upload_call(context, {"x-goog-api-key": KEY}, b"{}"), code, mention)


@then('a Gemini upload start of a file larger than the limit is refused with {code:d} mentioning "{mention}"')
def step_upload_large(context: Context, code: int, mention: str) -> None:
    headers = {
        "x-goog-api-key": KEY,
        "x-goog-upload-protocol": "resumable",
        "x-goog-upload-command": "start",
        "x-goog-upload-header-content-length": str(3 * 1024**3),
        "x-goog-upload-header-content-type": "application/jsonl",
    }
    _refused(_upload_call(context, headers, b"{}"), code, mention)


def _start_headers(**changes: str | None) -> dict[str, str]:
    headers: dict[str, str | None] = {
        "x-goog-api-key": KEY,
        "x-goog-upload-protocol": "resumable",
        "x-goog-upload-command": "start",
        "x-goog-upload-header-content-length": "3",
        "x-goog-upload-header-content-type": "text/plain",
        **changes,
    }
    return {name.replace("_", "-"): value for name, value in headers.items() if value is not None}


@then('a Gemini upload start whose body is not JSON is refused with {code:d} mentioning "{mention}"')
def step_start_not_json(context: Context, code: int, mention: str) -> None:
    _refused(_upload_call(context, _start_headers(), b"{"), code, mention)


@then('a Gemini upload start whose body is a list is refused with {code:d} mentioning "{mention}"')
def step_start_list(context: Context, code: int, mention: str) -> None:
    _refused(_upload_call(context, _start_headers(), b"[]"), code, mention)


@then('a Gemini upload start of the size "{size}" is refused with {code:d} mentioning "{mention}"')
def step_start_size(context: Context, size: str, code: int, mention: str) -> None:
    headers = _start_headers(**{"x-goog-upload-header-content-length": size})
    _refused(_upload_call(context, headers, b"{}"), code, mention)


@then('a Gemini upload start without a MIME type is refused with {code:d} mentioning "{mention}"')
def step_start_mime(context: Context, code: int, mention: str) -> None:
    headers = _start_headers(**{"x-goog-upload-header-content-type": None})
    _refused(_upload_call(context, headers, b""), code, mention)


@then('a Gemini upload start naming the file "{name}" is refused with {code:d} mentioning "{mention}"')
def step_start_name(context: Context, name: str, code: int, mention: str) -> None:
    body = json.dumps({"file": {"name": name}}).encode()
    _refused(_upload_call(context, _start_headers(), body), code, mention)


@then('a Gemini upload session taking 4 bytes of the 3 announced is refused with {code:d} mentioning "{mention}"')
def step_upload_more(context: Context, code: int, mention: str) -> None:
    query = _session(context, 3)
    headers = {"x-goog-upload-command": "upload", "x-goog-upload-offset": "0"}
    _refused(_upload_call(context, headers, b"abcd", query), code, mention)


@then('a Gemini upload with the command "{command}" is refused with {code:d} mentioning "{mention}"')
def step_upload_command(context: Context, command: str, code: int, mention: str) -> None:
    query = _session(context, 3)
    headers = {"x-goog-upload-command": command, "x-goog-upload-offset": "0"}
    _refused(_upload_call(context, headers, b"abc", query), code, mention)


@given("the Gemini batch emulator runs on a manual clock with files of at most {limit:d} bytes")
def step_start_files(context: Context, limit: int) -> None:
    _start(context, "v1beta", max_file_bytes=limit)


@then('a Gemini upload session sent {count:d} bytes at once is refused with {code:d} mentioning "{mention}"')
def step_upload_too_much(context: Context, count: int, code: int, mention: str) -> None:
    start = _start_headers(**{"x-goog-upload-header-content-length": None})
    answer = _upload_call(context, start, b'{"file": {"mimeType": "text/plain"}}')
    url = answer.headers["x-goog-upload-url"]
    headers = {"x-goog-upload-command": "upload, finalize", "x-goog-upload-offset": "0"}
    _refused(_upload_call(context, headers, b"x" * count, url[url.index("?") :]), code, mention)


@then(
    'a Gemini upload chunk meeting a {status:d} fault is answered {code:d} "{name}" with the upload status "{upload}"'
)
def step_upload_fault(context: Context, status: int, code: int, name: str, upload: str) -> None:
    query = _session(context, 3)
    _s(context).emulator.faults.fail_next("gemini.files.upload", status)
    headers = {"x-goog-upload-command": "upload, finalize", "x-goog-upload-offset": "0"}
    answer = _upload_call(context, headers, b"abc", query)
    assert answer.status_code == code, answer.text
    assert answer.json()["error"]["status"] == name, answer.text
    assert answer.headers["x-goog-upload-status"] == upload, answer.headers


@given("the Gemini batch emulator runs on a manual clock with a state file")
def step_start_state(context: Context) -> None:
    folder = tempfile.TemporaryDirectory()
    context.cleanups.append(folder.cleanup)
    path = Path(folder.name) / "gemini-state.json"
    _start(context, "v1beta", state_file=path)
    context.gbatch_state = path


@when("the Gemini batch emulator is started again from its state file")
def step_restart(context: Context) -> None:
    s = _s(context)
    emulator = Emulator(clock=s.clock, processing_seconds=100.0, state_file=context.gbatch_state)
    options = types.HttpOptions(
        base_url=emulator.base_url, api_version="v1beta", httpx_async_client=emulator.http_client()
    )
    s.emulator = emulator
    s.client = genai.Client(api_key=KEY, http_options=options)


@then('the Gemini file list names "{name}" and the job\'s responses')
def step_files_after(context: Context, name: str) -> None:
    pages = _file_pages(context)
    assert len(pages) == 1, pages
    assert sorted(pages[0]) == sorted([name, f"{_refresh(context).name} responses"]), pages


@then('the Gemini emulator created {count:d} batches holding the keys "{keys}"')
def step_created_many(context: Context, count: int, keys: str) -> None:
    step_created(context, count, keys)


@when('the Gemini batch emulator\'s "{route}" is cut after {lines:d} line')
def step_cut(context: Context, route: str, lines: int) -> None:
    _s(context).emulator.faults.cut(route, after_lines=lines)


@then("downloading the Gemini batch's responses file fails part way")
def step_download_cut(context: Context) -> None:
    s = _s(context)
    file = _responses_file(context)
    _run(context, s.client.aio.files.download(file=file))
    assert s.error is None, s.error
    assert s.failure is not None


@then("downloading the Gemini batch's responses file gives {count:d} lines")
def step_download_whole(context: Context, count: int) -> None:
    s = _s(context)
    content = context.runner.run(s.client.aio.files.download(file=_responses_file(context)))
    assert len(list(_lines(content))) == count, content


# -- files -----------------------------------------------------------------------------------------------------------


def _upload(context: Context, content: bytes, name: str) -> None:
    s = _s(context)
    config: types.UploadFileConfigDict = {"mime_type": "application/jsonl", "display_name": name}
    s.sent = content
    s.file = context.runner.run(s.client.aio.files.upload(file=io.BytesIO(content), config=config))


@when('I upload to the Gemini emulator a JSONL file of {count:d} requests named "{name}"')
def step_upload(context: Context, count: int, name: str) -> None:
    _upload(context, _jsonl(count), name)


@when(
    'I upload to the Gemini emulator a JSONL file of {count:d} requests and one with a temperature of 3 named "{name}"'
)
def step_upload_bad_row(context: Context, count: int, name: str) -> None:
    _upload(context, _jsonl(count, bad_row=True), name)


@when("I upload to the Gemini emulator a file whose second line is {line}")
def step_upload_bad_line(context: Context, line: str) -> None:
    if line.startswith("blank"):
        _upload(context, b"\n  \n", "blank")
    else:
        _upload(context, _jsonl(1) + line.encode() + b"\n" + _jsonl(1), "bad-lines")


@when('I upload to the Gemini emulator a JSONL file of {count:d} requests as "{name}"')
def step_upload_named(context: Context, count: int, name: str) -> None:
    s = _s(context)
    s.sent = _jsonl(count)
    config: types.UploadFileConfigDict = {"mime_type": "application/jsonl", "name": name}
    s.file = context.runner.run(s.client.aio.files.upload(file=io.BytesIO(s.sent), config=config))


@then('the Gemini file\'s name is "{name}"')
def step_file_name(context: Context, name: str) -> None:
    file = _s(context).file
    assert file is not None
    assert file.name == name, file


@then('uploading the Gemini file "{name}" again fails with {code:d} "{status}" mentioning "{mention}"')
def step_upload_again(context: Context, name: str, code: int, status: str, mention: str) -> None:
    s = _s(context)
    config: types.UploadFileConfigDict = {"mime_type": "application/jsonl", "name": name}
    _run(context, s.client.aio.files.upload(file=io.BytesIO(b"{}"), config=config))
    step_fails(context, code, status, mention)


@when("I delete the Gemini batch's responses file")
def step_delete_responses(context: Context) -> None:
    s = _s(context)
    s.file = _responses_file(context)
    assert s.file.name is not None
    context.runner.run(s.client.aio.files.delete(name=s.file.name))


@then('getting the Gemini batch\'s responses file fails with {code:d} "{status}" mentioning "{mention}"')
def step_responses_gone(context: Context, code: int, status: str, mention: str) -> None:
    job = _refresh(context)
    assert job.dest is not None
    file = _s(context).file
    assert file is not None
    assert job.dest.file_name == file.name, job.dest
    step_get_file_fails(context, code, status, mention)


@given(
    'the Gemini emulator\'s request "{lost}" is lost, "{garbled}" garbled as "{kind}" and "{ended}" ends "{outcome}"'
)
def step_arm_many(context: Context, lost: str, garbled: str, kind: str, ended: str, outcome: str) -> None:
    faults = _s(context).emulator.faults
    faults.lose(lost)
    faults.garble(garbled, garble_kind(kind))
    faults.outcome(ended, outcome_kind(outcome))


@then('the Gemini batch\'s inline answers name only the keys "{keys}"')
def step_inline_keys(context: Context, keys: str) -> None:
    assert sorted(_responses(context)) == sorted(key.strip() for key in keys.split(",")), _responses(context)


@then(
    'the Gemini batch\'s responses file holds the error 4 for "k0", a line no JSON reader takes for "k1", '
    'and an answer for "k2"'
)
def step_responses_faults(context: Context) -> None:
    s = _s(context)
    content = context.runner.run(s.client.aio.files.download(file=_responses_file(context)))
    readable: dict[str, dict[str, Any]] = {}
    unreadable = 0
    for line in content.splitlines():
        try:
            decoded = json.loads(line)
        except ValueError:
            unreadable += 1
            continue
        readable[decoded["key"]] = decoded
    assert unreadable == 1, content
    assert set(readable) == {"k0", "k2"}, readable
    assert readable["k0"]["error"]["code"] == 4, readable["k0"]
    assert "response" in readable["k2"], readable["k2"]


def _stats(context: Context) -> dict[str, Any]:
    s = _s(context)

    async def fetch() -> dict[str, Any]:
        async with s.emulator.http_client() as http:
            return (await http.get("/_emulator/stats")).json()

    return context.runner.run(fetch())


@then('the Gemini emulator\'s stats show {count:d} batch with the keys "{keys}"')
def step_stats_keys(context: Context, count: int, keys: str) -> None:
    stats = _stats(context)
    assert stats["gemini_batches"] == stats["gemini_created_batches"] == count, stats
    assert stats["gemini_created_custom_ids"] == {key.strip(): 1 for key in keys.split(",")}, stats


@then("the Gemini emulator's stats show no batch")
def step_stats_none(context: Context) -> None:
    stats = _stats(context)
    assert stats["gemini_batches"] == stats["gemini_created_batches"] == 0, stats
    assert stats["gemini_created_custom_ids"] == {}, stats
    gemini = _gemini(_s(context))
    assert len(gemini.batches) == 0
    assert not gemini.files.sessions


@when("the Gemini batch emulator is reset")
def step_reset(context: Context) -> None:
    _s(context).emulator.reset()


@then('the Gemini batch raw answer is a pending job "{name}" of priority "{priority}"')
def step_raw_job(context: Context, name: str, priority: str) -> None:
    raw = _s(context).raw
    assert raw is not None
    metadata = raw.json()["metadata"]
    assert raw.status_code == 200, raw.text
    assert (metadata["displayName"], metadata["priority"], metadata["state"]) == (name, priority, "BATCH_STATE_PENDING")


@then('the Gemini file is ACTIVE, UPLOADED, of the bytes sent, "{mime}", expiring 48 hours after its creation')
def step_file(context: Context, mime: str) -> None:
    s = _s(context)
    assert s.file is not None
    assert s.file.name is not None
    described = context.runner.run(s.client.aio.files.get(name=s.file.name))
    assert described.state == "ACTIVE", described
    assert described.source == "UPLOADED", described
    assert described.size_bytes == len(s.sent), described
    assert described.mime_type == mime, described
    assert described.create_time is not None
    assert described.expiration_time is not None
    assert (described.expiration_time - described.create_time).total_seconds() == 48 * 3600
    assert described.download_uri is None
    assert described.display_name == s.file.display_name


def _file_pages(context: Context, page_size: int | None = None) -> list[list[str]]:
    s = _s(context)

    async def pages() -> list[list[str]]:
        pager = await s.client.aio.files.list(config={"page_size": page_size} if page_size else None)
        found = [[file.display_name or "" for file in pager.page]]
        while pager.config.get("page_token"):
            await pager.next_page()
            found.append([file.display_name or "" for file in pager.page])
        return found

    return context.runner.run(pages())


@then("the Gemini file list names it")
def step_file_listed(context: Context) -> None:
    file = _s(context).file
    assert file is not None
    assert _file_pages(context) == [[file.display_name]], _file_pages(context)


@then('the Gemini file list in pages of {size:d} is "{first}" then "{second}"')
def step_file_pages(context: Context, size: int, first: str, second: str) -> None:
    assert _file_pages(context, size) == [[first], [second]], _file_pages(context, size)


@then('the Gemini file list in pages of {size:d} is "{only}"')
def step_file_page(context: Context, size: int, only: str) -> None:
    assert _file_pages(context, size) == [[only]], _file_pages(context, size)


@then("the Gemini emulator served 1 upload start and {count:d} upload chunk")
def step_upload_calls(context: Context, count: int) -> None:
    assert _s(context).emulator.calls["gemini.files.upload"] == 1 + count


@then("the Gemini emulator served 1 upload start and more than {count:d} upload chunks")
def step_upload_many(context: Context, count: int) -> None:
    assert _s(context).emulator.calls["gemini.files.upload"] > 1 + count


@then('downloading the Gemini file fails with {code:d} "{status}" mentioning "{mention}"')
def step_download_fails(context: Context, code: int, status: str, mention: str) -> None:
    s = _s(context)
    assert s.file is not None
    assert s.file.name is not None
    _run(context, s.client.aio.files.download(file=s.file.name))
    step_fails(context, code, status, mention)


@when("I delete the Gemini file")
def step_delete_file(context: Context) -> None:
    s = _s(context)
    assert s.file is not None
    assert s.file.name is not None
    context.runner.run(s.client.aio.files.delete(name=s.file.name))


@then('getting the Gemini file fails with {code:d} "{status}" mentioning "{mention}"')
def step_get_file_fails(context: Context, code: int, status: str, mention: str) -> None:
    s = _s(context)
    assert s.file is not None
    assert s.file.name is not None
    _run(context, s.client.aio.files.get(name=s.file.name))
    step_fails(context, code, status, mention)


def _responses_file(context: Context) -> types.File:
    s = _s(context)
    job = _refresh(context)
    assert job.dest is not None, job
    assert job.dest.file_name is not None, job
    return context.runner.run(s.client.aio.files.get(name=job.dest.file_name))


@then("the Gemini batch's responses file is GENERATED and downloadable")
def step_responses_file(context: Context) -> None:
    file = _responses_file(context)
    assert file.source == "GENERATED", file
    assert file.download_uri is not None, file
    assert file.mime_type == "application/jsonl", file


def _lines(content: bytes) -> Iterator[dict[str, Any]]:
    for line in content.splitlines():
        yield json.loads(line)


@then(
    "the Gemini batch's responses file, joined by key, answers as generateContent does, the bad row with error {code:d}"
)
def step_responses_joined(context: Context, code: int) -> None:
    s = _s(context)
    file = _responses_file(context)
    content = context.runner.run(s.client.aio.files.download(file=file))
    lines = {line["key"]: line for line in _lines(content)}
    assert set(lines) == {"k0", "k1", "k2", "bad"}, lines
    assert lines["bad"]["error"]["code"] == code, lines["bad"]
    for key in ("k0", "k1", "k2"):
        text = lines[key]["response"]["candidates"][0]["content"]["parts"][0]["text"]
        assert text == _answer_text(context, key), (key, text)


# -- over a socket ---------------------------------------------------------------------------------------------------


@given("the Gemini batch emulator serves on a socket, its jobs done at once")
def step_socket(context: Context) -> None:
    clock = ManualClock()
    emulator = Emulator(clock=clock)
    stack = ExitStack()
    server = stack.enter_context(serve_in_thread(emulator))
    context.cleanups.append(stack.close)
    client = genai.Client(api_key=KEY, http_options=types.HttpOptions(base_url=server.url, api_version="v1beta"))
    context.gbatch = GeminiBatchScenario(emulator, clock, client, "v1beta")


@when('a google-genai client over the socket uploads {count:d} requests, runs a job "{name}", downloads its responses')
def step_socket_run(context: Context, count: int, name: str) -> None:
    s = _s(context)
    client = s.client
    config: types.UploadFileConfigDict = {"mime_type": "application/jsonl", "display_name": "wire-input"}
    uploaded = client.files.upload(file=io.BytesIO(_jsonl(count)), config=config)
    assert uploaded.name is not None
    job = client.batches.create(model=MODEL, src=uploaded.name, config={"display_name": name})
    assert job.name is not None
    done = client.batches.get(name=job.name)
    assert done.state == "JOB_STATE_SUCCEEDED", done
    assert done.display_name == name, done
    assert done.dest is not None
    assert done.dest.file_name is not None
    s.downloaded = client.files.download(file=done.dest.file_name)


@then('the responses downloaded over the socket answer the keys "{keys}"')
def step_socket_keys(context: Context, keys: str) -> None:
    lines = {line["key"]: line for line in _lines(_s(context).downloaded)}
    assert set(lines) == {key.strip() for key in keys.split(",")}, lines
    assert all("response" in line for line in lines.values()), lines
