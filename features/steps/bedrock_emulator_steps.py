"""Steps for the refusals and the bookkeeping of the emulator's AWS account (features/emulator_bedrock.feature):
boto3 with its own parameter checks off (so that the account's checks answer, as AWS's do for any caller), raw
signed calls where boto3 would not send what is tested, and the account restarted from its state file."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any, cast

import boto3
import httpx2
from _support import World, world
from botocore.config import Config
from botocore.exceptions import ClientError
from step_context import Context, given, then, when

from lowtide.emulator import Emulator
from lowtide.emulator.bedrock.emulation import BedrockEmulation
from lowtide.emulator.bedrock.s3 import DEFAULT_BUCKET

_ROLE = "arn:aws:iam::123456789012:role/lowtide-batch"
_MODEL = "amazon.nova-micro-v1:0"
_SIGNED = {
    "authorization": "AWS4-HMAC-SHA256 Credential=AKIDLOWTIDEEMULATOR/20270115/us-east-1/bedrock/aws4_request, "
    "SignedHeaders=host, Signature=00"
}


def _url(w: World) -> str:
    [url] = w.witnessed["server url"]
    return str(url)


def _client(w: World, service: str) -> Any:
    """A boto3 client that sends what it is given: the account, not boto3, says what is wrong."""
    config = Config(retries={"total_max_attempts": 1}, parameter_validation=False)
    return boto3.client(service, endpoint_url=_url(w), config=config)


def _attempt(w: World, call: Any) -> None:
    w.value = None
    try:
        w.value = call()
    except ClientError as exc:
        w.value = exc


def _arn(w: World) -> str:
    [arn, *_] = w.witnessed["arns"]
    return str(arn)


def _serve(w: World, emulator: Emulator) -> None:
    w.serve_emulator(emulator)


@when("boto3 calls {service}'s {operation:w} with:")
def step_boto_call(context: Context, service: str, operation: str) -> None:
    w = world(context)
    arguments = json.loads(context.text or "{}")
    client = _client(w, service)
    _attempt(w, lambda: getattr(client, operation)(**arguments))


@then('boto3 was refused with {code:w} saying "{text}"')
def step_refused_saying(context: Context, code: str, text: str) -> None:
    error = world(context).value
    assert isinstance(error, ClientError), error
    assert error.response["Error"]["Code"] == code, error.response
    assert text in error.response["Error"]["Message"], error.response


@then("the model's inputModalities are {modalities}")
def step_modalities(context: Context, modalities: str) -> None:
    answer = world(context).value
    assert isinstance(answer, dict), answer
    details = cast("dict[str, Any]", answer)["modelDetails"]
    assert details["inputModalities"] == modalities.split(", "), details


@given("the account takes batch inference jobs of {count:d} records at most")
def step_max_records(context: Context, count: int) -> None:
    world(context).emu.emulation(BedrockEmulation).jobs.max_records = count


@given("the bucket holds these lines under in/records.jsonl:")
def step_lines(context: Context) -> None:
    w = world(context)
    text = (context.text or "").replace("\\n", "\n")
    if text.strip() != "<none>":
        _client(w, "s3").put_object(Bucket=DEFAULT_BUCKET, Key="in/records.jsonl", Body=text.encode())


@then('boto3 reads the job as {status:w}, with the message "{text}"')
def step_job_message(context: Context, status: str, text: str) -> None:
    w = world(context)
    job = _client(w, "bedrock").get_model_invocation_job(jobIdentifier=_arn(w))
    assert job["status"] == status, job["status"]
    assert text in job.get("message", ""), job.get("message")


@then('the job\'s output holds the record "{record}" failed with {status:d} saying "{text}"')
def step_output_error(context: Context, record: str, status: int, text: str) -> None:
    w = world(context)
    job_id = _arn(w).rsplit("/", 1)[-1]
    body = _client(w, "s3").get_object(Bucket=DEFAULT_BUCKET, Key=f"out/{job_id}/records.jsonl.out")["Body"].read()
    lines = {line["recordId"]: line for line in map(json.loads, body.splitlines())}
    assert sorted(lines) == ["bad", "good"], sorted(lines)
    error = lines[record]["error"]
    assert error["errorCode"] == status, error
    assert text in error["errorMessage"], error


@given("the account takes its time to stop a job: {seconds:g} seconds")
def step_cancel_seconds(context: Context, seconds: float) -> None:
    world(context).emu.cancel_seconds = seconds


@when("boto3 stops the job again")
def step_stop_again(context: Context) -> None:
    w = world(context)
    client = _client(w, "bedrock")
    _attempt(w, lambda: client.stop_model_invocation_job(jobIdentifier=_arn(w)))


@when('boto3 reads the job "{arn}"')
def step_read_job(context: Context, arn: str) -> None:
    w = world(context)
    client = _client(w, "bedrock")
    _attempt(w, lambda: client.get_model_invocation_job(jobIdentifier=arn))


@when('boto3 creates the jobs "{first}", "{second}", "{third}" and "{fourth}", a second apart')
def step_create_named(context: Context, first: str, second: str, third: str, fourth: str) -> None:
    w = world(context)
    control = _client(w, "bedrock")
    for name in (first, second, third, fourth):
        control.create_model_invocation_job(
            jobName=name,
            roleArn=_ROLE,
            clientRequestToken=f"token-{name}",
            modelId=_MODEL,
            inputDataConfig={"s3InputDataConfig": {"s3Uri": f"s3://{DEFAULT_BUCKET}/in/records.jsonl"}},
            outputDataConfig={"s3OutputDataConfig": {"s3Uri": f"s3://{DEFAULT_BUCKET}/out/"}},
        )
        w.clock.advance(1)


@then("boto3 lists these jobs:")
def step_list_jobs(context: Context) -> None:
    w = world(context)
    control = _client(w, "bedrock")
    for row in context.table:
        arguments = json.loads(row["filter"])
        names: list[str] = []
        while True:
            page = control.list_model_invocation_jobs(**arguments)
            names.extend(job["jobName"] for job in page["invocationJobSummaries"])
            if "nextToken" not in page:
                break
            arguments["nextToken"] = page["nextToken"]
        expected = [name.strip() for name in row["names"].split(",") if name.strip()]
        assert names == expected, (row["filter"], names)


@then('boto3\'s listing with {argument:w} {value} is refused with {code:w} saying "{text}"')
def step_list_refused(context: Context, argument: str, value: str, code: str, text: str) -> None:
    w = world(context)
    given: object = int(value) if value.isdigit() else value.strip('"')
    client = _client(w, "bedrock")
    _attempt(w, lambda: client.list_model_invocation_jobs(**{argument: given}))
    step_refused_saying(context, code, text)


@then('a signed call listing jobs since "{moment}" is refused with {code:w} saying "{text}"')
def step_signed_list(context: Context, moment: str, code: str, text: str) -> None:
    w = world(context)
    answer = httpx2.get(f"{_url(w)}/model-invocation-jobs", params={"submitTimeAfter": moment}, headers=_SIGNED)
    assert answer.status_code == 400, answer.status_code
    assert answer.headers["x-amzn-ErrorType"] == code, answer.headers
    assert text in answer.json()["message"], answer.json()


@when("a signed call without boto3 creates a job with no client request token")
def step_signed_create(context: Context) -> None:
    w = world(context)
    body = {
        "jobName": "tides",
        "roleArn": _ROLE,
        "modelId": _MODEL,
        "inputDataConfig": {"s3InputDataConfig": {"s3Uri": f"s3://{DEFAULT_BUCKET}/in/records.jsonl"}},
        "outputDataConfig": {"s3OutputDataConfig": {"s3Uri": f"s3://{DEFAULT_BUCKET}/out/"}},
    }
    answer = httpx2.post(f"{_url(w)}/model-invocation-job", json=body, headers=_SIGNED)
    assert answer.status_code == 200, answer.text
    assert answer.json()["jobArn"].startswith("arn:aws:bedrock:us-east-1:"), answer.json()


@then('a signed call without boto3 whose body is a JSON list is refused with {code:w} saying "{text}"')
def step_signed_list_body(context: Context, code: str, text: str) -> None:
    w = world(context)
    answer = httpx2.post(f"{_url(w)}/model-invocation-job", json=["tides"], headers=_SIGNED)
    assert answer.status_code == 400, answer.status_code
    assert answer.headers["x-amzn-ErrorType"] == code, answer.headers
    assert text in answer.json()["message"], answer.json()


@when('boto3 creates the bucket "{bucket}" twice')
def step_bucket_twice(context: Context, bucket: str) -> None:
    w = world(context)
    s3 = _client(w, "s3")
    first = s3.create_bucket(Bucket=bucket)
    _attempt(w, lambda: s3.create_bucket(Bucket=bucket))
    w.witnessed["bucket"] = [first]


@then("the first create made it, and the second was refused with {code:w}")
def step_bucket_refused(context: Context, code: str) -> None:
    w = world(context)
    [first] = w.witnessed["bucket"]
    assert first["ResponseMetadata"]["HTTPStatusCode"] == 200, first
    error = w.value
    assert isinstance(error, ClientError), error
    assert error.response["Error"]["Code"] == code, error.response


@then('boto3 finds the bucket "{bucket}" by a HEAD request')
def step_head_bucket(context: Context, bucket: str) -> None:
    w = world(context)
    answer = _client(w, "s3").head_bucket(Bucket=bucket)
    assert answer["ResponseMetadata"]["HTTPStatusCode"] == 200, answer


@when('boto3 writes an object to the bucket "{bucket}"')
def step_put_missing_bucket(context: Context, bucket: str) -> None:
    w = world(context)
    s3 = _client(w, "s3")
    _attempt(w, lambda: s3.put_object(Bucket=bucket, Key="tide.txt", Body=b"high"))


@given("the account keeps its state in a file")
def step_keep_state(context: Context) -> None:
    w = world(context)
    folder = Path(tempfile.mkdtemp(prefix="lowtide-bedrock-state-"))
    w.cleanups.append(lambda: shutil.rmtree(folder, ignore_errors=True))
    w.witnessed["state file"] = [str(folder / "state.json")]
    _serve(w, Emulator(clock=w.clock, processing_seconds=w.emu.processing_seconds, state_file=folder / "state.json"))


@when("the account is started again from its state file")
def step_restart(context: Context) -> None:
    w = world(context)
    [state_file] = w.witnessed["state file"]
    _serve(w, Emulator(clock=w.clock, processing_seconds=w.emu.processing_seconds, state_file=state_file))


def _stats(w: World) -> dict[str, Any]:
    return dict(httpx2.get(f"{_url(w)}/_emulator/stats").json())


@then("the account's stats count {jobs:d} job and {objects:d} object")
@then("the account's stats count {jobs:d} jobs and {objects:d} objects")
def step_stats(context: Context, jobs: int, objects: int) -> None:
    stats = _stats(world(context))
    assert (stats["bedrock_batches"], stats["bedrock_objects"]) == (jobs, objects), stats


@when("the account is reset")
def step_reset(context: Context) -> None:
    w = world(context)
    answer = httpx2.post(f"{_url(w)}/_emulator/reset")
    assert answer.status_code == 200, answer.text
