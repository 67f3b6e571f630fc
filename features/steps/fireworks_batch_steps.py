"""Steps for Fireworks' Batch Inference API (features/fireworks_batch.feature): what the emulated Fireworks account
holds (datasets, jobs, the requests its jobs were sent), prices, a lost create, a deleted job, and the one scenario
that runs against Fireworks itself when a person asks for it (LOWTIDE_REAL_FIREWORKS=1)."""

from __future__ import annotations

import os
import uuid
from collections import Counter
from typing import Protocol, cast

from _batch_providers import assert_cancelled_unanswered, assert_priced, dead_program
from _support import World, names, world
from behave.model import Scenario
from fireworks_steps import FIREWORKS_ACCOUNT
from step_context import Context, given, then

from lowtide import ActorResponse, BatchProcessingMode
from lowtide.core.clock import SystemClock
from lowtide.emulator.fireworks.emulation import FireworksEmulation
from lowtide.providers.fireworks.batch_backend import DATASET_STEP, FireworksBatchBackend

_MODEL = "accounts/fireworks/models/gpt-oss-20b"
REAL_SWITCH = "LOWTIDE_REAL_FIREWORKS"
"""Set to 1 (with FIREWORKS_API_KEY and FIREWORKS_ACCOUNT_ID) to run the real-API scenario; CI never sets it."""


class _Running(Context, Protocol):
    """A context whose running scenario a step may skip."""

    scenario: Scenario


def _fireworks(w: World) -> FireworksEmulation:
    return w.emu.emulation(FireworksEmulation)


@given("the Fireworks API will commit the next job create but drop the connection before answering")
def step_drop_create(context: Context) -> None:
    world(context).emu.faults.drop_after_commit("fireworks.batch_jobs.create")


@then("the Fireworks API was sent each of these requests once: {keys}")
def step_sent_once(context: Context, keys: str) -> None:
    w = world(context)
    created = _fireworks(w).created_custom_ids
    assert created == Counter({w.custom_id(key): 1 for key in names(keys)}), created


@then("every answer was priced at Fireworks' batch prices, half of its live ones")
def step_batch_priced(context: Context) -> None:
    w = world(context)
    answers = [a for a in w.asked.values() if isinstance(a, ActorResponse)] or [w.answer()]
    assert_priced(answers, _MODEL, "fireworks", BatchProcessingMode.BATCH)


@then("Fireworks' job is named for lowtide's intent and its {count:d} requests, in the actor's account")
def step_named(context: Context, count: int) -> None:
    w = world(context)
    [recorded] = w.ledger().batches()
    [job] = _fireworks(w).fireworks.jobs.values()
    assert job.account == FIREWORKS_ACCOUNT, job
    assert job.job_id == f"lowtide-{recorded.id.removeprefix('lt_')}-{count}", (job.job_id, recorded.id)
    assert recorded.provider_batch_id == f"accounts/{FIREWORKS_ACCOUNT}/batchInferenceJobs/{job.job_id}", recorded
    assert job.model == _MODEL, job


@then("the Fireworks account holds {count:d} batch inference job")
@then("the Fireworks account holds {count:d} batch inference jobs")
def step_jobs(context: Context, count: int) -> None:
    jobs = _fireworks(world(context)).fireworks.jobs
    assert len(jobs) == count, jobs


@then("Fireworks' deleted job has ended with {canceled:d} request canceled and none answered")
def step_deleted(context: Context, canceled: int) -> None:
    assert_cancelled_unanswered(world(context), canceled, "high")


class _Died(Exception):
    """The program died here: after its dataset was uploaded and recorded, before its job was created."""


@given(
    'the ledger holds a Fireworks intent for the key "{key}" asking "{prompt}", its dataset uploaded by a program that'
    " died before creating the job"
)
def step_orphan_dataset(context: Context, key: str, prompt: str) -> None:
    w = world(context)
    backend = w.current_actor().batch_backend()
    assert isinstance(backend, FireworksBatchBackend), backend
    dead = dead_program(w, key, prompt, f"lt_{uuid.uuid4().hex}", backend=backend, model=_MODEL)
    intent, ledger, body = dead.batch_id, dead.ledger, dead.body

    class Steps:
        async def done(self, step: str, value: str) -> None:
            ledger.record_create_step(intent, step, value)
            if step == DATASET_STEP:
                raise _Died

    try:
        w.run(backend.create(body, 1, intent_id=intent, steps=Steps()))
    except _Died:
        pass
    else:
        raise AssertionError("the program was meant to die before creating its job")
    w.witnessed["orphan"] = [intent]
    w.emu.calls.clear()


@then("the Fireworks job was created from the dataset the dead program uploaded")
def step_from_orphan(context: Context) -> None:
    w = world(context)
    [intent] = w.witnessed["orphan"]
    [job] = _fireworks(w).fireworks.jobs.values()
    assert job.input_dataset == f"accounts/{FIREWORKS_ACCOUNT}/datasets/lowtide-{intent.removeprefix('lt_')}-input", job


# Against Fireworks itself: skipped unless a person asks for it (no CI run has a key).


@given("the real Fireworks API, when asked for")
def step_real(context: Context) -> None:
    wanted = os.environ.get(REAL_SWITCH) == "1"
    ready = all(os.environ.get(name) for name in ("FIREWORKS_API_KEY", "FIREWORKS_ACCOUNT_ID"))
    if not (wanted and ready):
        cast("_Running", context).scenario.skip(
            f"set {REAL_SWITCH}=1, FIREWORKS_API_KEY and FIREWORKS_ACCOUNT_ID to run it"
        )


@given('a Fireworks actor "{name}" in batch mode against the real API')
def step_real_actor(context: Context, name: str) -> None:
    w = world(context)
    settings = {
        "name": name,
        "provider": "fireworks",
        "model": os.environ.get("LOWTIDE_REAL_FIREWORKS_MODEL", "accounts/fireworks/models/llama-v3p1-8b-instruct"),
        "max_tokens": 16,
        "batch_processing": "batch",
        "batch": {"poll_interval": 30, "max_wait": 6 * 3600},
    }
    w.add_actor(settings, clock=SystemClock())


@then("the call was answered with some text, priced")
def step_real_answered(context: Context) -> None:
    answer = world(context).answer()
    assert answer.text.strip(), answer
    assert answer.cost is None or answer.cost.pricing == "batch", answer.cost
