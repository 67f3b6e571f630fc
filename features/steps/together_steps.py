"""Steps only Together actors have (features/together_batch.feature): its jobs' input files, named after their
intents, its upload's three steps, and what a Together process imports. The steps Groq and Together actors share are
in compat_provider_steps.py."""

from __future__ import annotations

import json
import subprocess
import sys

from _compat_apis import TOGETHER
from _support import world
from step_context import Context, given, then, when

from lowtide.providers.together.batch_backend import file_name


@then("the Together job was created from an input file named after its intent and request count")
def step_together_job_file(context: Context) -> None:
    w = world(context)
    [job] = TOGETHER.listed(w)
    assert job.endpoint == "/v1/chat/completions", job.endpoint
    [recorded] = w.ledger().batches()
    assert recorded.provider_batch_id == job.id, recorded
    stored = w.run(TOGETHER.client(w).files.retrieve(job.input_file_id))
    assert stored.filename == file_name(recorded.id, recorded.request_count), (stored.filename, recorded)
    assert stored.purpose == "batch-api", stored.purpose


@then("the Together job was created from the file the dead program uploaded")
def step_together_resumed(context: Context) -> None:
    w = world(context)
    _, file_id = w.witnessed["orphan"]
    [job] = TOGETHER.listed(w)
    assert job.input_file_id == file_id, (job.input_file_id, file_id)


@given("the Together API will store the next uploaded file but drop the connection before answering")
def step_together_drop_upload(context: Context) -> None:
    world(context).emu.faults.drop_after_commit("together.files.preprocess")


@when("a fresh Python imports the together SDK and lowtide's Together batch and live providers")
def step_together_fresh_import(context: Context) -> None:
    code = (
        "import json, sys, together\n"
        "import lowtide.providers.together.batch, lowtide.providers.together.live\n"
        "print(json.dumps(sorted(name for name in sys.modules if name.split('.')[0] in ('groq', 'openai'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    world(context).witnessed["sdk modules"] = json.loads(done.stdout)


@then("it has imported neither the groq SDK nor the openai SDK")
def step_together_no_other_sdk(context: Context) -> None:
    loaded = world(context).witnessed["sdk modules"]
    assert loaded == [], f"SDK modules loaded: {loaded[:20]}"
