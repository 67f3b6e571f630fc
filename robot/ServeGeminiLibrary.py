"""Robot keywords that run `lowtide serve` as a process for an actor whose batch provider speaks Gemini's
`generateContent` (the "tidegem" plugin, `features/plugins/lowtide_tidegem_plugin.py`: lowtide's fake batch API behind
Gemini's wire, installed the way a plugin package is, on the Python path with its `.dist-info`), and drive it over a
real socket with the official google-genai Python SDK, unmodified but for its base URL. What the server recorded is
read from its ledger afterwards."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from google import genai
from google.genai import errors, types
from robot.api.deco import keyword, library

from _processes import Process, stop_all
from _tidegem import GEMINI_MODEL, start_tidegem_serve
from lowtide.ledger.store import close_ledgers, open_ledger
from ServeLibrary import CLIENT_KEY, wait_for_serve

MODEL = GEMINI_MODEL


@library(scope="SUITE", auto_keywords=False)
class ServeGeminiLibrary:
    """One `lowtide serve` process per suite, in front of the tidegem plugin."""

    def __init__(self) -> None:
        self._workdir = Path(tempfile.mkdtemp(prefix="lowtide-serve-gemini-robot-"))
        self._ledger = self._workdir / "tidegem.sqlite3"
        self._process: Process | None = None
        self._url = ""

    @keyword("Start Serve In Front Of A Gemini Batch Actor")
    def start(self, timeout: float = 120.0) -> str:
        """`lowtide serve --port 0` for a batch actor of the tidegem provider; returns the server's URL."""
        self._process = start_tidegem_serve(self._workdir, CLIENT_KEY, self._ledger)
        self._url = wait_for_serve(self._process, timeout)
        return self._url

    @keyword("Stop Serve")
    def stop(self) -> None:
        if self._process is not None:
            stop_all([self._process], with_stderr=True)
            self._process = None

    def _client(self, key: str = CLIENT_KEY, version: str = "v1beta") -> genai.Client:
        return genai.Client(api_key=key, http_options=types.HttpOptions(base_url=self._url, api_version=version))

    @keyword("Ask With The Gemini SDK")
    def ask(self, prompt: str, version: str = "v1beta", stream: bool = False) -> str:
        """The answer's text to `prompt` (streamed: its chunks' texts joined, and there must be one)."""
        with self._client(version=version) as client:
            if stream:
                chunks = list(client.models.generate_content_stream(model=MODEL, contents=prompt))
                assert len(chunks) == 1, chunks
                return "".join(chunk.text or "" for chunk in chunks)
            answer = client.models.generate_content(
                model=MODEL,
                contents=prompt,
                config=types.GenerateContentConfig(system_instruction="Be brief.", temperature=0.3, top_k=20),
            )
        assert answer.usage_metadata is not None, answer
        assert answer.usage_metadata.total_token_count, answer
        assert answer.candidates, answer
        assert answer.candidates[0].finish_reason == types.FinishReason.STOP, answer
        return answer.text or ""

    @keyword("Ask Concurrently With The Gemini SDK")
    def ask_concurrently(self, count: int) -> int:
        """`count` different prompts at once through the SDK's async client; returns how many distinct answers."""

        async def ask_all() -> list[str]:
            async with self._client().aio as client:
                answers = await asyncio.gather(
                    *(client.models.generate_content(model=MODEL, contents=f"Tide {n}?") for n in range(int(count)))
                )
            return [answer.text or "" for answer in answers]

        return len(set(asyncio.run(ask_all())))

    @keyword("The Gemini SDK With The Wrong Key Is Refused")
    def wrong_key(self) -> dict[str, Any]:
        """The SDK's `ClientError` for a key the server does not know: its code and Google's status name."""
        with self._client(key="not-the-key") as client:
            try:
                client.models.generate_content(model=MODEL, contents="Hello")
            except errors.ClientError as error:
                return {"code": error.code, "status": error.status}
        raise AssertionError("the wrong key was answered")

    @keyword("The Ledger Should Hold")
    def ledger_should_hold(self, batches: int, requests: int) -> None:
        """The server's ledger: `batches` batches holding `requests` requests in all."""
        ledger = open_ledger(self._ledger, read_only=True)
        try:
            held = ledger.batches()
        finally:
            close_ledgers()  # read afresh next time
        seen = (len(held), sum(batch.request_count for batch in held))
        assert seen == (int(batches), int(requests)), f"the ledger holds {seen[0]} batches of {seen[1]} requests"
