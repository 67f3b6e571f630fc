"""Steps for Claude on Vertex AI (features/vertex_claude_live.feature, vertex_claude_batch.feature): actors of
`provider: vertex_claude` building the anthropic SDK's `AsyncAnthropicVertex` (and, in batch mode, google-genai and
google-cloud-storage) from their settings, anonymously, against the emulator's Vertex AI; the emulator in process
for live calls (every call's path and token kept by `vertex_steps`'s transport), on a loopback socket for batches."""

from __future__ import annotations

import json
import os
from typing import Any

from _support import World, dead_intent, world, yaml_doc
from step_context import given, then, when
from vertex_steps import LOCATION, PROJECT, REAL_BUCKET_ENV, REAL_PROJECT_ENV, Context

from lowtide import ActorResponse
from lowtide.core.clock import SystemClock
from lowtide.emulator.vertex.emulation import VertexEmulation
from lowtide.ledger.store import NewRequest
from lowtide.providers.vertex.batch_backend import INPUT_FILE_STEP, MODEL_STEP
from lowtide.providers.vertex_claude.batch_backend import ANTHROPIC_VERSION, VertexClaudeBatchBackend

MODEL = "claude-sonnet-4-6@20260217"
BUCKET = "tide-batches"


def _vertex(w: World) -> VertexEmulation:
    return w.emu.emulation(VertexEmulation)


def _settings(name: str, base_url: str, text: str | None, **vertex: object) -> dict[str, Any]:
    given = yaml_doc(text)
    section = {"project": PROJECT, "location": LOCATION, **vertex, **given.pop("vertex_claude", {})}
    settings = {"name": name, "provider": "vertex_claude", "model": MODEL, "base_url": base_url, **given}
    settings["provider_options"] = {**settings.get("provider_options", {}), "vertex_claude": section}
    return settings


@given('a Vertex Claude actor "{name}" with:')
def step_claude_actor(context: Context, name: str) -> None:
    w = world(context)
    settings = _settings(name, w.emu.base_url, context.text, credentials="anonymous")
    w.add_actor(settings, http_client=context.vertex_http)


@given('a Vertex Claude actor "{name}"')
def step_claude_actor_plain(context: Context, name: str) -> None:
    w = world(context)
    w.add_actor(_settings(name, w.emu.base_url, None, credentials="anonymous"), http_client=context.vertex_http)


@when('an actor of Claude on Vertex AI "{name}" is configured with:')
def step_claude_actor_configured(context: Context, name: str) -> None:
    w = world(context)
    settings = _settings(name, w.emu.base_url, context.text, credentials="anonymous")
    w.attempt(lambda: w.add_actor(settings, http_client=context.vertex_http))


def _batch_settings(w: World, name: str, text: str | None) -> dict[str, Any]:
    settings = _settings(name, w.witnessed["server url"][0], text, bucket=BUCKET)
    return {"batch_processing": "batch", **settings}


@given('a Vertex Claude batch actor "{name}" with:')
def step_claude_batch_actor(context: Context, name: str) -> None:
    w = world(context)
    w.add_actor(_batch_settings(w, name, context.text))


@when('a Vertex Claude batch actor "{name}" is configured with:')
def step_claude_batch_configured(context: Context, name: str) -> None:
    w = world(context)
    w.attempt(lambda: w.add_actor(_batch_settings(w, name, context.text)))


@given(
    "the Vertex emulator answers the next Claude rawPredict call with status {status:d}, asking to wait {seconds:g} "
    "seconds"
)
def step_claude_fault_wait(context: Context, status: int, seconds: float) -> None:
    world(context).emu.faults.fail_next("vertex.claude.raw_predict", status, retry_after=seconds)


@given("the Vertex emulator answers the next Claude rawPredict call with status {status:d}")
def step_claude_fault(context: Context, status: int) -> None:
    world(context).emu.faults.fail_next("vertex.claude.raw_predict", status)


@then('Vertex AI was asked for Claude at "{path}" with the token "{token}"')
def step_claude_called_at(context: Context, path: str, token: str) -> None:
    asked = [(seen, auth) for _, seen, auth in context.vertex_seen if "Predict" in seen]
    assert asked, context.vertex_seen
    assert all(seen == path for seen, _ in asked), asked
    assert all(auth == f"Bearer {token}" for _, auth in asked), asked


@then("every Vertex Claude answer was priced at Vertex AI's batch prices, half the live equivalent")
def step_claude_batch_priced(context: Context) -> None:
    w = world(context)
    for outcome in list(w.asked.values()) or [w.answer()]:
        assert isinstance(outcome, ActorResponse), outcome
        cost = outcome.cost
        assert cost is not None, outcome
        assert cost.pricing == "batch", cost
        assert cost.total_usd > 0, cost
        assert cost.total_usd * 2 == cost.live_equivalent_usd, cost
        assert outcome.provider == "vertex_claude", outcome


@then('the Vertex batch job ran "{model}" on lines of Anthropic Messages bodies, each named by its custom id')
def step_claude_job(context: Context, model: str) -> None:
    w = world(context)
    [job] = _vertex(w).jobs.jobs.values()
    assert job.model == model, job.model
    created = _vertex(w).jobs.created_custom_ids
    keys = {request.custom_id for request in w.ledger().requests()}
    assert set(created) == keys, (created, keys)
    assert all(count == 1 for count in created.values()), created


@given(
    'the ledger holds a Vertex Claude intent for the key "{key}" asking "{prompt}", its input written to the bucket '
    "by a program that died before creating the job"
)
def step_claude_orphan_intent(context: Context, key: str, prompt: str) -> None:
    w = world(context)
    actor = w.current_actor()
    backend = actor.batch_backend()
    assert isinstance(backend, VertexClaudeBatchBackend), backend
    params: dict[str, Any] = backend.codec.encode_request(actor.request(prompt))
    custom_id = w.custom_id(key)
    ledger = w.ledger()
    now = w.clock.now()
    dead = "host:999999:dead"
    model = backend.codec.model_of(params)
    new = NewRequest(key=key, custom_id=custom_id, actor=actor.name, model=model, params=params)
    ledger.claim([new], owner=dead, until=now - 1, now=now)
    batch_id = "lt_0123456789abcdef0123456789abcdef"
    request = {
        **{name: value for name, value in params.items() if name != "model"},
        "anthropic_version": ANTHROPIC_VERSION,
    }
    body = json.dumps({"custom_id": custom_id, "request": request}).encode() + b"\n"
    ledger.record_intent(dead_intent(batch_id, backend, (key, custom_id), len(body), dead, now, recorded=now - 120))
    uri = f"gs://{BUCKET}/lowtide/{batch_id}/input.jsonl"
    _vertex(w).storage.put(BUCKET, f"lowtide/{batch_id}/input.jsonl", body, now=now)
    ledger.record_create_step(batch_id, MODEL_STEP, model)
    ledger.record_create_step(batch_id, INPUT_FILE_STEP, uri)
    w.witnessed["orphan"] = [batch_id, uri]
    w.emu.calls.clear()


# -- the real Vertex AI, opted into ------------------------------------------------------------------------------------

REAL_MODEL_ENV = "LOWTIDE_VERTEX_REAL_CLAUDE_MODEL"


@given('a real Vertex Claude actor "{name}" with:')
def step_claude_real_actor(context: Context, name: str) -> None:
    model = os.environ.get(REAL_MODEL_ENV)
    if not model:
        context.scenario.skip(f"set {REAL_MODEL_ENV} to a Claude model the project has enabled on Vertex AI")
        return
    given = yaml_doc(context.text)
    section = {"project": os.environ[REAL_PROJECT_ENV], "credentials": "default"}
    if given.get("batch_processing") == "batch":
        bucket = os.environ.get(REAL_BUCKET_ENV)
        if not bucket:
            context.scenario.skip(f"set {REAL_BUCKET_ENV} to a bucket the credentials may write")
            return
        section["bucket"] = bucket
    w = world(context)
    w.client = None
    settings = {"name": name, "provider": "vertex_claude", "model": model, **given}
    # Real time: the scenario's virtual clock would poll the real API without waiting.
    w.add_actor({**settings, "provider_options": {"vertex_claude": section}}, clock=SystemClock())


@then("a real answer came back from Claude on Vertex AI, priced")
def step_claude_real_answer(context: Context) -> None:
    response = world(context).answer()
    assert response.text.strip(), response
    assert response.provider == "vertex_claude", response
    assert response.usage.output_tokens > 0, response.usage
    assert response.cost is not None, response
