"""Steps for recorded real responses (features/recorded_shapes.feature, features/emulator_recorded_shapes.feature):
the lines and errors the real APIs were recorded sending (features/data/recorded/, where each came from in its
README), read through the providers' codecs, and held against what the emulator sends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol

from emulator_steps import base_params, create_batch, raw_call, request
from step_context import Context as StepContext
from step_context import then, when

from lowtide import ActorResponse, BatchProcessingMode, BatchRequestCanceled, BatchRequestErrored
from lowtide.batching.records import error_from_json, error_to_json, response_from_json
from lowtide.emulator.anthropic.emulation import ACCOUNT_HEADERS
from lowtide.registry import default_registry

RECORDED = Path(__file__).resolve().parents[1] / "data" / "recorded"


class Context(StepContext, Protocol):
    recorded_outcomes: dict[str, object]
    emulated_lines: dict[str, dict[str, Any]]


def scenario(context: Context) -> Any:
    """The emulator's scenario, as emulator_steps (loaded by behave apart from the module imported here) made it."""
    found = getattr(context, "emulator_scenario", None)
    assert found is not None, "start the emulator first"
    return found


def recorded_lines(name: str) -> dict[str, dict[str, Any]]:
    lines = (RECORDED / name).read_text().splitlines()
    return {line["custom_id"]: line for line in map(json.loads, lines)}


def recorded_error(name: str) -> dict[str, Any]:
    return json.loads((RECORDED / "anthropic" / "errors.json").read_text())[name]


def shape(value: object) -> object:
    """What a JSON value is made of, without its values: keys and the kinds of their values."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(item) for item in value[:1]]
    return "null" if value is None else type(value).__name__


# -- through the codecs ----------------------------------------------------------------------------------------------


@when('the recorded lines "{name}" are read by the "{provider}" provider\'s codec')
def step_decode(context: Context, name: str, provider: str) -> None:
    codec = default_registry().resolve(provider, BatchProcessingMode.BATCH).factory.codec
    assert codec is not None, provider
    outcomes: dict[str, object] = {}
    for custom_id, line in recorded_lines(name).items():
        settled, stored = codec.line_outcome(line, batch_id="batch-recorded", request_id=None)
        # An answer as a caller gets it: built from what the ledger stores.
        outcomes[custom_id] = response_from_json(stored) if stored is not None else settled
    context.recorded_outcomes = outcomes


@then("the recorded outcomes are:")
def step_outcomes(context: Context) -> None:
    assert context.table is not None
    assert set(context.recorded_outcomes) == {row["custom_id"] for row in context.table}, context.recorded_outcomes
    for row in context.table:
        outcome = context.recorded_outcomes[row["custom_id"]]
        assert type(outcome).__name__.partition("[")[0] == row["outcome"], (row["custom_id"], outcome)
        if isinstance(outcome, ActorResponse):
            got = (outcome.model, outcome.text, str(outcome.usage.input_tokens), str(outcome.usage.output_tokens))
            assert got == (row["model"], row["text"], row["input"], row["output"]), (row, got)
            # The model the API names (a dated id, where the request named an alias) is priced, at batch prices.
            assert outcome.cost is not None, outcome
            assert outcome.cost.pricing == "batch", outcome.cost
            assert outcome.cost.total_usd > 0, outcome.cost
        if isinstance(outcome, BatchRequestErrored):
            got = (outcome.error_type, outcome.request_id or "none")
            assert got == (row["error type"], row["request id"]), (row, got)
            # Kept by the ledger as it came: the request id goes wherever the error goes.
            again = error_from_json(error_to_json(outcome))
            assert isinstance(again, BatchRequestErrored), again
            assert (again.error_type, again.request_id, again.api_message) == (
                outcome.error_type,
                outcome.request_id,
                outcome.api_message,
            ), again
        if isinstance(outcome, BatchRequestCanceled):
            assert outcome.custom_id == row["custom_id"], outcome


# -- the emulator held to them ---------------------------------------------------------------------------------------


@when("I create emulator batches like the recorded ones and they end")
def step_batches_like_recorded(context: Context) -> None:
    """One batch with the recorded succeeded and errored requests, one canceled at once with the canceled one."""
    s = scenario(context)
    create_batch(
        s,
        [
            request("ok-1", base_params("Reply with exactly: 1", model="claude-haiku-4-5", max_tokens=5)),
            request("bad-model", base_params("Reply with exactly: 1", model="claude-does-not-exist-9")),
            request("image_url", base_params("Describe the picture")),
        ],
    )
    ended = s.batch.id
    create_batch(s, [request("c-1", base_params("Reply with exactly: 1"))])
    s.run(lambda: s.sdk.messages.batches.cancel(s.batch.id))
    s.clock.advance(3600)
    context.emulated_lines = {}
    for batch_id in (ended, s.batch.id):
        response = raw_call(s, "GET", f"/v1/messages/batches/{batch_id}/results")
        assert response.status_code == 200, response.text
        for line in response.text.splitlines():
            parsed = json.loads(line)
            context.emulated_lines[parsed["custom_id"]] = parsed


@then('every emulated line has the shape of its recorded line in "{name}"')
def step_same_shapes(context: Context, name: str) -> None:
    recorded = recorded_lines(name)
    assert set(context.emulated_lines) == set(recorded), context.emulated_lines
    for custom_id, line in recorded.items():
        assert shape(context.emulated_lines[custom_id]) == shape(line), (
            custom_id,
            shape(context.emulated_lines[custom_id]),
            shape(line),
        )


@then("the emulated lines carry the recorded values:")
def step_recorded_values(context: Context) -> None:
    assert context.table is not None
    for row in context.table:
        value: Any = context.emulated_lines[row["custom_id"]]
        for part in row["field"].split("."):
            value = value[part]
        expected = row["value"]
        if expected.endswith("*"):
            assert isinstance(value, str), (row, value)
            assert value.startswith(expected[:-1]), (row, value)
        else:
            assert json.dumps(value) == expected, (row, json.dumps(value))


@then('the emulator raw answer is the recorded error "{name}"')
def step_recorded_error(context: Context, name: str) -> None:
    response = scenario(context).raw
    assert response is not None
    recorded = recorded_error(name)
    body = response.json()
    # The recorded message names the recorded batch's id: the emulated one names its own.
    message = body["error"]["message"]
    for word in message.split():
        if word.startswith("msgbatch_"):
            message = message.replace(word, next(w for w in recorded["message"].split() if w.startswith("msgbatch_")))
    got = (response.status_code, body["type"], body["error"]["type"], message)
    assert got == (recorded["status"], "error", recorded["type"], recorded["message"]), got


@then('the emulator raw answer carries "{header}: {value}"')
def step_raw_header(context: Context, header: str, value: str) -> None:
    response = scenario(context).raw
    assert response is not None
    assert response.headers.get(header) == value, response.headers


@then('the emulator raw answer carries no "{header}" header')
def step_raw_no_header(context: Context, header: str) -> None:
    response = scenario(context).raw
    assert response is not None
    assert header not in response.headers, response.headers


@then("the emulator raw answer names the account's organization and workspace")
def step_account_headers(context: Context) -> None:
    response = scenario(context).raw
    assert response is not None
    for header, value in ACCOUNT_HEADERS.items():
        assert response.headers.get(header) == value, (header, response.status_code, response.headers)
