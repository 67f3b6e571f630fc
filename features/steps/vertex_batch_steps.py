"""Steps for Vertex AI actors in batch mode (features/vertex_batch.feature): the emulator on a loopback socket (its
Vertex AI routes and its Cloud Storage JSON API on one port), actors of `provider: vertex` building their own
google-genai and google-cloud-storage clients from their settings, anonymously, on the scenario's clock."""

from __future__ import annotations

import json
from typing import Any

from _batch_providers import assert_batch_priced, dead_program
from _support import World, world, yaml_doc
from step_context import Context, given, then, when

from lowtide.emulator.vertex.emulation import VertexEmulation
from lowtide.providers.gemini.batch_backend import display_name
from lowtide.providers.vertex.batch_backend import INPUT_FILE_STEP, MODEL_STEP, VertexBatchBackend

BUCKET = "tide-batches"


def _vertex(w: World) -> VertexEmulation:
    return w.emu.emulation(VertexEmulation)


@given("an emulated Vertex AI and Cloud Storage on a socket, whose jobs take {seconds:g} seconds")
def step_vertex_socket(context: Context, seconds: float) -> None:
    world(context).serve_emulator(processing_seconds=seconds)


def _batch_settings(w: World, name: str, text: str | None) -> dict[str, Any]:
    given = yaml_doc(text)
    vertex = {"project": "tide-project", "location": "us-central1", "bucket": BUCKET, **given.pop("vertex", {})}
    return {
        "name": name,
        "provider": "vertex",
        "model": "gemini-2.5-flash",
        "base_url": w.witnessed["server url"][0],
        "batch_processing": "batch",
        **given,
        "provider_options": {"vertex": vertex},
    }


@given('a Vertex batch actor "{name}" with:')
def step_vertex_batch_actor(context: Context, name: str) -> None:
    w = world(context)
    w.add_actor(_batch_settings(w, name, context.text))


@when('a Vertex batch actor "{name}" is configured with:')
def step_vertex_batch_actor_configured(context: Context, name: str) -> None:
    w = world(context)
    w.attempt(lambda: w.add_actor(_batch_settings(w, name, context.text)))


@given("Vertex AI will commit the next batch job but drop the connection before answering")
def step_vertex_drop_after_commit(context: Context) -> None:
    world(context).emu.faults.drop_after_commit("vertex.batches.create")


@given("Vertex AI will fail the next batch job it creates")
def step_vertex_fail_job(context: Context) -> None:
    _vertex(world(context)).jobs.fail_jobs(1)


@when("its Vertex batch job is cancelled in the console")
def step_vertex_cancel_job(context: Context) -> None:
    jobs = _vertex(world(context)).jobs
    [name] = list(jobs.jobs)
    jobs.cancel(name)


@then("Vertex AI holds {count:d} batch job")
def step_vertex_job_count(context: Context, count: int) -> None:
    jobs = _vertex(world(context)).jobs.jobs
    assert len(jobs) == count, list(jobs)


@then("the Vertex batch job carries lowtide's intent id and request count in its display name")
def step_vertex_display_name(context: Context) -> None:
    w = world(context)
    [job] = _vertex(w).jobs.jobs.values()
    [batch] = w.ledger().batches()
    assert job.display_name == display_name(batch.id, batch.request_count), (job.display_name, batch)


@then("each custom id was sent to Vertex AI once")
def step_vertex_sent_once(context: Context) -> None:
    created = _vertex(world(context)).jobs.created_custom_ids
    assert created, created
    assert all(count == 1 for count in created.values()), created


@then('the bucket holds the job\'s answers under "{prefix}", and no input file')
def step_vertex_bucket(context: Context, prefix: str) -> None:
    objects = list(_vertex(world(context)).storage.buckets.get(BUCKET, {}))
    assert objects, objects
    assert all(name.startswith(prefix) and "/output/prediction-model-" in name for name in objects), objects


@then("every Vertex answer was priced at batch prices, half the live equivalent")
def step_vertex_batch_priced(context: Context) -> None:
    assert_batch_priced(world(context), "vertex")


def _backend(w: World) -> VertexBatchBackend:
    backend = w.current_actor().batch_backend()
    assert isinstance(backend, VertexBatchBackend), backend
    return backend


@given(
    'the ledger holds a Vertex intent for the key "{key}" asking "{prompt}", its input written to the bucket by a '
    "program that died before creating the job"
)
def step_vertex_orphan_intent(context: Context, key: str, prompt: str) -> None:
    w = world(context)

    def line(custom_id: str, params: dict[str, Any]) -> bytes:
        request = {name: value for name, value in params.items() if name != "model"}
        return json.dumps({"key": custom_id, "request": request}).encode() + b"\n"

    dead = dead_program(w, key, prompt, "lt_0123456789abcdef0123456789abcdef", backend=_backend(w), body=line)
    batch_id = dead.batch_id
    uri = f"gs://{BUCKET}/lowtide/{batch_id}/input.jsonl"
    _vertex(w).storage.put(BUCKET, f"lowtide/{batch_id}/input.jsonl", dead.body, now=w.clock.now())
    dead.ledger.record_create_step(batch_id, MODEL_STEP, dead.model)
    dead.ledger.record_create_step(batch_id, INPUT_FILE_STEP, uri)
    w.witnessed["orphan"] = [batch_id, uri]
    w.emu.calls.clear()


@given("that input was deleted from the bucket since")
def step_vertex_orphan_gone(context: Context) -> None:
    w = world(context)
    batch_id, _ = w.witnessed["orphan"]
    _vertex(w).storage.delete(BUCKET, f"lowtide/{batch_id}/input.jsonl")


@given('Vertex AI will fail the next "{route}" call with status {status:d}')
def step_vertex_fail_next(context: Context, route: str, status: int) -> None:
    world(context).emu.faults.fail_next(route, status)


@then("the Vertex batch job was created from the file the dead program wrote, under its intent id")
def step_vertex_job_from_orphan(context: Context) -> None:
    w = world(context)
    batch_id, uri = w.witnessed["orphan"]
    [job] = _vertex(w).jobs.jobs.values()
    assert job.source == uri, job
    assert job.display_name == display_name(batch_id, 1), job.display_name


@then("the bucket holds no file any more")
def step_vertex_bucket_empty(context: Context) -> None:
    objects = list(_vertex(world(context)).storage.buckets.get(BUCKET, {}))
    assert objects == [], objects
