"""One batch as a careful user writes it with any of the OpenAI-shaped SDKs (`openai`'s `AsyncOpenAI` and
`AsyncAzureOpenAI`, `groq`'s `AsyncGroq`): the JSONL input built, uploaded with `purpose="batch"`, one batch with a
24-hour window, polled until it ends, its output file streamed line by line into a dict of texts. The SDKs share these
calls' names and shapes; each provider's module gives its client, its request URL and body, and how a line's text is
read."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

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
