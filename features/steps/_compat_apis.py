"""The OpenAI-compatible APIs the shared Groq and Together steps drive (features/steps/compat_provider_steps.py): for
each, its official SDK's client against the emulator (in process, over the scenario's transport, on its manual
clock), its emulation, and the few calls whose shapes differ (listing batches, uploading a file, creating a batch
from it). `{api:Compat}` in a step text matches their names, "Groq" or "Together", and gives the `CompatApi`."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import groq
import httpx
import parse
import together
from _httpx_bridge import Httpx2Bridge
from _support import World
from behave.api.step_matchers import register_type

from lowtide.emulator.groq.emulation import GroqEmulation
from lowtide.emulator.openai.emulation import OpenAIEmulation
from lowtide.emulator.together.emulation import TogetherEmulation
from lowtide.providers.groq.batch_backend import INPUT_FILE_STEP as GROQ_INPUT_FILE
from lowtide.providers.groq.batch_backend import INTENT_KEY
from lowtide.providers.together.batch_backend import INPUT_FILE_STEP as TOGETHER_INPUT_FILE
from lowtide.providers.together.batch_backend import file_name

__all__ = ["GROQ", "TOGETHER", "CompatApi"]

GROQ_KEY = "gsk-groq-lowtide-scenario-secret-5e2a"
"""The key every Groq client of these scenarios sends: distinctive, so that a leak into a message is caught."""
TOGETHER_KEY = "tgp-together-lowtide-scenario-secret-9d1f"
"""The key every Together client of these scenarios sends: distinctive, so that a leak into a message is caught."""


def groq_client(w: World) -> groq.AsyncGroq:
    """The official groq SDK client of a scenario: the emulator's Groq API over the scenario's hooked transport, with
    the scenario's key; closed after the scenario."""
    http = httpx.AsyncClient(transport=Httpx2Bridge(w.transport()), base_url=w.emu.base_url)
    client = groq.AsyncGroq(api_key=GROQ_KEY, base_url=w.emu.base_url, http_client=http, max_retries=0)
    w.cleanups.append(client.close)
    return client


def together_client(w: World) -> together.AsyncTogether:
    """The official together SDK client of a scenario: the emulator's Together API over the scenario's hooked
    transport, with the scenario's key; closed after the scenario."""
    http = httpx.AsyncClient(transport=Httpx2Bridge(w.transport()), base_url=w.emu.base_url)
    client = together.AsyncTogether(api_key=TOGETHER_KEY, base_url=w.emu.base_url, http_client=http, max_retries=0)
    w.cleanups.append(client.close)
    return client


@dataclass(frozen=True)
class CompatApi:
    """One OpenAI-compatible API as the shared steps drive it."""

    label: str
    """Its name in step texts and messages: "Groq"."""
    name: str
    """The provider's name: "groq"."""
    model: str
    """The model its actors name unless told otherwise."""
    key: str
    key_variable: str
    purpose: str
    """The purpose its batch input files are uploaded with."""
    input_file_step: str
    """The create step its backend records an uploaded input file as."""
    model_check: str
    """The call that checks a model before anything is sent: "models.retrieve"."""
    client: Callable[[World], Any]
    emulation: type[OpenAIEmulation]
    batches: Callable[[Any], Coroutine[Any, Any, list[Any]]]
    """Every batch the account lists, given a client."""
    upload: Callable[[World, str, bytes], Coroutine[Any, Any, str]]
    """Upload an intent's input file as a dead program did; its file id."""
    create: Callable[[World, str, str], Coroutine[Any, Any, object]]
    """Create a batch from a file, as a dead program did for its intent."""

    def route(self, call: str) -> str:
        """The emulator's name for one of its calls: "groq.chat.completions.create"."""
        return f"{self.name}.{call}"

    def settings(self, name: str, **more: object) -> dict[str, object]:
        """An actor's settings: its name, this provider and model, 256 tokens, and `more`."""
        return {"name": name, "provider": self.name, "model": self.model, "max_tokens": 256, **more}

    def listed(self, w: World) -> list[Any]:
        return w.run(self.batches(self.client(w)))


async def _groq_batches(client: groq.AsyncGroq) -> list[Any]:
    return list((await client.batches.list()).data)


async def _groq_upload(w: World, intent: str, body: bytes) -> str:
    uploaded = await groq_client(w).files.create(file=("orphan.jsonl", body, "application/jsonl"), purpose="batch")
    assert uploaded.id is not None
    return uploaded.id


async def _groq_create(w: World, intent: str, file_id: str) -> object:
    return await groq_client(w).batches.create(
        input_file_id=file_id, endpoint="/v1/chat/completions", completion_window="24h", metadata={INTENT_KEY: intent}
    )


async def _together_batches(client: together.AsyncTogether) -> list[Any]:
    return list(await client.batches.list())


async def _together_upload(w: World, intent: str, body: bytes) -> str:
    path = w.path(file_name(intent, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body)
    uploaded = await together_client(w).files.upload(path, purpose="batch-api", check=False)
    return uploaded.id


async def _together_create(w: World, intent: str, file_id: str) -> object:
    return await together_client(w).batches.create(input_file_id=file_id, endpoint="/v1/chat/completions")


GROQ = CompatApi(
    label="Groq",
    name="groq",
    model="llama-3.1-8b-instant",
    key=GROQ_KEY,
    key_variable="GROQ_API_KEY",
    purpose="batch",
    input_file_step=GROQ_INPUT_FILE,
    model_check="models.retrieve",
    client=groq_client,
    emulation=GroqEmulation,
    batches=_groq_batches,
    upload=_groq_upload,
    create=_groq_create,
)
TOGETHER = CompatApi(
    label="Together",
    name="together",
    model="meta-llama/Llama-3.3-70B-Instruct-Turbo",
    key=TOGETHER_KEY,
    key_variable="TOGETHER_API_KEY",
    purpose="batch-api",
    input_file_step=TOGETHER_INPUT_FILE,
    model_check="models.list",
    client=together_client,
    emulation=TogetherEmulation,
    batches=_together_batches,
    upload=_together_upload,
    create=_together_create,
)
_BY_LABEL = {api.label: api for api in (GROQ, TOGETHER)}


@parse.with_pattern(r"Groq|Together")
def _compat(string: str) -> CompatApi:
    return _BY_LABEL[string]


register_type(Compat=_compat)
