"""One batch as a careful user writes it with any of the OpenAI-shaped SDKs (`openai`'s `AsyncOpenAI` and
`AsyncAzureOpenAI`, `groq`'s `AsyncGroq`): the JSONL input built, uploaded with `purpose="batch"`, one batch with a
24-hour window, polled until it ends, its output file streamed line by line into a dict of texts. The SDKs share these
calls' names and shapes; each provider's module gives its client, its request URL and body, and how a line's text is
read.

`floor_batch` is the same calls made by the least a durable client must do (`floor.FloorLedger`): the intents
inserted before the upload, the output file read from its bytes, each line decoded once and appended before its answer
is handed out."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from by_hand.floor import FloorLedger, Respond, dumps, kept, loads
from harness import key

ENDED = ("completed", "failed", "expired", "cancelled")


async def one_batch(
    client: Any,
    n: int,
    poll_interval: float,
    *,
    url: str,
    endpoint: str,
    body: Callable[[int], dict[str, object]],
    text_of: Callable[[dict[str, Any]], str],
    content_type: str | None = None,
) -> dict[str, str]:
    """The texts of `n` requests (`body(i)` each, sent to `url`), by custom id, through one batch at `endpoint`."""
    lines = (json.dumps({"custom_id": key(i), "method": "POST", "url": url, "body": body(i)}) for i in range(n))
    data = "\n".join(lines).encode()
    upload = ("input.jsonl", data, content_type) if content_type else ("input.jsonl", data)
    uploaded = await client.files.create(file=upload, purpose="batch")
    assert uploaded.id is not None, uploaded
    batch = await client.batches.create(input_file_id=uploaded.id, endpoint=endpoint, completion_window="24h")
    while batch.status not in ENDED:
        await asyncio.sleep(poll_interval)
        batch = await client.batches.retrieve(batch.id)
    texts: dict[str, str] = {}
    assert batch.output_file_id is not None, batch
    async with client.files.with_streaming_response.content(batch.output_file_id) as response:
        async for text in response.iter_lines():
            if text:
                line = json.loads(text)
                texts[line["custom_id"]] = text_of(line)
    return texts


async def floor_batch(
    client: Any,
    n: int,
    poll_interval: float,
    ledger: Path,
    *,
    url: str,
    endpoint: str,
    body: Callable[[int], dict[str, object]],
    text_of: Callable[[dict[str, Any]], str],
    content_type: str | None = None,
    respond: Respond | None = None,
) -> dict[str, str]:
    """`one_batch`'s calls, durably: every request's intent (its line's body) in one transaction before the upload,
    each output line decoded once (orjson) and appended as received before its answer is handed out (with `respond`,
    each made into its outcome as well: `floor.FloorLedger`)."""
    with FloorLedger(ledger, respond) as durable:
        lines = [kept(dumps({"custom_id": key(i), "method": "POST", "url": url, "body": body(i)})) for i in range(n)]
        durable.intents((key(i), line) for i, line in enumerate(lines))
        data = b"\n".join(lines)
        del lines
        upload = ("input.jsonl", data, content_type) if content_type else ("input.jsonl", data)
        uploaded = await client.files.create(file=upload, purpose="batch")
        del data, upload
        assert uploaded.id is not None, uploaded
        batch = await client.batches.create(input_file_id=uploaded.id, endpoint=endpoint, completion_window="24h")
        durable.created(batch.id)
        while batch.status not in ENDED:
            await asyncio.sleep(poll_interval)
            batch = await client.batches.retrieve(batch.id)
        assert batch.output_file_id is not None, batch
        async with client.files.with_streaming_response.content(batch.output_file_id) as response:
            rest = b""
            async for chunk in response.iter_bytes():
                parts = (rest + chunk).split(b"\n")
                rest = parts.pop()
                for raw in parts:
                    if raw:
                        line = loads(raw)
                        durable.result(line["custom_id"], raw, None if respond else text_of(line), line)
            if rest:
                line = loads(rest)
                durable.result(line["custom_id"], rest, None if respond else text_of(line), line)
        durable.flush()
        return durable.texts
