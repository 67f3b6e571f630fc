"""`Emulator`: an offline Anthropic API (Messages, token counting, Message Batches, Files and Models) and OpenAI API
(Files, Batches, Responses, Chat Completions, Embeddings) that the real SDKs talk to, in process through an ASGI
transport or over a socket (see `lowtide.emulator.server`)."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import AsyncIterator, Iterable, MutableMapping
from typing import Any

import anthropic
import httpx2
import openai
from starlette.applications import Starlette

from lowtide.clock import Clock, SystemClock
from lowtide.emulator.app import build_app
from lowtide.emulator.backend import API_BATCH_BYTES, API_REQUEST_BYTES, Backend, Settings
from lowtide.emulator.batches import BatchSnapshot
from lowtide.emulator.faults import Faults
from lowtide.emulator.filestore import MAX_FILE_BYTES
from lowtide.emulator.openai.backend import OpenAIBackend
from lowtide.emulator.ratelimits import Latency, RateLimits
from lowtide.emulator.state import StateFile
from lowtide.emulator.web import IN_PROCESS, ConnectionDropped

__all__ = ["Emulator"]


class Emulator:
    """One emulated account with each provider: batches, files, prompt cache, call counts and faults, on one clock.

    `processing_seconds` is how long each batch stays `in_progress`; `cancel_seconds` how long a canceled one
    stays `canceling`. `api_keys=None` accepts any non-empty key. The byte limits default to the API's (32 MB
    per Messages request, 256 MB per batch, 500 MB per uploaded file; 50 MB per OpenAI request) and can be lowered
    to test the 413 without building huge bodies (`max_request_bytes` lowers both APIs').

    With a `state_file`, the emulator starts from the state that file holds (if it exists) and writes its state
    back after every change, so that a new emulator on the same file knows the batches of the one before:
    `lowtide.emulator.state` says what is kept. `StateFileError` when the file cannot be read or written.

    The emulator serves the models of `lowtide.emulator.catalogue` (`GET /v1/models`), plus `extra_models`: a
    request naming any other model gets the API's 404 `not_found_error`, as a batch request's errored result.

    `rate_limits` limits live Messages calls per API key (requests, input and output tokens per minute), answering
    a 429 with `retry-after` over them and the `anthropic-ratelimit-*` headers on every live answer; `latency` makes
    each live answer take a fixed time plus a time per output token, on the emulator's clock.
    """

    def __init__(
        self,
        clock: Clock | None = None,
        processing_seconds: float = 0.0,
        cancel_seconds: float = 0.0,
        api_keys: Iterable[str] | None = None,
        base_url: str = "http://emulator.invalid",
        *,
        max_batch_bytes: int = API_BATCH_BYTES,
        max_request_bytes: int | None = None,
        max_file_bytes: int = MAX_FILE_BYTES,
        state_file: str | os.PathLike[str] | None = None,
        extra_models: Iterable[str] = (),
        rate_limits: RateLimits | None = None,
        latency: Latency | None = None,
    ) -> None:
        if processing_seconds < 0 or cancel_seconds < 0:
            raise ValueError("processing_seconds and cancel_seconds cannot be negative")
        extra = tuple(extra_models)
        if isinstance(extra_models, str) or not all(_is_name(name) for name in extra):
            raise ValueError("extra_models must be model names (non-empty strings), e.g. ('claude-unknown-9',)")
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.base_url = base_url
        settings = Settings(
            processing_seconds=processing_seconds,
            cancel_seconds=cancel_seconds,
            api_keys=frozenset(api_keys) if api_keys is not None else None,
            max_batch_bytes=max_batch_bytes,
            max_request_bytes=max_request_bytes if max_request_bytes is not None else API_REQUEST_BYTES,
            max_file_bytes=max_file_bytes,
            extra_models=extra,
            rate_limits=rate_limits or RateLimits(),
            latency=latency or Latency(),
        )
        self._backend = Backend(self.clock, settings, StateFile(state_file) if state_file is not None else None)
        if max_request_bytes is not None:
            self._backend.openai.limits.max_request_bytes = max_request_bytes
        self.app: Starlette = build_app(self._backend)

    @property
    def rate_limited(self) -> int:
        """How many live calls were answered 429 for being over `rate_limits`."""
        return self._backend.quotas.limited

    @property
    def live_answers(self) -> Counter[str]:
        """Live Messages answers delivered, one count per distinct request body (without `stream`): a bulk run's
        item answered twice counts 2. An answer whose caller had disconnected before it was ready is not counted
        here but in `abandoned_answers`."""
        return self._backend.live_answers

    @property
    def abandoned_answers(self) -> int:
        return self._backend.abandoned_answers

    @property
    def calls(self) -> Counter[str]:
        """Served API calls by route name (`messages.create`, `batches.create`, ...), failed ones included."""
        return self._backend.calls

    @property
    def created_custom_ids(self) -> Counter[str]:
        """For every batch created (committed, whether or not its creator heard back), one count per custom_id in
        it: a request sent in two batches counts 2. Deleting a batch does not take its counts back."""
        return self._backend.created_custom_ids

    @property
    def created_batches(self) -> int:
        """How many batches were created (committed), deleted ones included."""
        return self._backend.created_batches

    @property
    def openai(self) -> OpenAIBackend:
        """The OpenAI side: its `limits` (lower them to test OpenAI's without 200 MB files), `created_custom_ids` and
        `created_batches` (the exactly-once evidence, as for Anthropic batches), `files` and `batches`."""
        return self._backend.openai

    @property
    def faults(self) -> Faults:
        return self._backend.faults

    @property
    def processing_seconds(self) -> float:
        return self._backend.settings.processing_seconds

    @processing_seconds.setter
    def processing_seconds(self, value: float) -> None:
        self._backend.settings.processing_seconds = value

    @property
    def cancel_seconds(self) -> float:
        return self._backend.settings.cancel_seconds

    @cancel_seconds.setter
    def cancel_seconds(self, value: float) -> None:
        self._backend.settings.cancel_seconds = value

    def transport(self) -> httpx2.ASGITransport:
        """An in-process transport to this emulator, declaring ASGI spec 2.4.

        In-process there is no connection to lose, and with spec 2.4 Starlette streams a response without the
        task group that listens for a disconnect. Cancelling that group, on CPython 3.11, hides the rest of the
        awaiting coroutines from coverage tools; what the emulator answers is the same either way.

        Calls through this transport wait on the emulator's clock (`delay_after_commit`, `slow`), and an answer
        a `drop_after_commit` fault loses raises `httpx2.RemoteProtocolError`, as a closed connection would.
        """
        app = self.app

        async def in_process(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
            asgi = {**scope.get("asgi", {}), "spec_version": "2.4"}
            extensions: dict[str, Any] = {**(scope.get("extensions") or {}), IN_PROCESS: {}}
            await app({**scope, "asgi": asgi, "extensions": extensions}, receive, send)

        return _InProcessTransport(app=in_process)

    def http_client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(transport=self.transport(), base_url=self.base_url)

    def client(self, api_key: str = "emulator-key", max_retries: int = 0, **kwargs: Any) -> anthropic.AsyncAnthropic:
        """The real SDK client, wired to this emulator without sockets. Close it (`await client.close()`)."""
        return anthropic.AsyncAnthropic(
            api_key=api_key, base_url=self.base_url, http_client=self.http_client(), max_retries=max_retries, **kwargs
        )

    def openai_client(self, api_key: str = "emulator-key", max_retries: int = 0, **kwargs: Any) -> openai.AsyncOpenAI:
        """The real OpenAI SDK client, wired to this emulator's OpenAI API without sockets. Close it."""
        return openai.AsyncOpenAI(
            api_key=api_key,
            base_url=f"{self.base_url}/v1",
            http_client=self.http_client(),
            max_retries=max_retries,
            **kwargs,
        )

    def batch(self, batch_id: str) -> BatchSnapshot:
        """A stored batch as of now: requests, status, counts, per-request outcomes once ended. KeyError if unknown."""
        return self._backend.snapshot(batch_id)

    def add_file(
        self, content: bytes, *, filename: str, mime_type: str | None = None, downloadable: bool = True
    ) -> str:
        """Store a file as a tool (the code execution tool, say) would write it, downloadable unless told otherwise,
        and return its id: uploads through the API are never downloadable. The MIME type is guessed as for an
        upload when not given."""
        stored = self._backend.files.add(
            content, filename=filename, declared_type=mime_type, now=self.clock.now(), downloadable=downloadable
        )
        self._backend.save()
        return stored.id

    def reset(self) -> None:
        """Forget batches, uploaded files, call counts, the created counts, faults and the prompt cache (and say so in
        the state file, if there is one)."""
        self._backend.reset()


def _is_name(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


class _InProcessTransport(httpx2.ASGITransport):
    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """The app's answer; one it dropped (`ConnectionDropped`) is lost as over a socket: before its body, the call
        fails; part way through, what was sent arrives, then the body breaks."""
        app = self.app
        started: list[MutableMapping[str, Any]] = []
        sent: list[bytes] = []

        async def watched(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
            async def keep(message: MutableMapping[str, Any]) -> None:
                if message["type"] == "http.response.start":
                    started.append(message)
                elif message["type"] == "http.response.body" and message.get("body"):
                    sent.append(message["body"])
                await send(message)

            await app(scope, receive, keep)

        transport = httpx2.ASGITransport(app=watched, root_path=self.root_path, client=self.client)
        try:
            return await transport.handle_async_request(request)
        except ConnectionDropped:
            if not sent:
                lost = "Server disconnected without sending a response."
                raise httpx2.RemoteProtocolError(lost, request=request) from None
            start = started[0]
            return httpx2.Response(
                start["status"], headers=start.get("headers", []), stream=_BrokenStream(sent, request), request=request
            )


class _BrokenStream(httpx2.AsyncByteStream):
    """A body that breaks after the bytes the app sent before it dropped the connection."""

    def __init__(self, sent: list[bytes], request: httpx2.Request) -> None:
        self._sent = sent
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for part in self._sent:
            yield part
        raise httpx2.RemoteProtocolError(
            "peer closed connection without sending complete message body (incomplete chunked read)",
            request=self._request,
        )
