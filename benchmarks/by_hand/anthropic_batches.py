"""Anthropic's Message Batches by hand with the official `anthropic` SDK, the bulk run by hand, and the floor: the
least a durable client must do."""

from __future__ import annotations

import asyncio
import importlib
import time
from pathlib import Path
from typing import Any

from by_hand import BatchTimes, ByHand
from by_hand.floor import FloorLedger, Respond, dumps, store_lines
from harness import API_KEY, MAX_TOKENS, Emulator, epoch, key, prompt

MODEL = "claude-sonnet-5-5"


async def raw_sdk(base_url: str, n: int, poll_interval: float) -> tuple[float, float, dict[str, str]]:
    """What a careful user of the official SDK writes: one create, poll, stream the results into a dict."""
    from anthropic import AsyncAnthropic
    from anthropic.types.messages import MessageBatch

    async def create(client: AsyncAnthropic) -> MessageBatch:
        # The request list lives only as long as the create: it is not held while waiting.
        requests: list[Any] = [
            {
                "custom_id": key(i),
                "params": {
                    "model": MODEL,
                    "max_tokens": MAX_TOKENS,
                    "messages": [{"role": "user", "content": prompt(i)}],
                },
            }
            for i in range(n)
        ]
        return await client.messages.batches.create(requests=requests)

    async with AsyncAnthropic(base_url=base_url, api_key=API_KEY) as client:
        started_at, start = time.time(), time.perf_counter()
        batch = await create(client)
        while batch.processing_status != "ended":
            await asyncio.sleep(poll_interval)
            batch = await client.messages.batches.retrieve(batch.id)
        texts: dict[str, str] = {}
        async for line in await client.messages.batches.results(batch.id):
            if line.result.type == "succeeded":
                texts[line.custom_id] = "".join(
                    block.text for block in line.result.message.content if block.type == "text"
                )
        return started_at, time.perf_counter() - start, texts


def sdk_requests(keys: range) -> list[Any]:
    """The batch entries of requests `keys`, as the raw SDK's user writes them."""
    return [
        {
            "custom_id": key(i),
            "params": {"model": MODEL, "max_tokens": MAX_TOKENS, "messages": [{"role": "user", "content": prompt(i)}]},
        }
        for i in keys
    ]


async def raw_sdk_bulk(
    base_url: str, n: int, poll_interval: float, batches: int, parallel: int
) -> tuple[float, float, dict[str, str]]:
    """The bulk run by hand with the official SDK: `n` requests in `batches` batches, `parallel` of them at once
    (a semaphore), each created, polled and its results streamed into one dict."""
    from anthropic import AsyncAnthropic

    size = -(-n // batches)
    texts: dict[str, str] = {}

    async with AsyncAnthropic(base_url=base_url, api_key=API_KEY) as client:
        slots = asyncio.Semaphore(parallel)

        async def one(first: int) -> None:
            async with slots:
                batch = await client.messages.batches.create(requests=sdk_requests(range(first, min(n, first + size))))
                while batch.processing_status != "ended":
                    await asyncio.sleep(poll_interval)
                    batch = await client.messages.batches.retrieve(batch.id)
                async for line in await client.messages.batches.results(batch.id):
                    if line.result.type == "succeeded":
                        texts[line.custom_id] = "".join(
                            block.text for block in line.result.message.content if block.type == "text"
                        )

        started_at, start = time.time(), time.perf_counter()
        await asyncio.gather(*(one(first) for first in range(0, n, size)))
        return started_at, time.perf_counter() - start, texts


async def floor_client(
    base_url: str, n: int, poll_interval: float, ledger: Path, *, respond: Respond | None = None
) -> tuple[float, float, dict[str, str]]:
    """The least a durable client must do: the raw SDK's create and polls, with every request's intent inserted (one
    transaction) before the create, and each results line decoded once and appended as it came (transactions of
    `floor.RESULTS_PER_TRANSACTION`) before its answer is handed out (`floor.FloorLedger`; with `respond`, each
    line made into its outcome as well)."""
    from anthropic import AsyncAnthropic

    with FloorLedger(ledger, respond) as durable:
        async with AsyncAnthropic(base_url=base_url, api_key=API_KEY) as client:
            started_at, start = time.time(), time.perf_counter()
            requests = sdk_requests(range(n))
            durable.intents((entry["custom_id"], dumps(entry["params"])) for entry in requests)
            batch = await client.messages.batches.create(requests=requests)
            del requests
            durable.created(batch.id)
            while batch.processing_status != "ended":
                await asyncio.sleep(poll_interval)
                batch = await client.messages.batches.retrieve(batch.id)
            assert batch.results_url is not None
            response = await client.get(
                batch.results_url,
                cast_to=httpx_response(),
                stream=True,
                options={"headers": {"Accept": "application/binary"}},
            )
            try:
                await store_lines(durable, response.aiter_lines(), _answer_text)
            finally:
                await response.aclose()
            return started_at, time.perf_counter() - start, durable.texts


def _answer_text(line: dict[str, Any]) -> str | None:
    """A results line's answer text (its message's text blocks); None for a request that did not succeed."""
    result = line["result"]
    if result["type"] != "succeeded":
        return None
    return "".join(block["text"] for block in result["message"]["content"] if block["type"] == "text")


def httpx_response() -> Any:
    """The HTTP client's response class the SDK streams into (`cast_to`): httpx2 where the SDK uses it, else httpx."""
    try:
        return importlib.import_module("httpx2").Response
    except ImportError:  # pragma: no cover - an SDK on plain httpx
        return importlib.import_module("httpx").Response


def batch_times(emulator: Emulator) -> list[BatchTimes]:
    page = emulator.get_json(
        "/v1/messages/batches?limit=100", {"x-api-key": API_KEY, "anthropic-version": "2023-06-01"}
    )
    return [BatchTimes(epoch(b["created_at"]), b.get("ended_at") and epoch(b["ended_at"])) for b in page["data"]]


BY_HAND = ByHand(
    provider="anthropic",
    model=MODEL,
    sdk="anthropic",
    base_path="",
    raw_sdk=raw_sdk,
    batch_times=batch_times,
    created_ids_stat="created_custom_ids",
    floor=floor_client,
    bulk=raw_sdk_bulk,
)
