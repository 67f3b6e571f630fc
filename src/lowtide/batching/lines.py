"""A results file's lines, split from the bytes as they arrive and each read once: what every backend that downloads a
JSONL file of results needs, at the pace of thousands of lines a second.

A whole line (its newline came) that is not a JSON object lowtide can keep (not JSON, not UTF-8, a string with an
unpaired surrogate) is an `UnreadableLine`, handed on like any other: its request gets an error that keeps it, and
the lines after it are read as usual. A last line without its newline that cannot be read is a download cut short
(`json.JSONDecodeError`), which the backend fetches again.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable
from contextlib import AbstractAsyncContextManager
from typing import Protocol, cast

import orjson

from lowtide.batching.backend import ResultLine, UnreadableLine
from lowtide.core.exact_json import orjson_exact, read_exactly
from lowtide.errors import APIConnectionError

__all__ = [
    "Download",
    "FileReader",
    "decoded_line",
    "feed_lines",
    "file_reader",
    "read_files",
    "read_line",
    "split_lines",
]

log = logging.getLogger(__name__)

Handle = Callable[[ResultLine | UnreadableLine], None]
FileReader = Callable[[str, Handle], Awaitable[int]]
"""A backend's reading of one results file: `(file_id, handle)` feeds its lines to `handle` (`feed_lines`), a
download broken off fetched again (the backend's `retrying`), and returns how many were read."""


async def split_lines(chunks: AsyncIterable[bytes]) -> AsyncGenerator[tuple[bytes, bool]]:
    """The non-blank lines of a stream of byte chunks, a line cut across chunks joined first, each with whether it
    was whole (its newline came: only the last may lack one). No line is decoded as text: `read_line` reads the
    bytes."""
    rest = b""
    async for chunk in chunks:
        parts, rest = _cut(rest, chunk)
        for part in parts:
            if part.strip():
                yield part, True
    if rest.strip():
        yield rest, False


def _cut(rest: bytes, chunk: bytes) -> tuple[list[bytes], bytes]:
    """The whole lines of `rest` (a line cut across chunks) then `chunk`, and what is left of the last one."""
    parts = (rest + chunk).split(b"\n") if rest else chunk.split(b"\n")
    return parts, parts.pop()


async def feed_lines(
    chunks: AsyncIterable[bytes],
    handle: Callable[[ResultLine | UnreadableLine], None],
    *,
    source: str,
    first_only: bool = False,
) -> int:
    """Feed every line of a downloaded results file (or only its first) to `handle`, split and read from its bytes as
    they come; return how many were read. A last line cut short is an `APIConnectionError` naming `source` (the file),
    which the backend's retries fetch again.

    The lines `split_lines` gives, split here in one loop (a line of an async generator costs as much again as its
    split), each whole line read as `read_line` reads it (`_whole_line`)."""
    lines = 0
    rest = b""
    async for chunk in chunks:
        parts, rest = _cut(rest, chunk)
        for part in parts:
            if part.strip():
                lines += 1
                handle(_whole_line(part))
                if first_only:
                    return lines
    if rest.strip():
        try:
            line = read_line(rest, whole=False)
        except json.JSONDecodeError as exc:
            raise APIConnectionError(f"A line of {source} was cut short.") from exc
        lines += 1
        handle(line)
    return lines


def _whole_line(raw: bytes) -> ResultLine | UnreadableLine:
    """`read_line(raw)` of a whole line, its common case (orjson reads a JSON object) without the calls between."""
    if orjson_exact(raw):
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return read_line(raw)
        if type(value) is dict:
            return cast("ResultLine", value)
    return read_line(raw)


class _Streamed(Protocol):
    def iter_bytes(self) -> AsyncIterator[bytes]: ...


Download = Callable[[str], AbstractAsyncContextManager[_Streamed]]
"""An SDK's streamed download of a file by id (`client.files.with_streaming_response.content` in the SDKs of
OpenAI's shape: OpenAI's, Groq's, Together's)."""


def file_reader(download: Download, retrying: Callable[[Callable[[], Awaitable[int]]], Awaitable[int]]) -> FileReader:
    """The `FileReader` of a backend that downloads its results files with `download`, each download broken off
    (a line cut short, a connection lost) fetched again from the start by `retrying` (the backend's)."""

    async def read(file_id: str, handle: Handle) -> int:
        async def attempt() -> int:
            # Split and decoded from the bytes as they come (orjson), never as text: thousands of lines a batch.
            async with download(file_id) as response:
                return await feed_lines(response.iter_bytes(), handle, source=f"file {file_id}")

        return await retrying(attempt)

    return read


async def read_files(
    read: FileReader, files: Iterable[str | None], handle: Handle, *, finished: int, retries: int, batch: str
) -> None:
    """Feed the lines of a batch's results files (its output file, then its error file; a file it has not is None) to
    `handle`. Files that end cleanly with fewer lines than the batch counts `finished` are read again from the start
    (so `handle` sees lines twice: it joins them by custom id), `retries` times at most; after the last, what they
    hold is taken (the API wrote no more: the rest were lost). `batch` names it in the log ("Groq batch b-1")."""
    named = [file_id for file_id in files if file_id]
    for attempt in range(retries + 1):
        lines = 0
        for file_id in named:
            lines += await read(file_id, handle)
        if lines >= finished:
            return
        if attempt == retries:
            log.warning("%s counts %d finished requests; its files hold %d.", batch, finished, lines)
            return
        log.warning("The files of %s ended after %d of %d lines; reading them again.", batch, lines, finished)


def read_line(line: bytes, *, whole: bool = True) -> ResultLine | UnreadableLine:
    """One line of a results file as a JSON object (`decoded_line`), or, when it cannot be read as one, an
    `UnreadableLine` naming its custom id if one can be made out. A last line that did not end with its newline
    (`whole=False`) and cannot be read was cut short: `json.JSONDecodeError`, so that the download is fetched again."""
    try:
        value = decoded_line(line)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError: both ValueErrors
        if not whole:
            if isinstance(exc, json.JSONDecodeError):
                raise
            text = line.decode("utf-8", "replace")
            raise json.JSONDecodeError(f"the line ends mid-character ({exc})", text, len(text)) from exc
        return UnreadableLine(line, _reason(exc), _custom_id_in(line))
    if not isinstance(value, dict):
        return UnreadableLine(line, f"a JSON {type(value).__name__}, not an object", None)
    return value


def decoded_line(line: bytes) -> ResultLine:
    """One line of a results file as JSON (`read_exactly`). `json` would read an unpaired surrogate (`"\\ud800"`) into
    a string no UTF-8 file or ledger can hold: such a line is refused (`ValueError`), as orjson refuses it."""
    value, by_orjson = read_exactly(line)
    if not by_orjson and _SURROGATE_ESCAPE.search(line):
        try:
            json.dumps(value, ensure_ascii=False).encode()
        except UnicodeEncodeError as exc:
            raise ValueError(f"a string holds an unpaired surrogate (\\u{ord(exc.object[exc.start]):04x})") from None
    return cast("ResultLine", value)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8: byte 0x{exc.object[exc.start]:02x} at {exc.start}"
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON: {exc.msg} at character {exc.pos}"
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply"
    return str(exc)


def _custom_id_in(line: bytes) -> str | None:
    """The custom id a line names, read from its bytes: enough to give the error to the right request."""
    found = _CUSTOM_ID.search(line)
    return found.group(1).decode("ascii") if found else None


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
# Custom ids are plain ids (letters, digits, `_`, `-`, `:` for OpenAI's digests): no escapes to undo.
_CUSTOM_ID = re.compile(rb'"custom_id"\s*:\s*"([A-Za-z0-9_:\-]{1,128})"')
