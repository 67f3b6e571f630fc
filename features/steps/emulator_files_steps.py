"""Steps of features/emulator_files.feature: the Files API and file sources, through the real SDK.

The scenario's emulator and client are those `emulator_steps` sets up, kept on `context.emulator_scenario`; the
Then steps about failed calls and batch results are that module's. What this module adds is kept on the context:
`file_ids` (every upload, in order), `file_json` (the last file metadata, as the API sent it) and `download`.
"""

from __future__ import annotations

import base64
import datetime
import struct
import zlib
from typing import Any, Protocol

import _support  # noqa: F401  (registers the `Q` step type: quoted text, possibly empty)
import anthropic
import httpx2
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.emulator import Emulator
from lowtide.emulator.core.pdf import simple_pdf


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    batch_file: str
    download: tuple[bytes, str | None]
    file_entry: tuple[str, str, bytes]
    file_ids: list[str]
    file_json: dict[str, Any]
    file_reference: str
    file_reply: Any
    listed: list[str]
    page: Any
    token_count: int


MODEL = "claude-sonnet-4-5"
FILES_BETA = "files-api-2025-04-14"
KEY = "emulator-scenario-key"
BOUNDARY = "tide-boundary"


def emulator(context: Context) -> Any:
    """The emulator scenario of `emulator_steps` (a `Scenario`): emulator, SDK client, last reply and error."""
    s = getattr(context, "emulator_scenario", None)
    assert s is not None, "start the emulator first: 'Given the emulator runs on a manual clock'"
    return s


def _png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\x00" * 3 * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


TEXT = b"The tide is high at noon. It is low at six.\n"
# What a scenario names, as (filename, content type, bytes).
FILES: dict[str, tuple[str, str, bytes]] = {
    "a text file": ("tides.txt", "text/plain", TEXT),
    "a PDF": ("tides.pdf", "application/pdf", simple_pdf(["High tide at noon.", "Low tide at six."])),
    "a PNG image": ("chart.png", "image/png", _png(400, 300)),
    "a text file that is not UTF-8": ("latin.txt", "text/plain", "Marée haute à midi.".encode("latin-1")),
    "a PNG image declared as image/jpeg": ("chart.jpg", "image/jpeg", _png(40, 30)),
}
CONTENTS: dict[str, bytes] = {
    "some text": b"Tide tables for the week.\n",
    "a PDF": simple_pdf(["Tide tables."]),
    "a PNG image": _png(4, 3),
    "binary bytes": b"\x00\xff\xfe\x01\x02",
}


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def _remember(context: Context, metadata: Any) -> None:
    """Keep a file-metadata answer (a raw SDK response) as the API sent it; a failed call (None) keeps nothing."""
    s = emulator(context)
    if metadata is None:
        return
    context.file_json = metadata.http_response.json()
    s.reply = context.file_json


def _uploads(context: Context) -> list[str]:
    if not hasattr(context, "file_ids"):
        context.file_ids = []
    ids: list[str] = context.file_ids
    return ids


def _current_file(context: Context) -> str:
    ids = _uploads(context)
    assert ids, "no file was uploaded"
    return ids[-1]


def upload(
    context: Context, filename: str, content_type: str, content: bytes, *, beta: bool = False, **extra: Any
) -> None:
    s = emulator(context)
    files = s.sdk.beta.files if beta else s.sdk.files
    betas: dict[str, Any] = {"betas": [FILES_BETA]} if beta else {}
    raw = s.run(lambda: files.with_raw_response.upload(file=(filename, content, content_type), **betas, **extra))
    assert s.error is None, s.error
    _remember(context, raw)
    _uploads(context).append(context.file_json["id"])


def post_upload(context: Context, fields: dict[str, str], file: tuple[str, bytes, str] | None) -> None:
    """`POST /v1/files` with the form `fields` and `file` (as (name, bytes, type)), through the SDK."""
    s = emulator(context)
    files = [("file", file)] if file is not None else None
    headers = {"Content-Type": "multipart/form-data"}
    s.run(
        lambda: s.sdk.post("/v1/files", cast_to=httpx2.Response, body=fields, files=files, options={"headers": headers})
    )


# -- setting up ------------------------------------------------------------------------------------------------------


@given("the emulator runs on a manual clock and takes files of at most {size:d} bytes")
def step_start_file_limit(context: Context, size: int) -> None:
    context.execute_steps("Given the emulator runs on a manual clock")
    s = emulator(context)
    s.emulator = Emulator(clock=s.clock, max_file_bytes=size)
    s.client = s.emulator.client(api_key=KEY)
    s.cleanups.append(s.client.close)


@given('a tool wrote the emulator file "{filename}" holding "{text}"')
def step_tool_file(context: Context, filename: str, text: str) -> None:
    s = emulator(context)
    _uploads(context).append(s.emu.add_file(text.replace("\\n", "\n").encode(), filename=filename))


# -- uploads ---------------------------------------------------------------------------------------------------------


@when('I upload "{filename}" to the emulator as "{content_type}" with the files beta, holding "{text}"')
def step_upload_beta(context: Context, filename: str, content_type: str, text: str) -> None:
    upload(context, filename, content_type, text.encode(), beta=True)


@when('I upload "{filename}" to the emulator as "{content_type}", holding "{text}"')
def step_upload(context: Context, filename: str, content_type: str, text: str) -> None:
    upload(context, filename, content_type, text.encode())


@when(
    'I upload "{filename}" to the emulator as "{content_type}", holding "{text}", to expire after {seconds:d} seconds'
)
def step_upload_expiring(context: Context, filename: str, content_type: str, text: str, seconds: int) -> None:
    upload(context, filename, content_type, text.encode(), expires_in_seconds=seconds)


@when("I upload {file} to the emulator")
def step_upload_named(context: Context, file: str) -> None:
    context.file_entry = FILES[file]
    filename, content_type, content = FILES[file]
    upload(context, filename, content_type, content)


@when('I upload to the emulator a file named "{name:Q}", declared as "{declared}", holding {content}')
def step_upload_form(context: Context, name: str, declared: str, content: str) -> None:
    upload(context, name, declared, CONTENTS[content])


@when("I upload {count:d} files to the emulator, one second apart")
def step_upload_many(context: Context, count: int) -> None:
    s = emulator(context)
    for index in range(count):
        upload(context, f"file-{index + 1}.txt", "text/plain", f"File {index + 1}.".encode())
        s.clock.advance(1)


_REFUSED: dict[str, tuple[dict[str, str], tuple[str, bytes, str] | None]] = {
    "a form without a file": ({"expires_in_seconds": "3600"}, None),
    "a form with a purpose field": ({"purpose": "assistants"}, ("a.txt", b"x", "text/plain")),
    "a file named with 501 characters": ({}, ("n" * 497 + ".txt", b"x", "text/plain")),
    "a file of 1001 bytes": ({}, ("big.txt", b"x" * 1001, "text/plain")),
    "a file of 70000 bytes": ({}, ("huge.txt", b"x" * 70000, "text/plain")),
}


@when("I post the emulator's files route {upload}")
def step_post_refused(context: Context, upload: str) -> None:
    s = emulator(context)
    if upload == "a JSON body":
        s.run(lambda: s.sdk.post("/v1/files", cast_to=httpx2.Response, body={"file": "tides.txt"}))
    elif upload.startswith('a file to expire after "'):
        seconds = upload.removeprefix('a file to expire after "').removesuffix('" seconds')
        post_upload(context, {"expires_in_seconds": seconds}, ("a.txt", b"x", "text/plain"))
    else:
        post_upload(context, *_REFUSED[upload])


_PART = f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nabc\r\n'
_MALFORMED: dict[str, str] = {
    "cut short": _PART,
    "whose boundary line runs on": f"--{BOUNDARY}junk\r\n\r\nabc\r\n--{BOUNDARY}--\r\n",
    "whose part headers never end": f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"\r\n--{BOUNDARY}--',
    "whose part has no name": f"--{BOUNDARY}\r\nContent-Disposition: form-data\r\n\r\nabc\r\n--{BOUNDARY}--\r\n",
    "whose part has no headers": f"--{BOUNDARY}\r\n\r\nabc\r\n--{BOUNDARY}--\r\n",
}


@when("I send the emulator's files route a raw form {form}")
def step_post_malformed(context: Context, form: str) -> None:
    """A body the SDK would never build, sent as it is; the answer is kept raw, where `emulator_steps` keeps one."""
    s = emulator(context)
    headers = {
        "x-api-key": KEY,
        "anthropic-version": "2023-06-01",
        "content-type": f"multipart/form-data; boundary={BOUNDARY}",
    }

    async def call() -> httpx2.Response:
        async with s.emu.http_client() as http:
            response = await http.post("/v1/files", headers=headers, content=_MALFORMED[form].encode())
            await response.aread()
            return response

    s.raw = s.runner.run(call())


@then('the emulator\'s raw answer mentions "{text}"')
def step_raw_mentions(context: Context, text: str) -> None:
    response = emulator(context).raw
    assert text in response.json()["error"]["message"], response.text


# -- metadata, deletion, listing -------------------------------------------------------------------------------------


@when("I retrieve the emulator file's metadata with the files beta")
def step_retrieve_beta(context: Context) -> None:
    s = emulator(context)
    file_id = _current_file(context)
    _remember(context, s.run(lambda: s.sdk.beta.files.with_raw_response.retrieve_metadata(file_id, betas=[FILES_BETA])))


@when("I retrieve the emulator file's metadata")
def step_retrieve(context: Context) -> None:
    s = emulator(context)
    file_id = _current_file(context)
    _remember(context, s.run(lambda: s.sdk.files.with_raw_response.retrieve_metadata(file_id)))


@then('the emulator file is described as "{name}", "{mime}", {size:d} bytes, {downloadable}, {expiry}')
def step_described(context: Context, name: str, mime: str, size: int, downloadable: str, expiry: str) -> None:
    s = emulator(context)
    assert s.error is None, s.error
    if getattr(context, "file_json", {}).get("id") != _current_file(context):
        # A file a tool wrote: read its description the way the API serves it.
        step_retrieve(context)
    data = context.file_json
    assert data["id"] == _current_file(context), data
    assert data["id"].startswith("file_"), data
    found = (data["type"], data["filename"], data["mime_type"], data["size_bytes"], data["downloadable"])
    assert found == ("file", name, mime, size, downloadable == "downloadable"), data
    created = datetime.datetime.fromisoformat(data["created_at"])
    if expiry == "without expires_at":
        assert "expires_at" not in data, data
    elif expiry == "expiring never":
        assert "expires_at" in data, data
        assert data["expires_at"] is None, data
    else:
        seconds = int(expiry.removeprefix("expiring ").removesuffix(" seconds after its creation"))
        assert datetime.datetime.fromisoformat(data["expires_at"]) - created == datetime.timedelta(seconds=seconds)
    keys = {"id", "type", "filename", "mime_type", "size_bytes", "created_at", "downloadable", "expires_at"}
    assert set(data) <= keys, data


@then('the emulator stored the file as "{stored:Q}" of type "{mime}"')
def step_stored(context: Context, stored: str, mime: str) -> None:
    data = context.file_json
    assert (data["filename"], data["mime_type"]) == (stored, mime), data


@when("I delete the emulator file")
def step_delete(context: Context) -> None:
    s = emulator(context)
    file_id = _current_file(context)
    s.reply = s.run(lambda: s.sdk.files.delete(file_id))


@then("the emulator answered that the file was deleted")
def step_deleted(context: Context) -> None:
    s = emulator(context)
    assert s.error is None, s.error
    assert (s.reply.id, s.reply.type) == (_current_file(context), "file_deleted"), s.reply


def _nth(context: Context, ordinal: str) -> str:
    return _uploads(context)[int(ordinal.rstrip("stndrh")) - 1]


@when("I list the emulator files {size:d} at a time")
def step_list_all(context: Context, size: int) -> None:
    s = emulator(context)

    async def walk() -> list[str]:
        return [file.id async for file in s.sdk.files.list(limit=size)]

    context.listed = s.run(walk)


@then("the emulator listed all {count:d} files, newest first")
def step_listed_all(context: Context, count: int) -> None:
    assert context.listed == list(reversed(_uploads(context)))
    assert len(context.listed) == count, context.listed


@when("I list the emulator files with the ids of the {first}, {second} and {third} uploads and an unknown one")
def step_list_ids(context: Context, first: str, second: str, third: str) -> None:
    s = emulator(context)
    ids = [_nth(context, ordinal) for ordinal in (first, second, third)] + ["file_01Unknown"]
    context.page = s.run(lambda: s.sdk.files.list(ids=ids))


@then("the emulator listed the {first}, {second} and {third} uploads, on a single page")
def step_listed_ids(context: Context, first: str, second: str, third: str) -> None:
    page = context.page
    assert [file.id for file in page.data] == [_nth(context, ordinal) for ordinal in (first, second, third)], page
    assert page.next_page is None, page


def _beta_list(context: Context, query: str) -> None:
    s = emulator(context)
    headers = {"anthropic-beta": FILES_BETA}
    response = s.run(lambda: s.sdk.get(f"/v1/files?{query}", cast_to=httpx2.Response, options={"headers": headers}))
    context.page = response.json() if response is not None else None


@when("I list one page of {size:d} emulator files with the files beta")
def step_beta_page(context: Context, size: int) -> None:
    _beta_list(context, f"limit={size}")


@when("I list one page of {size:d} emulator files with the files beta, {where} the {ordinal} upload")
def step_beta_page_cursor(context: Context, size: int, where: str, ordinal: str) -> None:
    _beta_list(context, f"limit={size}&{where}_id={_nth(context, ordinal)}")


def _check_beta_page(context: Context, ordinals: list[str], more: bool) -> None:
    page = context.page
    ids = [_nth(context, ordinal) for ordinal in ordinals]
    assert [file["id"] for file in page["data"]] == ids, page
    assert "expires_at" not in page["data"][0] if ids else True, page
    assert (page["has_more"], page["first_id"], page["last_id"]) == (
        more,
        ids[0] if ids else None,
        ids[-1] if ids else None,
    ), page


@then("the emulator file page holds the {first} and {second} uploads and has more")
def step_beta_page_two(context: Context, first: str, second: str) -> None:
    _check_beta_page(context, [first, second], True)


@then("the emulator file page holds the {first}, {second} and {third} uploads and has no more")
def step_beta_page_three(context: Context, first: str, second: str, third: str) -> None:
    _check_beta_page(context, [first, second, third], False)


@then("the emulator file page is empty and has no more")
def step_beta_page_empty(context: Context) -> None:
    _check_beta_page(context, [], False)


@when('I list the emulator files with the query "{query}" {header}')
def step_list_query(context: Context, query: str, header: str) -> None:
    s = emulator(context)
    if query == "101 ids":
        query = "&".join(f"ids[]=file_{index}" for index in range(101))
    query = query.replace("FIRST", _uploads(context)[0])
    headers = {"anthropic-beta": FILES_BETA} if header == "with the beta header" else {}
    s.run(lambda: s.sdk.get(f"/v1/files?{query}", cast_to=httpx2.Response, options={"headers": headers}))


# -- downloads -------------------------------------------------------------------------------------------------------


@when('I download the emulator file "{file_id}"')
def step_download_id(context: Context, file_id: str) -> None:
    s = emulator(context)

    async def download() -> Any:
        response = await s.sdk.files.download(file_id)
        return (await response.read(), response.http_response.headers.get("content-type"))

    context.download = s.run(download)


@when("I download the emulator file")
def step_download(context: Context) -> None:
    step_download_id(context, _current_file(context))


@then('the emulator served "{text}" as "{content_type}"')
def step_served(context: Context, text: str, content_type: str) -> None:
    s = emulator(context)
    assert s.error is None, s.error
    content, served_type = context.download
    assert content == text.replace("\\n", "\n").encode(), content
    assert served_type == content_type, served_type


@then('the emulator refused the download with {exception}, status {status:d} and error code "{code}"')
def step_refused_download(context: Context, exception: str, status: int, code: str) -> None:
    error = emulator(context).error
    assert isinstance(error, anthropic.APIStatusError), error
    assert (type(error).__name__, error.status_code, error.error_code) == (exception, status, code), error
    body = error.body
    assert isinstance(body, dict), body
    assert body["error"]["details"] == {"error_code": code}, body
    assert body["request_id"] == error.request_id, body


# -- messages and batches reading files ------------------------------------------------------------------------------


def _source(context: Context) -> dict[str, Any]:
    return {"type": "file", "file_id": _current_file(context)}


def _holding(reference: str, source: dict[str, Any]) -> dict[str, Any]:
    """The block that holds the file as `reference` says, through `source`."""
    if reference.endswith("as a document with a stray key"):
        return {"type": "document", "source": {**source, "name": "tides.txt"}}
    if reference.endswith("as a document"):
        return {"type": "document", "source": source}
    if reference.endswith("as an image"):
        return {"type": "image", "source": source}
    if reference.endswith("as an image in custom content"):
        content = [{"type": "text", "text": "A chart:"}, {"type": "image", "source": source}]
        return {"type": "document", "source": {"type": "content", "content": content}}
    assert reference.endswith("in a tool result"), reference
    return {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "image", "source": source}]}


def _message(reference: str, source: dict[str, Any]) -> dict[str, Any]:
    """A request whose last user turn holds the block, then a question; a tool result comes after its call."""
    block = _holding(reference, source)
    question = {"type": "text", "text": "What does it say?"}
    if block["type"] != "tool_result":
        return {"model": MODEL, "max_tokens": 1024, "messages": [{"role": "user", "content": [block, question]}]}
    call = {"type": "tool_use", "id": "t1", "name": "chart", "input": {}}
    turns = [
        {"role": "user", "content": "Draw the chart."},
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [block, question]},
    ]
    tools = [{"name": "chart", "input_schema": {"type": "object"}}]
    return {"model": MODEL, "max_tokens": 1024, "messages": turns, "tools": tools}


def _send(context: Context, params: dict[str, Any]) -> Any:
    s = emulator(context)
    s.params = params
    s.previous = s.reply
    s.reply = s.run(lambda: s.sdk.post("/v1/messages", cast_to=anthropic.types.Message, body=params))
    return s.reply


@when("I send the emulator a message holding {reference}")
def step_send_holding(context: Context, reference: str) -> None:
    if reference.startswith('the file id "'):
        source: dict[str, Any] = {"type": "file", "file_id": reference.split('"')[1]}
    elif reference == "a file source whose id is a number":
        source, reference = {"type": "file", "file_id": 42}, "the file as a document"
    else:
        source = _source(context)
    context.file_reply = _send(context, _message(reference, source))
    context.file_reference = reference


@when("I send the emulator the same message with the file's content inline")
def step_send_inline(context: Context) -> None:
    _, content_type, content = context.file_entry
    if content_type == "text/plain":
        source = {"type": "text", "media_type": "text/plain", "data": content.decode()}
    else:
        source = {"type": "base64", "media_type": content_type, "data": _b64(content)}
    _send(context, _message(context.file_reference, source))


@then("both emulator replies counted the same input tokens")
def step_same_tokens(context: Context) -> None:
    s = emulator(context)
    assert s.error is None, s.error
    by_file, inline = s.previous.usage.input_tokens, s.reply.usage.input_tokens
    assert by_file == inline > 0, (by_file, inline)


@when("I count the emulator tokens of the message holding the file as {block}")
def step_count_holding(context: Context, block: str) -> None:
    s = emulator(context)
    params = _message(f"the file as {block}", _source(context))
    params.pop("max_tokens")
    counted = s.run(lambda: s.sdk.messages.count_tokens(**params))
    assert s.error is None, s.error
    context.token_count = counted.input_tokens


@then("the emulator token count equals the input of the reply holding the file")
def step_count_equals(context: Context) -> None:
    assert context.token_count == context.file_reply.usage.input_tokens, (context.token_count, context.file_reply)


@when('I ask the emulator "{question}" about the file, with citations')
def step_ask_cited(context: Context, question: str) -> None:
    document = {"type": "document", "source": _source(context), "citations": {"enabled": True}}
    text = {"type": "text", "text": question}
    _send(context, {"model": MODEL, "max_tokens": 1024, "messages": [{"role": "user", "content": [document, text]}]})


def _quotes_citing(message: Any, text: str, file_id: str) -> None:
    quoted = [block for block in message.content if block.type == "text" and block.citations]
    assert quoted, message.content
    assert quoted[0].text.strip() == text, quoted[0]
    citation = quoted[0].citations[0]
    assert (citation.type, citation.cited_text.strip(), citation.file_id) == ("char_location", text, file_id), citation


@then('the emulator reply quotes "{text}" citing the file')
def step_reply_quotes(context: Context, text: str) -> None:
    s = emulator(context)
    assert s.error is None, s.error
    _quotes_citing(s.reply, text, _current_file(context))


@when('I create an emulator batch asking "{question}" about the file, and about "{missing}"')
def step_batch_files(context: Context, question: str, missing: str) -> None:
    s = emulator(context)

    def asking(file_id: str) -> dict[str, Any]:
        document = {"type": "document", "source": {"type": "file", "file_id": file_id}, "citations": {"enabled": True}}
        content = [document, {"type": "text", "text": question}]
        return {"model": MODEL, "max_tokens": 1024, "messages": [{"role": "user", "content": content}]}

    requests = [
        {"custom_id": "uploaded", "params": asking(_current_file(context))},
        {"custom_id": "missing", "params": asking(missing)},
    ]
    batch = s.run(lambda: s.sdk.messages.batches.create(requests=requests))
    assert batch is not None, s.error
    s.batch = batch
    s.batch_ids.append(batch.id)
    context.batch_file = _current_file(context)


@then('the emulator result "{custom_id}" quotes "{text}" citing the first file')
def step_result_quotes_again(context: Context, custom_id: str, text: str) -> None:
    """The results as the emulator serves them now (after a restart, say), not as they were fetched before."""
    context.execute_steps("When I fetch the emulator batch results")
    step_result_quotes(context, custom_id, text)


@then('the emulator result "{custom_id}" quotes "{text}" citing the file')
def step_result_quotes(context: Context, custom_id: str, text: str) -> None:
    s = emulator(context)
    assert s.error is None, s.error
    result = s.results[custom_id]
    assert result.type == "succeeded", result
    _quotes_citing(result.message, text, context.batch_file)
