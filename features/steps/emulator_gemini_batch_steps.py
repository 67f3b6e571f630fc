"""Steps of features/emulator_gemini_batch.feature about jobs: the official google-genai SDK creating, reading,
listing, cancelling and deleting Gemini batch jobs on the emulator, its clock and its faults (the files' steps are
emulator_gemini_files_steps.py, what both share features/support/gemini_batches.py). Every step text names "Gemini",
so that it cannot clash with the other step modules."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import _support  # noqa: F401  (registers the Q type of quoted step text)
import httpx2
from gemini_batches import (
    KEY,
    MODEL,
    Context,
    assert_fails,
    emulation_of,
    inline_request,
    inline_responses,
    listed_pages,
    live_answer_text,
    raw_job,
    refresh_job,
    run_call,
    scenario,
    start_emulator,
)
from google import genai
from google.genai import types
from step_context import given, then, when

from lowtide.emulator import Emulator
from lowtide.emulator.core.faults import garble_kind
from lowtide.emulator.core.outcomes import outcome_kind


@given('the Gemini batch emulator runs on a manual clock, called through API version "{version}"')
def step_start(context: Context, version: str) -> None:
    start_emulator(context, version)


@given("the Gemini batch emulator runs on a manual clock, cancels taking {seconds:d} seconds")
def step_start_cancel(context: Context, seconds: int) -> None:
    start_emulator(context, "v1beta", cancel_seconds=float(seconds))


@given("the Gemini batch emulator runs on a manual clock taking {hours:d} hours per job")
def step_start_slow(context: Context, hours: int) -> None:
    start_emulator(context, "v1beta", processing_seconds=hours * 3600.0)


@given("the Gemini batch emulator runs on a manual clock with inline batches of at most {limit:d} bytes")
def step_start_small(context: Context, limit: int) -> None:
    start_emulator(context, "v1beta", max_batch_bytes=limit)


@when("{seconds:d} seconds pass on the Gemini batch clock")
def step_advance(context: Context, seconds: int) -> None:
    scenario(context).clock.advance(seconds)


@given('the Gemini emulator\'s request "{key}" is armed to fail with "{error_type}"')
def step_arm(context: Context, key: str, error_type: str) -> None:
    scenario(context).emulator.faults.outcome(key, "errored", error_type=error_type)


@when('the Gemini batch emulator\'s "{route}" fails next with {status:d} asking for a wait of {seconds:d} seconds')
def step_fault_wait(context: Context, route: str, status: int, seconds: int) -> None:
    scenario(context).emulator.faults.fail_next(route, status, retry_after=seconds)


@when('the Gemini batch emulator\'s "{route}" fails next with {status:d}')
def step_fault(context: Context, route: str, status: int) -> None:
    scenario(context).emulator.faults.fail_next(route, status)


@given('the Gemini emulator\'s "{route}" drops its next answer after committing')
def step_drop(context: Context, route: str) -> None:
    scenario(context).emulator.faults.drop_after_commit(route)


@given("the Gemini emulator fails its next batch")
def step_fail_next_batch(context: Context) -> None:
    emulation_of(scenario(context)).fail_batches()


def _create(context: Context, name: str, src: Any) -> None:
    s = scenario(context)
    job = run_call(context, s.client.aio.batches.create(model=MODEL, src=src, config={"display_name": name}))
    if job is not None:
        s.job = job


@when('I create a Gemini batch "{name}" of "{model}" inline with the keys "{keys}"')
def step_create_inline(context: Context, name: str, model: str, keys: str) -> None:
    _create(context, name, [inline_request(key.strip()) for key in keys.split(",")])


@when('I create a Gemini batch "{name}" of "{model}" inline with {count:d} long requests')
def step_create_long(context: Context, name: str, model: str, count: int) -> None:
    requests: list[types.InlinedRequestDict] = [
        {"contents": [{"role": "user", "parts": [{"text": "tide " * 40}]}], "metadata": {"key": f"r{index}"}}
        for index in range(count)
    ]
    _create(context, name, requests)


@when('I create a Gemini batch "{name}" of "{model}" from the uploaded file')
def step_create_file(context: Context, name: str, model: str) -> None:
    file = scenario(context).file
    assert file is not None
    assert file.name is not None
    _create(context, name, file.name)


@when('I create Gemini batches named "{names}", a second apart')
def step_create_many(context: Context, names: str) -> None:
    for name in names.split(","):
        _create(context, name.strip(), [inline_request("a")])
        scenario(context).clock.advance(1)


@when("I cancel the Gemini batch")
def step_cancel(context: Context) -> None:
    s = scenario(context)
    assert s.job is not None
    assert s.job.name is not None
    run_call(context, s.client.aio.batches.cancel(name=s.job.name))


@when("I delete the Gemini batch")
def step_delete(context: Context) -> None:
    s = scenario(context)
    assert s.job is not None
    assert s.job.name is not None
    run_call(context, s.client.aio.batches.delete(name=s.job.name))
    assert s.error is None, s.error


@then('the Gemini batch is "{state}" with the display name "{name}"')
def step_state(context: Context, state: str, name: str) -> None:
    job = refresh_job(context)
    assert job.state == state, job.state
    assert job.display_name == name, job.display_name
    assert job.create_time is not None
    assert (job.end_time is not None) == job.done, job


@then("the Gemini batch stats count {total:d} requests, {failed:d} failed, {pending} pending")
def step_stats(context: Context, total: int, failed: int, pending: str) -> None:
    stats = raw_job(context)["metadata"]["batchStats"]
    assert stats["requestCount"] == str(total), stats
    assert stats["failedRequestCount"] == str(failed), stats
    waiting = int(stats["pendingRequestCount"])
    assert (waiting == 0) if pending == "none" else (0 < waiting < total), stats
    if pending == "none":
        assert int(stats["successfulRequestCount"]) == total - failed, stats


@then("each Gemini batch answer, joined by key, is the answer generateContent gives its prompt")
def step_each_answer(context: Context) -> None:
    responses = inline_responses(context)
    assert responses
    for key, response in responses.items():
        assert response.error is None, response.error
        assert response.response is not None
        assert response.response.text == live_answer_text(context, key), (key, response.response.text)


@then('the Gemini batch answer for "{key}" is the answer generateContent gives its prompt')
def step_one_answer(context: Context, key: str) -> None:
    response = inline_responses(context)[key]
    assert response.response is not None, response
    assert response.response.text == live_answer_text(context, key)


@then('the Gemini batch answer for "{key}" is the error {code:d} mentioning "{mention}"')
def step_one_error(context: Context, key: str, code: int, mention: str) -> None:
    response = inline_responses(context)[key]
    assert response.response is None, response
    assert response.error is not None
    assert response.error.code == code, response.error
    assert mention in (response.error.message or ""), response.error


@then("the Gemini batch has no output")
def step_no_output(context: Context) -> None:
    job = refresh_job(context)
    assert job.dest is None, job.dest
    assert "output" not in raw_job(context)["metadata"]


@then('the Gemini batch\'s error mentions "{mention}"')
def step_job_error(context: Context, mention: str) -> None:
    error = raw_job(context)["error"]
    assert mention in error["message"], error


@then('the Gemini batch list in pages of {size:d} is "{first}" then "{second}"')
def step_list_pages(context: Context, size: int, first: str, second: str) -> None:
    expected = [[name.strip() for name in page.split(",")] for page in (first, second)]
    assert listed_pages(context, size) == expected, listed_pages(context, size)


@then("the Gemini batch list is empty")
def step_list_empty(context: Context) -> None:
    assert listed_pages(context) == [[]], listed_pages(context)


@then('listing Gemini batches finds exactly one named "{name}"')
def step_list_one(context: Context, name: str) -> None:
    assert listed_pages(context) == [[name]], listed_pages(context)


@then('listing Gemini batches fails with {code:d} "{status}" mentioning "{mention}"')
def step_list_fails(context: Context, code: int, status: str, mention: str) -> None:
    run_call(context, scenario(context).client.aio.batches.list())
    assert_fails(context, code, status, mention)


@then('getting the Gemini batch fails with {code:d} "{status}" mentioning "{mention}"')
def step_get_fails(context: Context, code: int, status: str, mention: str) -> None:
    s = scenario(context)
    assert s.job is not None
    assert s.job.name is not None
    run_call(context, s.client.aio.batches.get(name=s.job.name))
    assert_fails(context, code, status, mention)


@then('the Gemini batch call fails with {code:d} "{status}" mentioning "{mention}"')
def step_fails(context: Context, code: int, status: str, mention: str) -> None:
    assert_fails(context, code, status, mention)


@then('the Gemini batch error asks for a retry delay of "{delay}"')
def step_retry(context: Context, delay: str) -> None:
    error = scenario(context).error
    assert error is not None
    assert isinstance(error.details, dict)
    details = error.details["error"]["details"]
    assert {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay} in details, details


@then("the Gemini batch create failed without an answer")
def step_dropped(context: Context) -> None:
    s = scenario(context)
    assert s.error is None, (s.error, s.failure)
    assert s.failure is not None, (s.error, s.failure)
    assert s.job is None


@then('the Gemini emulator created {count:d} batch holding the keys "{keys}"')
def step_created(context: Context, count: int, keys: str) -> None:
    gemini = emulation_of(scenario(context))
    assert gemini.created_batches == count
    assert dict(gemini.created_custom_ids) == {key.strip(): 1 for key in keys.split(",")}, gemini.created_custom_ids


@when('I post to the Gemini batch emulator "{path}" the body {body}')
def step_raw(context: Context, path: str, body: str) -> None:
    s = scenario(context)

    async def send() -> httpx2.Response:
        async with s.emulator.http_client() as http:
            if body.startswith("GET"):
                headers = {} if "without a key" in body else {"x-goog-api-key": KEY}
                return await http.get(path, headers=headers)
            return await http.post(path, content=body.encode(), headers={"x-goog-api-key": KEY})

    s.raw = context.runner.run(send())


@then('the Gemini batch raw answer is {code:d} "{status}" mentioning "{mention}"')
def step_raw_answer(context: Context, code: int, status: str, mention: str) -> None:
    raw = scenario(context).raw
    assert raw is not None
    error = raw.json()["error"]
    assert (raw.status_code, error["code"], error["status"]) == (code, code, status), raw.json()
    assert mention in error["message"], error


@given("the Gemini batch emulator runs on a manual clock with a state file")
def step_start_state(context: Context) -> None:
    folder = tempfile.TemporaryDirectory()
    context.cleanups.append(folder.cleanup)
    path = Path(folder.name) / "gemini-state.json"
    start_emulator(context, "v1beta", state_file=path)
    context.gbatch_state = path


@when("the Gemini batch emulator is started again from its state file")
def step_restart(context: Context) -> None:
    s = scenario(context)
    emulator = Emulator(clock=s.clock, processing_seconds=100.0, state_file=context.gbatch_state)
    options = types.HttpOptions(
        base_url=emulator.base_url, api_version="v1beta", httpx_async_client=emulator.http_client()
    )
    s.emulator = emulator
    s.client = genai.Client(api_key=KEY, http_options=options)


@then('the Gemini emulator created {count:d} batches holding the keys "{keys}"')
def step_created_many(context: Context, count: int, keys: str) -> None:
    step_created(context, count, keys)


@when('the Gemini batch emulator\'s "{route}" is cut after {lines:d} line')
def step_cut(context: Context, route: str, lines: int) -> None:
    scenario(context).emulator.faults.cut(route, after_lines=lines)


@given(
    'the Gemini emulator\'s request "{lost}" is lost, "{garbled}" garbled as "{kind}" and "{ended}" ends "{outcome}"'
)
def step_arm_many(context: Context, lost: str, garbled: str, kind: str, ended: str, outcome: str) -> None:
    faults = scenario(context).emulator.faults
    faults.lose(lost)
    faults.garble(garbled, garble_kind(kind))
    faults.outcome(ended, outcome_kind(outcome))


@then('the Gemini batch\'s inline answers name only the keys "{keys}"')
def step_inline_keys(context: Context, keys: str) -> None:
    found = inline_responses(context)
    assert sorted(found) == sorted(key.strip() for key in keys.split(",")), found


def _stats(context: Context) -> dict[str, Any]:
    s = scenario(context)

    async def fetch() -> dict[str, Any]:
        async with s.emulator.http_client() as http:
            return (await http.get("/_emulator/stats")).json()

    return context.runner.run(fetch())


@then('the Gemini emulator\'s stats show {count:d} batch with the keys "{keys}"')
def step_stats_keys(context: Context, count: int, keys: str) -> None:
    stats = _stats(context)
    assert stats["gemini_batches"] == stats["gemini_created_batches"] == count, stats
    assert stats["gemini_created_custom_ids"] == {key.strip(): 1 for key in keys.split(",")}, stats


@then("the Gemini emulator's stats show no batch")
def step_stats_none(context: Context) -> None:
    stats = _stats(context)
    assert stats["gemini_batches"] == stats["gemini_created_batches"] == 0, stats
    assert stats["gemini_created_custom_ids"] == {}, stats
    gemini = emulation_of(scenario(context))
    assert len(gemini.batches) == 0
    assert not gemini.files.sessions


@when("the Gemini batch emulator is reset")
def step_reset(context: Context) -> None:
    scenario(context).emulator.reset()


@then('the Gemini batch raw answer is a pending job "{name}" of priority "{priority}"')
def step_raw_job(context: Context, name: str, priority: str) -> None:
    raw = scenario(context).raw
    assert raw is not None
    metadata = raw.json()["metadata"]
    assert raw.status_code == 200, raw.text
    assert (metadata["displayName"], metadata["priority"], metadata["state"]) == (name, priority, "BATCH_STATE_PENDING")
