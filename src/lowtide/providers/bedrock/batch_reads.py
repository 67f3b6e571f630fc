"""What a rebuild reads of a Bedrock job (`lowtide ledger rebuild`): its records as its input object still holds them
(each record's `modelInput` given back the `modelId` the job's input leaves out, so that it is the body the ledger
stored), and the record id of its output's first line. The S3 reads are the backend's."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

from lowtide.providers import BatchCodec, UnreadableLine, read_line

__all__ = ["first_record_id", "job_inputs"]

Read = Callable[[str, str], Awaitable[bytes | None]]
"""The backend's read of an S3 object (bucket, key), whole; None when there is no such object."""


def _s3_parts(uri: str) -> tuple[str, str]:
    bucket, _, key = uri.removeprefix("s3://").partition("/")
    return bucket, key


async def job_inputs(
    read: Read, codec: BatchCodec, input_uri: str, model: str, handle: Callable[[str, Mapping[str, Any]], None]
) -> bool:
    """Feed `handle` each record of the job's input object (`input_uri`) with `model` put back; False when the object
    is gone (lowtide deletes it once the answers are stored)."""
    if not input_uri:
        return False
    data = await read(*_s3_parts(input_uri))
    if data is None:
        return False
    for raw in data.splitlines():
        if not raw.strip():
            continue
        line = read_line(raw)
        if isinstance(line, UnreadableLine):
            continue
        body = line.get("modelInput")
        record = (
            {**line, "modelInput": {**cast("Mapping[str, Any]", body), "modelId": model}}
            if isinstance(body, dict)
            else line
        )
        decoded = codec.decode_input(record)
        if decoded is not None:
            handle(*decoded)
    return True


async def first_record_id(read: Read, codec: BatchCodec, bucket: str, output_key: str) -> str | None:
    """The record id of the first line of a job's output object; None when it has none (yet, or any more)."""
    data = await read(bucket, output_key)
    for raw in (data or b"").splitlines():
        if raw.strip():
            line = read_line(raw)
            return line.custom_id if isinstance(line, UnreadableLine) else codec.custom_id_of(line)
    return None
