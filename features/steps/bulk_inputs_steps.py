"""Steps for bulk inputs: files turned into content blocks, JSONL and CSV loaded into jobs, and what is refused.

Every scenario works in a folder of its own, which is also the working directory while lowtide loads or builds
anything, so that error messages name files as a user would write them. `{folder}` in expected text stands for it.
"""

from __future__ import annotations

import ast
import base64
import contextlib
import io
import json
import os
import re
import socket
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from _office_files import MAKERS, encrypted_copy
from _support import world
from pydantic import ValidationError
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.bulk import (
    FileInfo,
    InputError,
    Job,
    check_jobs,
    file_block,
    inspect_file,
    job_messages,
    load_csv,
    load_csv_stream,
    load_jsonl,
    load_jsonl_stream,
)


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    bulk_inputs: Inputs


T = TypeVar("T")

# First bytes of each kind, then bytes of every value, so that base64 round trips are checked on binary data.
_PAYLOAD = bytes(range(256)) * 4
_SAMPLES = {
    "PDF": b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj <<>> endobj\n" + _PAYLOAD + b"\n%%EOF\n",
    "PNG image": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + _PAYLOAD,
    "JPEG image": b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + _PAYLOAD,
    "GIF image": b"GIF89a\x01\x00\x01\x00" + _PAYLOAD,
    "WebP image": b"RIFF\x24\x04\x00\x00WEBPVP8 " + _PAYLOAD,
}
_KIND = r"an? (?P<kind>PDF|PNG image|JPEG image|GIF image|WebP image)(?: of (?P<size>[\d.]+) (?P<unit>MB|bytes))?"


@dataclass
class Inputs:
    """What a scenario of this feature made and got back."""

    folder: Path
    block: dict[str, Any] | None = None
    jobs: list[Job] = field(default_factory=list[Job])
    messages: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    info: FileInfo | None = None
    made_error: str | None = None
    value: Any = None


def inputs(context: Context) -> Inputs:
    current = getattr(context, "bulk_inputs", None)
    if not isinstance(current, Inputs):
        folder = world(context).path("")
        folder.mkdir(parents=True, exist_ok=True)
        current = Inputs(folder=folder)
        context.bulk_inputs = current
    return current


@contextlib.contextmanager
def inside(folder: Path) -> Iterator[None]:
    """The scenario's folder as the working directory, as a user runs lowtide from the folder of their inputs."""
    previous = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(previous)


def attempt(context: Context, action: Callable[[], T]) -> T | None:
    """Run `action` in the scenario's folder, keeping the lowtide error it raises for the Then steps."""
    state = inputs(context)
    with inside(state.folder):
        return world(context).attempt(action)


def expand(state: Inputs, text: str) -> str:
    return text.replace("{folder}", str(state.folder))


def make_file(path: Path, content: str) -> None:
    """Make `path` hold `content`, as a feature file describes it: "a PDF", "a PNG image of 6 MB", "nothing", ..."""
    if content == "nothing":
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    if content == "a folder":
        path.mkdir()
        return
    if content == "no bytes":
        path.write_bytes(b"")
        return
    if match := re.fullmatch(_KIND, content):
        sample = _SAMPLES[match["kind"]]
        if match["size"] is None:
            path.write_bytes(sample)
        else:
            scale = 1024 * 1024 if match["unit"] == "MB" else 1
            _sparse(path, sample, int(float(match["size"]) * scale))
        return
    if match := re.fullmatch(r'the text "(.*)"', content):
        path.write_text(match[1], encoding="utf-8")
        return
    if match := re.fullmatch(r"text of (\d+) MB", content):
        _sparse(path, b"a" * 4096, int(match[1]) * 1024 * 1024)
        return
    if match := re.fullmatch(r"text of (\d+) bytes, then the bytes (b'.*')", content):
        path.write_bytes(b"a" * int(match[1]) + ast.literal_eval(match[2]))
        return
    if content == "a socket":
        with socket.socket(socket.AF_UNIX) as listener:
            listener.bind(str(path))
        return
    if match := re.fullmatch(r"a link to (/.*)", content):
        assert Path(match[1]).exists(), f"this system has no {match[1]}"
        path.symlink_to(match[1])
        return
    if match := re.fullmatch(r"the bytes (b'.*')", content):
        path.write_bytes(ast.literal_eval(match[1]))
        return
    if content in MAKERS:
        MAKERS[content](path)
        return
    if (match := re.fullmatch(r'(.+), protected by the password "(.*)"', content)) and match[1] in MAKERS:
        plain = path.with_name(f"unprotected-{path.name}")
        MAKERS[match[1]](plain)
        encrypted_copy(plain, path, match[2])
        return
    raise AssertionError(f"no way to make a file that is {content!r}")


def _sparse(path: Path, head: bytes, size: int) -> None:
    """A file of `size` bytes that starts with `head`, without writing the rest (the file system fills in zeros)."""
    with path.open("wb") as handle:
        handle.write(head[:size])
        handle.truncate(size)


# -- files -----------------------------------------------------------------------------------------------------------


@given('"{name}" in the input folder is {content}')
def step_make_file(context: Context, name: str, content: str) -> None:
    make_file(inputs(context).folder / name, content)


@when('"{name}" in the input folder is replaced by {content}')
def step_replace_file(context: Context, name: str, content: str) -> None:
    make_file(inputs(context).folder / name, content)


@given('the input file "{name}" holds:')
def step_input_text(context: Context, name: str) -> None:
    state = inputs(context)
    path = state.folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes((expand(state, context.text) + "\n").encode("utf-8"))


@given('the input file "{name}" holds, after a byte order mark:')
def step_input_text_bom(context: Context, name: str) -> None:
    state = inputs(context)
    path = state.folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\xef\xbb\xbf" + (expand(state, context.text) + "\n").encode("utf-8"))


@given('the input file "{name}" holds, after a byte order mark and with Windows line ends:')
def step_input_text_windows(context: Context, name: str) -> None:
    state = inputs(context)
    text = expand(state, context.text).replace("\n", "\r\n") + "\r\n"
    (state.folder / name).write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))


@given('the input file "{name}" holds the bytes {literal}')
def step_input_bytes(context: Context, name: str, literal: str) -> None:
    (inputs(context).folder / name).write_bytes(ast.literal_eval(literal))


@given('the input file "{name}" holds a good line, then:')
def step_input_good_then(context: Context, name: str) -> None:
    state = inputs(context)
    good = json.dumps({"prompt": "Summarise", "file": "a.pdf", "id": "first"})
    (state.folder / name).write_text(f"{good}\n{expand(state, context.text)}\n", encoding="utf-8")


@given('the input file "{name}" holds {count:d} lines, each asking to summarise "{file}"')
def step_input_many(context: Context, name: str, count: int, file: str) -> None:
    lines = (json.dumps({"prompt": f"Summarise item {i}", "file": file, "id": f"item-{i}"}) for i in range(count))
    (inputs(context).folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")


@given('the input file "{name}" holds a header of {size:d} characters')
def step_input_big_header(context: Context, name: str, size: int) -> None:
    (inputs(context).folder / name).write_text(f"{'x' * size}\nrow\n", encoding="utf-8")


@given('the input file "{name}" holds a header "{column}" and one cell of {size:d} characters')
def step_input_big_cell(context: Context, name: str, column: str, size: int) -> None:
    (inputs(context).folder / name).write_text(f"{column}\n{'x' * size}\n", encoding="utf-8")


# -- actions ---------------------------------------------------------------------------------------------------------


@when('the block for "{name:Q}" is built')
def step_build_block(context: Context, name: str) -> None:
    state = inputs(context)
    state.block = attempt(context, lambda: file_block(name, citations=False))


@when('the block for "{name:Q}" is built with citations')
def step_build_block_citations(context: Context, name: str) -> None:
    state = inputs(context)
    state.block = attempt(context, lambda: file_block(name, citations=True))


@when('the block for "{name:Q}" is built with the title "{title:Q}"')
def step_build_block_title(context: Context, name: str, title: str) -> None:
    state = inputs(context)
    state.block = attempt(context, lambda: file_block(name, citations=False, title=title))


@when("the block for a file whose name is {length:d} characters long is built")
def step_build_block_long_name(context: Context, length: int) -> None:
    state = inputs(context)
    state.block = attempt(context, lambda: file_block("x" * (length - 4) + ".pdf", citations=False))


@when("the jobs are loaded from a file whose name is {length:d} characters long")
def step_load_long_name(context: Context, length: int) -> None:
    state = inputs(context)
    state.jobs = attempt(context, lambda: load_jsonl("x" * (length - 6) + ".jsonl")) or []


@when('the jobs are loaded from "{name:Q}"')
def step_load_jsonl(context: Context, name: str) -> None:
    state = inputs(context)
    state.jobs = attempt(context, lambda: load_jsonl(name)) or []


@when('the jobs are loaded from the CSV "{name:Q}" with the template "{template:Q}"')
def step_load_csv(context: Context, name: str, template: str) -> None:
    state = inputs(context)
    state.jobs = attempt(context, lambda: load_csv(name, template)) or []


@when(
    'the jobs are loaded from the CSV "{name:Q}" with the template "{template:Q}", '
    'file column "{file_column:Q}" and id column "{id_column:Q}"'
)
def step_load_csv_columns(context: Context, name: str, template: str, file_column: str, id_column: str) -> None:
    state = inputs(context)
    state.jobs = attempt(context, lambda: load_csv(name, template, file_column=file_column, id_column=id_column)) or []


def stream_of(kind: str, content: str) -> Iterable[str] | Iterable[bytes]:
    """A stream as a feature describes it: a "text" list of lines, a "binary" stream, or a "UTF-8" text stream over
    bytes (which decodes as it reads); holding "the lines '...' and '...'", "the bytes b'...'" or "nothing"."""
    if content == "nothing":
        data = b""
    elif match := re.fullmatch(r"the bytes (b'.*')", content):
        data = ast.literal_eval(match[1])
    else:
        match = re.fullmatch(r"the lines ('.*') and ('.*')", content)
        assert match is not None, f"no way to make a stream holding {content!r}"
        lines: list[str] = [ast.literal_eval(match[1]), ast.literal_eval(match[2])]
        assert kind == "text", kind
        return lines
    return _stream(kind, data)


def _stream(kind: str, data: bytes) -> Iterable[str] | Iterable[bytes]:
    match kind:
        case "text":
            return io.StringIO(data.decode("utf-8"))
        case "binary":
            return io.BytesIO(data)
        case "UTF-8":
            return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
        case _:
            raise AssertionError(f"no stream of kind {kind!r}")


@when('the jobs are loaded from a text stream named "{name}" holding, after a byte order mark:')
def step_load_text_stream(context: Context, name: str) -> None:
    state = inputs(context)
    stream = io.StringIO("\ufeff" + expand(state, context.text) + "\n")
    state.jobs = attempt(context, lambda: load_jsonl_stream(stream, name=name)) or []


@when('the jobs are loaded from a binary stream named "{name}" holding:')
def step_load_binary_stream(context: Context, name: str) -> None:
    state = inputs(context)
    stream = io.BytesIO((expand(state, context.text) + "\n").encode("utf-8"))
    state.jobs = attempt(context, lambda: load_jsonl_stream(stream, name=name, base=state.folder)) or []


@when('the jobs are loaded from a UTF-8 stream named "{name}" holding {count:d} good lines, then the bytes {literal}')
def step_load_stream_bad_late(context: Context, name: str, count: int, literal: str) -> None:
    state = inputs(context)
    good = "".join(json.dumps({"prompt": f"Review {n}"}) + "\n" for n in range(count)).encode("utf-8")
    stream = _stream("UTF-8", good + ast.literal_eval(literal))
    state.value = count
    state.jobs = attempt(context, lambda: load_jsonl_stream(stream, name=name)) or []


@when('the jobs are loaded from a {kind} stream named "{name}" holding {content}')
def step_load_stream(context: Context, kind: str, name: str, content: str) -> None:
    state = inputs(context)
    stream = stream_of(kind, content)
    state.jobs = attempt(context, lambda: load_jsonl_stream(stream, name=name)) or []


@when(
    'the jobs are loaded from the CSV {kind} stream named "{name}", with files relative to "{base}", the template'
    ' "{template}", file column "{file_column}" and id column "{id_column}", holding:'
)
def step_load_csv_stream(
    context: Context, kind: str, name: str, base: str, template: str, file_column: str, id_column: str
) -> None:
    state = inputs(context)
    stream = _stream(kind, (context.text + "\n").encode("utf-8"))
    options: dict[str, Any] = {"name": name, "base": state.folder / base, "file_column": file_column}
    state.jobs = attempt(context, lambda: load_csv_stream(stream, template, id_column=id_column, **options)) or []


@when('the jobs are loaded from the CSV {kind} stream named "{name}" with the template "{template}", holding {content}')
def step_load_csv_stream_refused(context: Context, kind: str, name: str, template: str, content: str) -> None:
    state = inputs(context)
    stream = stream_of(kind, content)
    state.jobs = attempt(context, lambda: load_csv_stream(stream, template, name=name)) or []


@when("the messages for job {index:d} are built, with citations by default")
def step_messages_citing(context: Context, index: int) -> None:
    state = inputs(context)
    state.messages = attempt(context, lambda: job_messages(state.jobs[index], citations=True)) or []


@when("the messages for job {index:d} are built, without citations by default")
def step_messages_plain(context: Context, index: int) -> None:
    state = inputs(context)
    state.messages = attempt(context, lambda: job_messages(state.jobs[index], citations=False)) or []


@when("these jobs made in code are checked:")
def step_check_jobs(context: Context) -> None:
    jobs = [
        Job(prompt=row["prompt"], file=Path(row["file"]) if row["file"] else None, id=row["id"] or None)
        for row in context.table
    ]
    attempt(context, lambda: check_jobs(jobs))


@when('a job is made in code with the prompt "{prompt:Q}" and the overrides {overrides}')
def step_make_job(context: Context, prompt: str, overrides: str) -> None:
    state = inputs(context)
    try:
        Job(prompt=prompt, overrides=json.loads(overrides))
    except ValidationError as exc:
        state.made_error = str(exc)


@when('"{name:Q}" is inspected')
def step_inspect(context: Context, name: str) -> None:
    state = inputs(context)
    state.info = attempt(context, lambda: inspect_file(name))


# -- outcomes --------------------------------------------------------------------------------------------------------


def the_block(context: Context) -> dict[str, Any]:
    world(context).succeeded()
    block = inputs(context).block
    assert block is not None, "no block was built"
    return block


def check_base64(state: Inputs, source: dict[str, Any], name: str, media_type: str) -> None:
    assert source["type"] == "base64", f"the source is {source['type']!r}, not base64"
    assert source["media_type"] == media_type, f"the media type is {source['media_type']!r}, not {media_type!r}"
    sent = base64.b64decode(source["data"], validate=True)
    assert sent == (state.folder / name).read_bytes(), f"the block's data is not the bytes of {name!r}"


@then('the block is a document titled "{title}", holding the bytes of "{name}" in base64 as "{media_type}"')
def step_document_block(context: Context, title: str, name: str, media_type: str) -> None:
    block = the_block(context)
    assert block["type"] == "document", f"the block is a {block['type']!r}"
    assert block["title"] == title, f"the block is titled {block['title']!r}"
    check_base64(inputs(context), block["source"], name, media_type)


@then('the block is an image holding the bytes of "{name}" in base64 as "{media_type}"')
def step_image_block(context: Context, name: str, media_type: str) -> None:
    block = the_block(context)
    assert block["type"] == "image", f"the block is a {block['type']!r}"
    check_base64(inputs(context), block["source"], name, media_type)


@then('the block is a text document titled "{title}" holding "{text}"')
def step_text_block(context: Context, title: str, text: str) -> None:
    block = the_block(context)
    expected = {"type": "text", "media_type": "text/plain", "data": text}
    assert block["type"] == "document", f"the block is a {block['type']!r}"
    assert block["title"] == title, f"the block is titled {block['title']!r}"
    assert block["source"] == expected, f"the source is {block['source']!r}"


@then("the block asks for citations")
def step_block_cites(context: Context) -> None:
    block = the_block(context)
    assert block.get("citations") == {"enabled": True}, f"the block is {block!r}"


@then("the block does not ask for citations")
def step_block_does_not_cite(context: Context) -> None:
    block = the_block(context)
    assert "citations" not in block, f"the block has citations: {block['citations']!r}"


@then("the block has no title and does not ask for citations")
def step_block_bare(context: Context) -> None:
    block = the_block(context)
    assert set(block) == {"type", "source"}, f"the block has the keys {sorted(block)}"


@then("the block's base64 data is {size:d} bytes long")
def step_block_size(context: Context, size: int) -> None:
    data = the_block(context)["source"]["data"]
    assert len(data) == size, f"the base64 data is {len(data)} bytes long"


@then("the input is refused with:")
def step_refused(context: Context) -> None:
    error = world(context).failure()
    assert type(error) is InputError, f"expected an InputError, got {type(error).__name__}: {error}"
    expected = expand(inputs(context), context.text)
    assert str(error) == expected, f"the message is:\n{error}\n\nnot:\n{expected}"


@then('the input error ends with "{text}"')
def step_refused_ending(context: Context, text: str) -> None:
    error = world(context).failure()
    assert type(error) is InputError, f"expected an InputError, got {type(error).__name__}: {error}"
    assert str(error).endswith(text), f"the message is:\n{error}"


@then("the input error counts {total:d} problems and shows {shown:d}")
def step_refused_counts(context: Context, total: int, shown: int) -> None:
    error = world(context).failure()
    assert isinstance(error, InputError), f"expected an InputError, got {type(error).__name__}"
    assert (error.total, len(error.problems)) == (total, shown), f"{error.total} problems, {len(error.problems)} shown"
    assert all(problem.line is not None for problem in error.problems), "a problem has no line"


def shown_job(job: Job, column: str, folder: Path) -> str:
    match column:
        case "id":
            return job.id or ""
        case "prompt":
            return (job.prompt or "").replace("\n", "\\n")
        case "messages":
            turns = len(job.messages or [])
            return f"{turns} turn{'s' * (turns != 1)}" if job.messages else ""
        case "file":
            return job.file.relative_to(folder).as_posix() if job.file else ""
        case "citations":
            return "" if job.citations is None else str(job.citations).lower()
        case "overrides":
            return json.dumps(job.overrides, sort_keys=True) if job.overrides else ""
        case _:
            raise AssertionError(f"no job column {column!r}")


@then("the jobs are:")
def step_jobs_are(context: Context) -> None:
    world(context).succeeded()
    state = inputs(context)
    actual = [[shown_job(job, column, state.folder) for column in context.table.headings] for job in state.jobs]
    expected = [list(row.cells) for row in context.table]
    assert actual == expected, f"the jobs are:\n{json.dumps(actual, indent=1)}"
    for job in state.jobs:
        assert job.file is None or job.file.is_absolute(), f"the job's file {job.file} is not absolute"


@then('{count:d} jobs are loaded, each holding the path of "{name}" and no bytes')
def step_many_jobs(context: Context, count: int, name: str) -> None:
    world(context).succeeded()
    state = inputs(context)
    assert len(state.jobs) == count, f"{len(state.jobs)} jobs were loaded"
    path = state.folder / name
    for job in state.jobs:
        assert job.file == path, f"a job holds {job.file!r}"
        assert not any(isinstance(value, bytes | bytearray | memoryview) for value in vars(job).values())
    # A job is a few short strings and a path: nothing near the size of the file it names.
    held = sum(len(job.model_dump_json()) for job in state.jobs)
    assert held < count * 200, f"the jobs hold {held} bytes of data"


@then("1 job is loaded, whose prompt is {size:d} characters long")
def step_one_job(context: Context, size: int) -> None:
    world(context).succeeded()
    jobs = inputs(context).jobs
    assert len(jobs) == 1, f"{len(jobs)} jobs were loaded"
    assert len(jobs[0].prompt or "") == size, f"the prompt is {len(jobs[0].prompt or '')} characters long"


@then('the messages are one user turn holding a document block of "{name}", then the text "{text}"')
def step_file_then_text(context: Context, name: str, text: str) -> None:
    world(context).succeeded()
    state = inputs(context)
    [turn] = state.messages
    assert turn["role"] == "user", f"the turn is the {turn['role']}'s"
    document, prompt = turn["content"]
    assert document["type"] == "document", f"the first block is a {document['type']!r}"
    assert document["title"] == Path(name).name, f"the document is titled {document['title']!r}"
    check_base64(state, document["source"], name, "application/pdf")
    assert prompt == {"type": "text", "text": text}, f"the second block is {prompt!r}"


@then("the messages are:")
def step_messages_are(context: Context) -> None:
    world(context).succeeded()
    messages = inputs(context).messages
    assert messages == json.loads(context.text), f"the messages are {json.dumps(messages)}"


def the_document(context: Context) -> dict[str, Any]:
    world(context).succeeded()
    [turn] = inputs(context).messages
    document: dict[str, Any] = turn["content"][0]
    assert document["type"] == "document", f"the first block is a {document['type']!r}"
    return document


@then("the document block asks for citations")
def step_document_cites(context: Context) -> None:
    document = the_document(context)
    assert document.get("citations") == {"enabled": True}, f"the document block is {document!r}"


@then("the document block does not ask for citations")
def step_document_does_not_cite(context: Context) -> None:
    document = the_document(context)
    assert "citations" not in document, f"the document block asks for citations: {document['citations']!r}"


@then("the jobs passed the check")
def step_jobs_passed(context: Context) -> None:
    world(context).succeeded()


@then('making the job failed, saying "{reason}"')
def step_make_failed(context: Context, reason: str) -> None:
    made = inputs(context).made_error
    assert made is not None, "the job was made"
    assert reason in made, f"{reason!r} is not in:\n{made}"


@then('it is a "{kind}" of type "{media_type}" and {size:d} bytes')
def step_inspected(context: Context, kind: str, media_type: str, size: int) -> None:
    world(context).succeeded()
    info = inputs(context).info
    assert info is not None, "nothing was inspected"
    assert (info.kind, info.media_type, info.size) == (kind, media_type, size), f"the file is {info}"


@then("the input is refused, saying it cannot be read as UTF-8 after a line before the bad one:")
def step_refused_after(context: Context) -> None:
    error = world(context).failure()
    assert type(error) is InputError, f"expected an InputError, got {type(error).__name__}: {error}"
    match = re.search(r" after line (\d+):", str(error))
    assert match is not None, f"the message names no line:\n{error}"
    assert 0 < int(match[1]) <= inputs(context).value, f"line {match[1]} is not before the bad line"
    assert str(error) == context.text.replace("{line}", match[1]), f"the message is:\n{error}"
