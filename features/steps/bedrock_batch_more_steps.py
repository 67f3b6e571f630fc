"""Steps for the Bedrock batch scenarios of features/bedrock_batch.feature beyond the engine's common ones: the
provider called directly, the bucket after a run (its input records against the ledger's), lowtide's cancel and the
backend's listing of recent jobs."""

from __future__ import annotations

import json
from typing import Any

import boto3
from _support import World, world
from botocore.config import Config
from step_context import Context, given, then, when

from lowtide import BatchProcessingMode
from lowtide.calls import parking
from lowtide.emulator.bedrock.emulation import BedrockEmulation
from lowtide.emulator.bedrock.s3 import DEFAULT_BUCKET
from lowtide.providers.bedrock.batch import BedrockBatchProvider

_ROLE = "arn:aws:iam::123456789012:role/lowtide-batch"
_MODEL = "amazon.nova-micro-v1:0"


def _client(w: World, service: str) -> Any:
    [url] = w.witnessed["server url"]
    return boto3.client(service, endpoint_url=str(url), config=Config(retries={"total_max_attempts": 1}))


def _inputs(w: World) -> list[str]:
    objects = w.emu.emulation(BedrockEmulation).objects.buckets[DEFAULT_BUCKET]
    return sorted(key for key in objects if key.startswith("lowtide/input/"))


@when('the Bedrock batch provider answers "{prompt}" alone, outside the ledger')
def step_direct(context: Context, prompt: str) -> None:
    w = world(context)
    actor = w.current_actor()
    provider = actor.provider(BatchProcessingMode.BATCH)
    assert isinstance(provider, BedrockBatchProvider), provider
    w.response = w.attempt_async(lambda: provider.complete(actor.request(prompt)))


@then("the bucket still holds the input of the job")
def step_input_kept(context: Context) -> None:
    w = world(context)
    assert len(_inputs(w)) == 1, _inputs(w)


@then("the job's input holds each request's stored Converse body without its modelId, and the job names its model")
def step_input_records(context: Context) -> None:
    """Each record of the input object, read exactly (`json`: every integer whole, NaN kept), is the ledger's stored
    body less its `modelId`, whichever way the backend read and wrote it; the job names the model the bodies did."""
    w = world(context)
    [key] = _inputs(w)
    data = w.emu.emulation(BedrockEmulation).objects.buckets[DEFAULT_BUCKET][key].data
    records = {record["recordId"]: record["modelInput"] for record in map(json.loads, data.splitlines())}
    stored = w.ledger().requests_for(sorted(w.asked))
    assert len(records) == len(stored) == len(w.asked), (records, stored)
    for request in stored:
        body = dict(request.params)
        assert body.pop("modelId") == _MODEL, request.params
        sent = records[request.custom_id]
        assert "modelId" not in sent, sent
        assert json.dumps(sent, sort_keys=True) == json.dumps(body, sort_keys=True), (sent, body)
    [job] = _client(w, "bedrock").list_model_invocation_jobs(maxResults=100)["invocationJobSummaries"]
    assert job["modelId"] == _MODEL, job


@then("the bucket holds no input of lowtide's")
def step_no_input(context: Context) -> None:
    w = world(context)
    assert _inputs(w) == [], _inputs(w)


@when('lowtide cancels the Bedrock key "{key}"')
def step_cancel_key(context: Context, key: str) -> None:
    w = world(context)
    w.in_program(lambda: parking.cancel(w.ledger(), key, clock=w.clock))


@given("the account holds {count:d} batch inference jobs made by boto3")
def step_many_jobs(context: Context, count: int) -> None:
    w = world(context)
    record = {"recordId": "r0", "modelInput": {"messages": [{"role": "user", "content": [{"text": "Tide?"}]}]}}
    _client(w, "s3").put_object(Bucket=DEFAULT_BUCKET, Key="in/one.jsonl", Body=json.dumps(record).encode())
    control = _client(w, "bedrock")
    for number in range(count):
        control.create_model_invocation_job(
            jobName=f"tides-{number:03d}",
            roleArn=_ROLE,
            clientRequestToken=f"token-{number:03d}",
            modelId=_MODEL,
            inputDataConfig={"s3InputDataConfig": {"s3Uri": f"s3://{DEFAULT_BUCKET}/in/one.jsonl"}},
            outputDataConfig={"s3OutputDataConfig": {"s3Uri": f"s3://{DEFAULT_BUCKET}/out/"}},
        )
        w.clock.advance(1)
    w.emu.calls.clear()


@when("lowtide lists the Bedrock jobs submitted since an hour ago")
def step_recent(context: Context) -> None:
    w = world(context)
    backend = w.current_actor().batch_backend()
    w.value = w.run(backend.recent(created_after=w.clock.now() - 3600))


@then("it listed {count:d} jobs, newest first")
def step_listed(context: Context, count: int) -> None:
    found = world(context).value
    names = [batch.handle["jobName"] for batch in found]
    assert names == [f"tides-{number:03d}" for number in reversed(range(count))], names


@when('the Bedrock output record of "{key}" holds the error {error}')
def step_record_error_line(context: Context, key: str, error: str) -> None:
    from lowtide.providers.bedrock.batch_codec import BedrockBatchCodec

    line = {"recordId": key, "modelInput": {}, "error": json.loads(error)}
    w = world(context)
    w.value, _ = BedrockBatchCodec().line_outcome(line, batch_id="arn:job/1", request_id=None)


@then('its call failed with a BatchRequestErrored of the type "{error_type}" saying "{says}", {retried}')
def step_record_error_outcome(context: Context, error_type: str, says: str, retried: str) -> None:
    from lowtide import BatchRequestErrored

    outcome = world(context).value
    assert isinstance(outcome, BatchRequestErrored), outcome
    assert outcome.error_type == error_type, outcome.error_type
    assert says in str(outcome), str(outcome)
    assert outcome.retryable is (retried == "to be tried again"), outcome.retryable
