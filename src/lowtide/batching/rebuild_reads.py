"""What a backend whose batches are JSONL files (an input file, results files) needs to show a rebuild a batch's
requests (`BatchBackend.inputs`) and the custom id of its first result (`BatchBackend.first_custom_id`): the input's
lines read as the results' are (`lines.feed_lines`), each decoded by the codec (`BatchCodec.decode_input`); a file's
first line alone. Neutral: the SDK's download and the backend's retries are given."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from lowtide.batching.backend import BatchCodec, ResultLine, UnreadableLine
from lowtide.batching.lines import Download, FileReader, Handle, feed_lines
from lowtide.errors import NotFoundError

__all__ = ["FirstLine", "first_custom_id_in", "first_line_reader", "input_lines", "read_input"]

Line = ResultLine | UnreadableLine | None
FirstLine = Callable[[str], Awaitable[Line]]
"""A backend's reading of the first line of a file by id (None: the file is empty)."""


def input_lines(codec: BatchCodec, handle: Callable[[str, Mapping[str, Any]], None]) -> Handle:
    """A handler of an input file's lines that feeds `handle` each request's custom id and body (`decode_input`); a
    line the codec does not read as a request of its own is passed over."""

    def take(line: ResultLine | UnreadableLine) -> None:
        if isinstance(line, UnreadableLine):
            return
        decoded = codec.decode_input(line)
        if decoded is not None:
            handle(*decoded)

    return take


def first_line_reader(
    download: Download,
    retrying: Callable[
        [Callable[[], Awaitable[ResultLine | UnreadableLine | None]]], Awaitable[ResultLine | UnreadableLine | None]
    ],
) -> FirstLine:
    """The first line of a file, streamed and the download left there (a results file of 100,000 answers read for
    one custom id)."""

    async def read(file_id: str) -> Line:
        async def attempt() -> Line:
            first: list[ResultLine | UnreadableLine] = []
            async with download(file_id) as response:
                await feed_lines(response.iter_bytes(), first.append, source=f"file {file_id}", first_only=True)
            return first[0] if first else None

        return await retrying(attempt)

    return read


async def read_input(
    read: FileReader, codec: BatchCodec, file_id: str | None, handle: Callable[[str, Mapping[str, Any]], None]
) -> bool:
    """Feed `handle` the requests of the input file `file_id` (`input_lines`); False when there is none (deleted once
    the answers were stored, or past the API's retention)."""
    if not file_id:
        return False
    try:
        await read(file_id, input_lines(codec, handle))
    except NotFoundError:
        return False
    return True


async def first_custom_id_in(read: FirstLine, codec: BatchCodec, files: Iterable[str | None]) -> str | None:
    """The custom id of the first line of the first of `files` (an output file, then an error file) that has one;
    None when none has (or they are gone)."""
    for file_id in files:
        if not file_id:
            continue
        try:
            line = await read(file_id)
        except NotFoundError:
            continue
        if line is None:
            continue
        return line.custom_id if isinstance(line, UnreadableLine) else codec.custom_id_of(line)
    return None
