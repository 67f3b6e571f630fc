"""Steps for Vertex AI actors (features/vertex_live.feature): the official google-genai SDK with `vertexai=True`
against the emulator's Vertex AI, in process, built by lowtide from the actor's project, location and base URL,
every call's path and credentials kept for the scenario to read."""

from __future__ import annotations

import os
from typing import Any, Protocol

import httpx2
from _support import remember_env, world, yaml_doc
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.core.clock import SystemClock
from lowtide.emulator import Emulator

MODEL = "gemini-2.5-flash"
PROJECT = "tide-project"
LOCATION = "europe-west4"


class Context(StepContext, Protocol):
    vertex_seen: list[tuple[str, str, str]]
    """(method, path, authorization header) of every call the scenario's actors sent."""
    vertex_http: httpx2.AsyncClient


class _Seeing(httpx2.AsyncBaseTransport):
    """The emulator's transport, keeping each call's method, path and `authorization` header."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, seen: list[tuple[str, str, str]]) -> None:
        self._inner = inner
        self._seen = seen

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self._seen.append((request.method, request.url.path, request.headers.get("authorization", "")))
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


@given("an emulated Vertex AI")
def step_vertex_emulator(context: Context) -> None:
    w = world(context)
    w.emulator = Emulator(clock=w.clock)
    context.vertex_seen = []
    context.vertex_http = httpx2.AsyncClient(transport=_Seeing(w.transport(), context.vertex_seen))
    w.cleanups.append(context.vertex_http.aclose)
    w.client = None


def _settings(context: Context, name: str, text: str | None) -> dict[str, Any]:
    given = yaml_doc(text)
    options = {"project": PROJECT, "location": LOCATION, "credentials": "anonymous"}
    vertex = {**options, **given.pop("vertex", {})}
    settings = {"name": name, "provider": "vertex", "model": MODEL, "base_url": world(context).emu.base_url, **given}
    settings["provider_options"] = {**settings.get("provider_options", {}), "vertex": vertex}
    return settings


def _add(context: Context, name: str, text: str | None) -> None:
    world(context).add_actor(_settings(context, name, text), http_client=context.vertex_http)


@given('a Vertex actor "{name}" with:')
def step_vertex_actor(context: Context, name: str) -> None:
    _add(context, name, context.text)


@given('a Vertex actor "{name}"')
def step_vertex_actor_plain(context: Context, name: str) -> None:
    _add(context, name, None)


@when('an actor of Vertex AI "{name}" is configured with:')
def step_vertex_actor_configured(context: Context, name: str) -> None:
    w = world(context)
    w.attempt(lambda: _add(context, name, context.text))


@given("no Google Cloud project is set in the environment")
def step_vertex_no_project(context: Context) -> None:
    remember_env(context, "GOOGLE_CLOUD_PROJECT")
    os.environ.pop("GOOGLE_CLOUD_PROJECT", None)


@given("the Google Cloud credentials file the environment names does not exist")
def step_vertex_no_credentials(context: Context) -> None:
    remember_env(context, "GOOGLE_APPLICATION_CREDENTIALS")
    os.environ["GOOGLE_APPLICATION_CREDENTIALS"] = str(world(context).ledger_path.parent / "no-such-key.json")


@given("the Vertex emulator answers the next generateContent call with status {status:d}")
def step_vertex_fault(context: Context, status: int) -> None:
    world(context).emu.faults.fail_next("vertex.generate_content", status)


@given(
    "the Vertex emulator answers the next generateContent call with status {status:d}, asking to wait {seconds:g} "
    "seconds"
)
def step_vertex_fault_wait(context: Context, status: int, seconds: float) -> None:
    world(context).emu.faults.fail_next("vertex.generate_content", status, retry_after=seconds)


@then('Vertex AI was called at "{path}" with the token "{token}"')
def step_vertex_called_at(context: Context, path: str, token: str) -> None:
    generated = [(seen, auth) for _, seen, auth in context.vertex_seen if seen.endswith(":generateContent")]
    assert generated, context.vertex_seen
    assert all(seen == path for seen, _ in generated), generated
    assert all(auth == f"Bearer {token}" for _, auth in generated), generated


@then("nothing was sent to Vertex AI")
def step_vertex_nothing_sent(context: Context) -> None:
    assert context.vertex_seen == [], context.vertex_seen


# -- the real Vertex AI, opted into ------------------------------------------------------------------------------------

REAL_PROJECT_ENV = "LOWTIDE_VERTEX_REAL_PROJECT"
REAL_BUCKET_ENV = "LOWTIDE_VERTEX_REAL_BUCKET"


@given("the real Vertex AI, when a run opts in with a project (and, for batch mode, a bucket) it may spend on")
def step_vertex_real(context: Context) -> None:
    if not os.environ.get(REAL_PROJECT_ENV):
        context.scenario.skip(f"set {REAL_PROJECT_ENV} (and {REAL_BUCKET_ENV}) to call the real Vertex AI")


@given('a real Vertex actor "{name}" with:')
def step_vertex_real_actor(context: Context, name: str) -> None:
    given = yaml_doc(context.text)
    vertex = {"project": os.environ[REAL_PROJECT_ENV], "credentials": "default"}
    if given.get("batch_processing") == "batch":
        bucket = os.environ.get(REAL_BUCKET_ENV)
        if not bucket:
            context.scenario.skip(f"set {REAL_BUCKET_ENV} to a bucket the credentials may write")
            return
        vertex["bucket"] = bucket
    w = world(context)
    w.client = None
    settings = {"name": name, "provider": "vertex", "model": "gemini-2.5-flash", **given}
    # Real time: the scenario's virtual clock would poll the real API without waiting.
    w.add_actor({**settings, "provider_options": {"vertex": vertex}}, clock=SystemClock())


@then("a real answer came back from Vertex AI, priced")
def step_vertex_real_answer(context: Context) -> None:
    response = world(context).answer()
    assert response.text.strip(), response
    assert response.provider == "vertex", response
    assert response.usage.output_tokens > 0, response.usage
    assert response.cost is not None, response
