"""`Emulator`: an offline Anthropic API (Messages, token counting, Message Batches, Files and Models) and OpenAI API
(Files, Batches, Responses, Chat Completions, Embeddings) that the real SDKs talk to, in process through an ASGI
transport or over a socket (see `lowtide.emulator.server`). It serves every emulation installed in the
`lowtide.emulators` entry-point group (`lowtide.emulator.core`); the built-in APIs have handles of their own here
(`emulator.anthropic`, `emulator.openai`) and their SDK clients, and any emulation is `emulator.emulation(Class)`."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from lowtide.core.clock import Clock, SystemClock
from lowtide.emulator.anthropic.batches import BatchSnapshot
from lowtide.emulator.anthropic.emulation import AnthropicEmulation
from lowtide.emulator.core.base import EmulatorBase
from lowtide.emulator.core.emulation import Emulation, installed_emulations
from lowtide.emulator.core.ratelimits import Latency, RateLimits
from lowtide.emulator.core.settings import COMPATIBLE_PARTS, Settings
from lowtide.emulator.openai.emulation import OpenAIEmulation

if TYPE_CHECKING:
    # Each SDK is imported when a client of it is asked for: serving the APIs (`lowtide emulator`, a test's
    # emulator behind a provider's own client) needs neither, and importing both cost 5 s of CPU.
    import anthropic
    import openai

__all__ = ["Emulator"]


class Emulator(EmulatorBase):
    """One emulated account with each provider: batches, files, prompt cache, call counts and faults, on one clock.

    `processing_seconds` is how long each batch stays `in_progress`; `cancel_seconds` how long a canceled one
    stays `canceling`. `api_keys=None` accepts any non-empty key. The byte limits default to the APIs' own (32 MB
    per Messages request, 256 MB per batch, 500 MB per uploaded file; 50 MB per OpenAI request) and can be lowered
    to test the 413 without building huge bodies (`max_request_bytes` lowers both APIs').

    With a `state_file`, the emulator starts from the state that file holds (if it exists) and writes its state
    back after every change, so that a new emulator on the same file knows the batches of the one before:
    `lowtide.emulator.core.state` says what is kept. `StateFileError` when the file cannot be read or written.

    The emulator serves the models of `lowtide.emulator.anthropic.catalogue` (`GET /v1/models`), plus `extra_models`: a
    request naming any other model gets the API's 404 `not_found_error`, as a batch request's errored result.

    `rate_limits` limits live Messages calls per API key (requests, input and output tokens per minute), answering
    a 429 with `retry-after` over them and the `anthropic-ratelimit-*` headers on every live answer; `latency` makes
    each live answer take a fixed time plus a time per output token, on the emulator's clock.

    `compatible_lacks` switches parts of OpenAI's wire off (`metadata`, `cancel`, `models`), so that it stands for an
    OpenAI-compatible endpoint without them (`provider: openai_compatible` is tested so).

    `emulations` are the APIs served (`Emulation` classes): by default every one installed in the
    `lowtide.emulators` entry-point group.
    """

    def __init__(
        self,
        clock: Clock | None = None,
        processing_seconds: float = 0.0,
        cancel_seconds: float = 0.0,
        api_keys: Iterable[str] | None = None,
        base_url: str = "http://emulator.invalid",
        *,
        max_batch_bytes: int | None = None,
        max_request_bytes: int | None = None,
        max_file_bytes: int | None = None,
        state_file: str | os.PathLike[str] | None = None,
        extra_models: Iterable[str] = (),
        rate_limits: RateLimits | None = None,
        latency: Latency | None = None,
        emulations: Iterable[type[Emulation]] | None = None,
        compatible_lacks: Iterable[str] = (),
    ) -> None:
        if processing_seconds < 0 or cancel_seconds < 0:
            raise ValueError("processing_seconds and cancel_seconds cannot be negative")
        extra = tuple(extra_models)
        if isinstance(extra_models, str) or not all(_is_name(name) for name in extra):
            raise ValueError("extra_models must be model names (non-empty strings), e.g. ('claude-unknown-9',)")
        lacks = frozenset(compatible_lacks)
        if isinstance(compatible_lacks, str) or not lacks <= COMPATIBLE_PARTS:
            raise ValueError(
                f"compatible_lacks names parts of OpenAI's wire: any of {', '.join(sorted(COMPATIBLE_PARTS))}"
            )
        settings = Settings(
            processing_seconds=processing_seconds,
            cancel_seconds=cancel_seconds,
            api_keys=frozenset(api_keys) if api_keys is not None else None,
            max_batch_bytes=max_batch_bytes,
            max_request_bytes=max_request_bytes,
            max_file_bytes=max_file_bytes,
            extra_models=extra,
            rate_limits=rate_limits or RateLimits(),
            latency=latency or Latency(),
            compatible_lacks=lacks,
        )
        super().__init__(
            clock if clock is not None else SystemClock(),
            settings,
            emulations if emulations is not None else installed_emulations(),
            base_url=base_url,
            state_file=state_file,
        )

    @property
    def anthropic(self) -> AnthropicEmulation:
        """The Anthropic side: its `limits`, `created_custom_ids` and `created_batches`, `live_answers`, `batches`,
        `files` and `models`."""
        return self.emulation(AnthropicEmulation)

    @property
    def openai(self) -> OpenAIEmulation:
        """The OpenAI side: its `limits` (lower them to test OpenAI's without 200 MB files), `created_custom_ids` and
        `created_batches` (the exactly-once evidence, as for Anthropic batches), `files` and `batches`."""
        return self.emulation(OpenAIEmulation)

    @property
    def live_answers(self) -> Counter[str]:
        """Live Messages answers delivered, one count per distinct request body (without `stream`): a bulk run's
        item answered twice counts 2. An answer whose caller had disconnected before it was ready is not counted
        here but in `abandoned_answers`."""
        return self.anthropic.live_answers

    @property
    def abandoned_answers(self) -> int:
        return self.anthropic.abandoned_answers

    @property
    def created_custom_ids(self) -> Counter[str]:
        """For every Message Batch created (committed, whether or not its creator heard back), one count per
        custom_id in it: a request sent in two batches counts 2. Deleting a batch does not take its counts back."""
        return self.anthropic.created_custom_ids

    @property
    def created_batches(self) -> int:
        """How many Message Batches were created (committed), deleted ones included."""
        return self.anthropic.created_batches

    def client(self, api_key: str = "emulator-key", max_retries: int = 0, **kwargs: Any) -> anthropic.AsyncAnthropic:
        """The real SDK client, wired to this emulator without sockets. Close it (`await client.close()`)."""
        import anthropic

        return anthropic.AsyncAnthropic(
            api_key=api_key, base_url=self.base_url, http_client=self.http_client(), max_retries=max_retries, **kwargs
        )

    def openai_client(self, api_key: str = "emulator-key", max_retries: int = 0, **kwargs: Any) -> openai.AsyncOpenAI:
        """The real OpenAI SDK client, wired to this emulator's OpenAI API without sockets. Close it."""
        import openai

        return openai.AsyncOpenAI(
            api_key=api_key,
            base_url=f"{self.base_url}/v1",
            http_client=self.http_client(),
            max_retries=max_retries,
            **kwargs,
        )

    def batch(self, batch_id: str) -> BatchSnapshot:
        """A stored Message Batch as of now: requests, status, counts, per-request outcomes once ended. KeyError if
        unknown."""
        return self.anthropic.batch(batch_id)

    def add_file(
        self, content: bytes, *, filename: str, mime_type: str | None = None, downloadable: bool = True
    ) -> str:
        """Store a file as a tool (the code execution tool, say) would write it, downloadable unless told otherwise,
        and return its id: uploads through the API are never downloadable. The MIME type is guessed as for an
        upload when not given."""
        return self.anthropic.add_file(content, filename=filename, mime_type=mime_type, downloadable=downloadable)


def _is_name(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())
