"""Steps of features/emulator_gemini_batch.feature about files: the google-genai SDK's resumable uploads (and raw
calls of the protocol it speaks), files described, listed, deleted and downloaded, responses files, and a run over a
socket."""

from __future__ import annotations

import io
import json
from contextlib import ExitStack
from typing import Any

import _support  # noqa: F401  (registers the Q type of quoted step text)
from gemini_batches import (
    KEY,
    MODEL,
    Context,
    GeminiBatchScenario,
    assert_fails,
    assert_refused,
    file_pages,
    jsonl_lines,
    jsonl_of,
    live_answer_text,
    refresh_job,
    responses_file,
    run_call,
    scenario,
    start_emulator,
    upload_call,
    upload_file,
    upload_session,
    upload_start_headers,
)
from google import genai
from google.genai import _api_client, types
from step_context import given, then, when

from lowtide.core.clock import ManualClock
from lowtide.emulator import Emulator, serve_in_thread


@given("the google-genai SDK uploads in chunks of {size:d} bytes")
def step_chunks(context: Context, size: int) -> None:
    before = _api_client.CHUNK_SIZE
    _api_client.CHUNK_SIZE = size

    def restore() -> None:
        _api_client.CHUNK_SIZE = before

    context.cleanups.append(restore)


@then('a Gemini upload with the offset 5 before any byte is refused with {code:d} mentioning "{mention}"')
def step_upload_offset(context: Context, code: int, mention: str) -> None:
    query = upload_session(context, 10)
    answer = upload_call(context, {"x-goog-upload-command": "upload", "x-goog-upload-offset": "5"}, b"abc", query)
    assert_refused(answer, code, mention)
    assert answer.headers["x-goog-upload-status"] == "final"


@then('a Gemini upload to an unknown session is refused with {code:d} mentioning "{mention}"')
def step_upload_unknown(context: Context, code: int, mention: str) -> None:
    headers = {"x-goog-upload-command": "upload, finalize", "x-goog-upload-offset": "0"}
    assert_refused(upload_call(context, headers, b"abc", "?upload_id=nowhere"), code, mention)


@then('a Gemini upload finalized short of its announced size is refused with {code:d} mentioning "{mention}"')
def step_upload_short(context: Context, code: int, mention: str) -> None:
    query = upload_session(context, 10)
    asked = upload_call(context, {"x-goog-upload-command": "query"}, b"", query)
    assert asked.headers["x-goog-upload-size-received"] == "0", asked.headers
    headers = {"x-goog-upload-command": "upload, finalize", "x-goog-upload-offset": "0"}
    assert_refused(upload_call(context, headers, b"abc", query), code, mention)


@then('a Gemini upload start without the resumable protocol is refused with {code:d} mentioning "{mention}"')
def step_upload_protocol(context: Context, code: int, mention: str) -> None:
    assert_refused(upload_call(context, {"x-goog-api-key": KEY}, b"{}"), code, mention)


@then('a Gemini upload start of a file larger than the limit is refused with {code:d} mentioning "{mention}"')
def step_upload_large(context: Context, code: int, mention: str) -> None:
    headers = {
        "x-goog-api-key": KEY,
        "x-goog-upload-protocol": "resumable",
        "x-goog-upload-command": "start",
        "x-goog-upload-header-content-length": str(3 * 1024**3),
        "x-goog-upload-header-content-type": "application/jsonl",
    }
    assert_refused(upload_call(context, headers, b"{}"), code, mention)


@then('a Gemini upload start whose body is not JSON is refused with {code:d} mentioning "{mention}"')
def step_start_not_json(context: Context, code: int, mention: str) -> None:
    assert_refused(upload_call(context, upload_start_headers(), b"{"), code, mention)


@then('a Gemini upload start whose body is a list is refused with {code:d} mentioning "{mention}"')
def step_start_list(context: Context, code: int, mention: str) -> None:
    assert_refused(upload_call(context, upload_start_headers(), b"[]"), code, mention)


@then('a Gemini upload start of the size "{size}" is refused with {code:d} mentioning "{mention}"')
def step_start_size(context: Context, size: str, code: int, mention: str) -> None:
    headers = upload_start_headers(**{"x-goog-upload-header-content-length": size})
    assert_refused(upload_call(context, headers, b"{}"), code, mention)


@then('a Gemini upload start without a MIME type is refused with {code:d} mentioning "{mention}"')
def step_start_mime(context: Context, code: int, mention: str) -> None:
    headers = upload_start_headers(**{"x-goog-upload-header-content-type": None})
    assert_refused(upload_call(context, headers, b""), code, mention)


@then('a Gemini upload start naming the file "{name}" is refused with {code:d} mentioning "{mention}"')
def step_start_name(context: Context, name: str, code: int, mention: str) -> None:
    body = json.dumps({"file": {"name": name}}).encode()
    assert_refused(upload_call(context, upload_start_headers(), body), code, mention)


@then('a Gemini upload session taking 4 bytes of the 3 announced is refused with {code:d} mentioning "{mention}"')
def step_upload_more(context: Context, code: int, mention: str) -> None:
    query = upload_session(context, 3)
    headers = {"x-goog-upload-command": "upload", "x-goog-upload-offset": "0"}
    assert_refused(upload_call(context, headers, b"abcd", query), code, mention)


@then('a Gemini upload with the command "{command}" is refused with {code:d} mentioning "{mention}"')
def step_upload_command(context: Context, command: str, code: int, mention: str) -> None:
    query = upload_session(context, 3)
    headers = {"x-goog-upload-command": command, "x-goog-upload-offset": "0"}
    assert_refused(upload_call(context, headers, b"abc", query), code, mention)


@given("the Gemini batch emulator runs on a manual clock with files of at most {limit:d} bytes")
def step_start_files(context: Context, limit: int) -> None:
    start_emulator(context, "v1beta", max_file_bytes=limit)


@then('a Gemini upload session sent {count:d} bytes at once is refused with {code:d} mentioning "{mention}"')
def step_upload_too_much(context: Context, count: int, code: int, mention: str) -> None:
    start = upload_start_headers(**{"x-goog-upload-header-content-length": None})
    answer = upload_call(context, start, b'{"file": {"mimeType": "text/plain"}}')
    url = answer.headers["x-goog-upload-url"]
    headers = {"x-goog-upload-command": "upload, finalize", "x-goog-upload-offset": "0"}
    assert_refused(upload_call(context, headers, b"x" * count, url[url.index("?") :]), code, mention)


@then(
    'a Gemini upload chunk meeting a {status:d} fault is answered {code:d} "{name}" with the upload status "{upload}"'
)
def step_upload_fault(context: Context, status: int, code: int, name: str, upload: str) -> None:
    query = upload_session(context, 3)
    scenario(context).emulator.faults.fail_next("gemini.files.upload", status)
    headers = {"x-goog-upload-command": "upload, finalize", "x-goog-upload-offset": "0"}
    answer = upload_call(context, headers, b"abc", query)
    assert answer.status_code == code, answer.text
    assert answer.json()["error"]["status"] == name, answer.text
    assert answer.headers["x-goog-upload-status"] == upload, answer.headers


@when('I upload to the Gemini emulator a JSONL file of {count:d} requests named "{name}"')
def step_upload(context: Context, count: int, name: str) -> None:
    upload_file(context, jsonl_of(count), name)


@when(
    'I upload to the Gemini emulator a JSONL file of {count:d} requests and one with a temperature of 3 named "{name}"'
)
def step_upload_bad_row(context: Context, count: int, name: str) -> None:
    upload_file(context, jsonl_of(count, bad_row=True), name)


@when("I upload to the Gemini emulator a file whose second line is {line}")
def step_upload_bad_line(context: Context, line: str) -> None:
    if line.startswith("blank"):
        upload_file(context, b"\n  \n", "blank")
    else:
        upload_file(context, jsonl_of(1) + line.encode() + b"\n" + jsonl_of(1), "bad-lines")


@when('I upload to the Gemini emulator a JSONL file of {count:d} requests as "{name}"')
def step_upload_named(context: Context, count: int, name: str) -> None:
    s = scenario(context)
    s.sent = jsonl_of(count)
    config: types.UploadFileConfigDict = {"mime_type": "application/jsonl", "name": name}
    s.file = context.runner.run(s.client.aio.files.upload(file=io.BytesIO(s.sent), config=config))


@then('the Gemini file\'s name is "{name}"')
def step_file_name(context: Context, name: str) -> None:
    file = scenario(context).file
    assert file is not None
    assert file.name == name, file


@then('uploading the Gemini file "{name}" again fails with {code:d} "{status}" mentioning "{mention}"')
def step_upload_again(context: Context, name: str, code: int, status: str, mention: str) -> None:
    s = scenario(context)
    config: types.UploadFileConfigDict = {"mime_type": "application/jsonl", "name": name}
    run_call(context, s.client.aio.files.upload(file=io.BytesIO(b"{}"), config=config))
    assert_fails(context, code, status, mention)


@then('the Gemini file is ACTIVE, UPLOADED, of the bytes sent, "{mime}", expiring 48 hours after its creation')
def step_file(context: Context, mime: str) -> None:
    s = scenario(context)
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


@then("the Gemini file list names it")
def step_file_listed(context: Context) -> None:
    file = scenario(context).file
    assert file is not None
    assert file_pages(context) == [[file.display_name]], file_pages(context)


@then('the Gemini file list in pages of {size:d} is "{first}" then "{second}"')
def step_file_pages(context: Context, size: int, first: str, second: str) -> None:
    assert file_pages(context, size) == [[first], [second]], file_pages(context, size)


@then('the Gemini file list in pages of {size:d} is "{only}"')
def step_file_page(context: Context, size: int, only: str) -> None:
    assert file_pages(context, size) == [[only]], file_pages(context, size)


@then("the Gemini emulator served 1 upload start and {count:d} upload chunk")
def step_upload_calls(context: Context, count: int) -> None:
    assert scenario(context).emulator.calls["gemini.files.upload"] == 1 + count


@then("the Gemini emulator served 1 upload start and more than {count:d} upload chunks")
def step_upload_many(context: Context, count: int) -> None:
    assert scenario(context).emulator.calls["gemini.files.upload"] > 1 + count


@then('downloading the Gemini file fails with {code:d} "{status}" mentioning "{mention}"')
def step_download_fails(context: Context, code: int, status: str, mention: str) -> None:
    s = scenario(context)
    assert s.file is not None
    assert s.file.name is not None
    run_call(context, s.client.aio.files.download(file=s.file.name))
    assert_fails(context, code, status, mention)


@when("I delete the Gemini file")
def step_delete_file(context: Context) -> None:
    s = scenario(context)
    assert s.file is not None
    assert s.file.name is not None
    context.runner.run(s.client.aio.files.delete(name=s.file.name))


@then('getting the Gemini file fails with {code:d} "{status}" mentioning "{mention}"')
def step_get_file_fails(context: Context, code: int, status: str, mention: str) -> None:
    s = scenario(context)
    assert s.file is not None
    assert s.file.name is not None
    run_call(context, s.client.aio.files.get(name=s.file.name))
    assert_fails(context, code, status, mention)


@then("the Gemini batch's responses file is GENERATED and downloadable")
def step_responses_file(context: Context) -> None:
    file = responses_file(context)
    assert file.source == "GENERATED", file
    assert file.download_uri is not None, file
    assert file.mime_type == "application/jsonl", file


@then(
    "the Gemini batch's responses file, joined by key, answers as generateContent does, the bad row with error {code:d}"
)
def step_responses_joined(context: Context, code: int) -> None:
    s = scenario(context)
    file = responses_file(context)
    content = context.runner.run(s.client.aio.files.download(file=file))
    lines = {line["key"]: line for line in jsonl_lines(content)}
    assert set(lines) == {"k0", "k1", "k2", "bad"}, lines
    assert lines["bad"]["error"]["code"] == code, lines["bad"]
    for key in ("k0", "k1", "k2"):
        text = lines[key]["response"]["candidates"][0]["content"]["parts"][0]["text"]
        assert text == live_answer_text(context, key), (key, text)


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
    s = scenario(context)
    client = s.client
    config: types.UploadFileConfigDict = {"mime_type": "application/jsonl", "display_name": "wire-input"}
    uploaded = client.files.upload(file=io.BytesIO(jsonl_of(count)), config=config)
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
    lines = {line["key"]: line for line in jsonl_lines(scenario(context).downloaded)}
    assert set(lines) == {key.strip() for key in keys.split(",")}, lines
    assert all("response" in line for line in lines.values()), lines


@then('the Gemini file list names "{name}" and the job\'s responses')
def step_files_after(context: Context, name: str) -> None:
    pages = file_pages(context)
    assert len(pages) == 1, pages
    assert sorted(pages[0]) == sorted([name, f"{refresh_job(context).name} responses"]), pages


@then("downloading the Gemini batch's responses file fails part way")
def step_download_cut(context: Context) -> None:
    s = scenario(context)
    file = responses_file(context)
    run_call(context, s.client.aio.files.download(file=file))
    assert s.error is None, s.error
    assert s.failure is not None


@then("downloading the Gemini batch's responses file gives {count:d} lines")
def step_download_whole(context: Context, count: int) -> None:
    s = scenario(context)
    content = context.runner.run(s.client.aio.files.download(file=responses_file(context)))
    assert len(list(jsonl_lines(content))) == count, content


@when("I delete the Gemini batch's responses file")
def step_delete_responses(context: Context) -> None:
    s = scenario(context)
    s.file = responses_file(context)
    assert s.file.name is not None
    context.runner.run(s.client.aio.files.delete(name=s.file.name))


@then('getting the Gemini batch\'s responses file fails with {code:d} "{status}" mentioning "{mention}"')
def step_responses_gone(context: Context, code: int, status: str, mention: str) -> None:
    job = refresh_job(context)
    assert job.dest is not None
    file = scenario(context).file
    assert file is not None
    assert job.dest.file_name == file.name, job.dest
    step_get_file_fails(context, code, status, mention)


@then(
    'the Gemini batch\'s responses file holds the error 4 for "k0", a line no JSON reader takes for "k1", '
    'and an answer for "k2"'
)
def step_responses_faults(context: Context) -> None:
    s = scenario(context)
    content = context.runner.run(s.client.aio.files.download(file=responses_file(context)))
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
