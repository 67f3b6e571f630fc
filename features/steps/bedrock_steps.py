"""Steps for Bedrock actors (features/bedrock_batch.feature, bedrock_live.feature, emulator_bedrock.feature): batch
inference and Converse through the unmodified boto3, against the emulator's AWS account on a loopback socket (boto3
speaks no in-process transport), on the scenario's manual clock."""

from __future__ import annotations

import datetime
from typing import Any

import boto3
from _batch_providers import dead_program
from _support import World, emulated_aws_credentials, set_env, world, yaml_doc
from botocore.config import Config
from botocore.exceptions import ClientError
from step_context import Context, given, then, when

from lowtide import ActorResponse
from lowtide.emulator.bedrock.emulation import BedrockEmulation
from lowtide.emulator.bedrock.s3 import DEFAULT_BUCKET
from lowtide.providers.bedrock.batch_backend import (
    INPUT_STEP,
    MODEL_STEP,
    BedrockBatchBackend,
    client_token,
    job_name,
    remote_batch,
)

ROLE = "arn:aws:iam::123456789012:role/lowtide-batch"
MODEL = "amazon.nova-micro-v1:0"


def _emulation(w: World) -> BedrockEmulation:
    return w.emu.emulation(BedrockEmulation)


def _url(w: World) -> str:
    [url] = w.witnessed["server url"]
    return str(url)


def _client(w: World, service: str) -> Any:
    """A boto3 client of the emulated account, as a program setting only `AWS_ENDPOINT_URL` makes it."""
    return boto3.client(service, endpoint_url=_url(w), config=Config(retries={"total_max_attempts": 1}))


def _jobs(w: World) -> list[dict[str, Any]]:
    return list(_client(w, "bedrock").list_model_invocation_jobs(maxResults=100)["invocationJobSummaries"])


def _backend(w: World) -> BedrockBatchBackend:
    backend = w.current_actor().batch_backend()
    assert isinstance(backend, BedrockBatchBackend), backend
    return backend


@given("an emulated AWS account on a socket, whose batch inference jobs take {seconds:g} seconds")
def step_aws_account(context: Context, seconds: float) -> None:
    """The emulator on a loopback socket, on the scenario's clock, and AWS credentials of no meaning in the
    environment (the usual chain finds them; the emulator checks no signature)."""
    w = world(context)
    emulated_aws_credentials(w)
    w.serve_emulator(processing_seconds=seconds)


@given("the account takes batch inference jobs of {count:d} record or more")
@given("the account takes batch inference jobs of {count:d} records or more")
def step_min_records(context: Context, count: int) -> None:
    _emulation(world(context)).jobs.min_records = count


@given('a Bedrock actor "{name}" with:')
def step_bedrock_actor(context: Context, name: str) -> None:
    """An actor reaching the emulated account by its `base_url`, its bucket and role given, with the account's
    minimum lowered to 1 unless the text says otherwise."""
    w = world(context)
    given_settings = yaml_doc(context.text)
    options = dict(given_settings.pop("provider_options", {}) or {})
    bedrock = {"s3_bucket": DEFAULT_BUCKET, "role_arn": ROLE, "min_records": 1, **(options.get("bedrock") or {})}
    options["bedrock"] = {key: value for key, value in bedrock.items() if value is not None}
    settings = {"name": name, "provider": "bedrock", "model": MODEL, "max_tokens": 64, "base_url": _url(w)}
    w.add_actor({**settings, **given_settings, "provider_options": options})


@when('a Bedrock actor "{name}" is set up with:')
def step_bedrock_configured(context: Context, name: str) -> None:
    w = world(context)
    settings = {"name": name, "provider": "bedrock", "model": MODEL, "base_url": _url(w), **yaml_doc(context.text)}
    w.attempt(lambda: w.add_actor(settings))


@given('the account will fail the next "{route}" call with status {status:d}')
def step_fail_next(context: Context, route: str, status: int) -> None:
    world(context).emu.faults.fail_next(route, status)


@given("the account will create the next batch inference job but drop the connection before answering")
def step_drop_create(context: Context) -> None:
    world(context).emu.faults.drop_after_commit("bedrock.batches.create")


@given("the account will store the next object but drop the connection before answering")
def step_drop_put(context: Context) -> None:
    world(context).emu.faults.drop_after_commit("bedrock.s3.put_object")


@given("the account will fail the next batch inference job it creates")
def step_fail_job(context: Context) -> None:
    _emulation(world(context)).fail_jobs(1, "The service role cannot read the input.")


@given('the account will fail the record of "{key}" with "{error_type}"')
def step_record_error(context: Context, key: str, error_type: str) -> None:
    w = world(context)
    w.emu.faults.outcome(w.custom_id(key), "errored", error_type=error_type, message=f"Emulated {error_type}.")


@given('the account will lose the record of "{key}" from its job\'s output')
def step_record_lost(context: Context, key: str) -> None:
    w = world(context)
    w.emu.faults.lose(w.custom_id(key))


@given("the next download of a job's output will break after {lines:d} line")
def step_cut(context: Context, lines: int) -> None:
    world(context).emu.faults.cut("bedrock.s3.get_object", after_lines=lines)


def _orphan(w: World, key: str, prompt: str, *, created: bool) -> None:
    """An intent in the ledger whose program died after writing its input to S3 (and, `created`, after its create
    reached the API too): its steps recorded, its job unrecorded."""
    dead = dead_program(w, key, prompt, "lt_0123456789abcdef0123456789abcdef", backend=_backend(w), model=MODEL)
    batch_id, ledger, body = dead.batch_id, dead.ledger, dead.body
    record = body.decode().replace(f'"modelId":"{MODEL}",', "").encode()
    object_key = "lowtide/input/0123456789abcdef0123456789abcdef.jsonl"
    _client(w, "s3").put_object(Bucket=DEFAULT_BUCKET, Key=object_key, Body=record)
    uri = f"s3://{DEFAULT_BUCKET}/{object_key}"
    ledger.record_create_step(batch_id, MODEL_STEP, MODEL)
    ledger.record_create_step(batch_id, INPUT_STEP, uri)
    if created:
        _client(w, "bedrock").create_model_invocation_job(
            jobName=job_name(batch_id, 1),
            roleArn=ROLE,
            clientRequestToken=client_token(batch_id),
            modelId=MODEL,
            modelInvocationType="Converse",
            inputDataConfig={"s3InputDataConfig": {"s3Uri": uri, "s3InputFormat": "JSONL"}},
            outputDataConfig={"s3OutputDataConfig": {"s3Uri": f"s3://{DEFAULT_BUCKET}/lowtide/output/"}},
        )
    w.witnessed["orphan"] = [batch_id]
    w.emu.calls.clear()


@given(
    'the ledger holds a Bedrock intent for the key "{key}" asking "{prompt}", its input written by a program that '
    "died before creating the job"
)
def step_orphan_before_create(context: Context, key: str, prompt: str) -> None:
    _orphan(world(context), key, prompt, created=False)


@given(
    'the ledger holds a Bedrock intent for the key "{key}" asking "{prompt}", whose job was created by a program '
    "that died before recording it"
)
def step_orphan_after_create(context: Context, key: str, prompt: str) -> None:
    _orphan(world(context), key, prompt, created=True)


@given('the account will garble the output record of "{key}" as {kind}')
def step_garble(context: Context, key: str, kind: str) -> None:
    from lowtide.emulator.core.faults import garble_kind

    w = world(context)
    w.emu.faults.garble(w.custom_id(key), garble_kind(kind))


@given('the account also serves the model "{model}"')
def step_extra_model(context: Context, model: str) -> None:
    from lowtide.emulator.core.settings import Settings

    settings: Settings = _emulation(world(context)).shared.settings
    settings.extra_models = (*settings.extra_models, model)


@given("the account has forgotten the client request tokens of its jobs")
def step_forget_tokens(context: Context) -> None:
    _emulation(world(context)).jobs.tokens.clear()


@given("that input object was deleted since")
def step_input_deleted(context: Context) -> None:
    w = world(context)
    _client(w, "s3").delete_object(Bucket=DEFAULT_BUCKET, Key="lowtide/input/0123456789abcdef0123456789abcdef.jsonl")
    w.emu.calls.clear()


@when("its Bedrock batch inference job is stopped")
def step_stop_job(context: Context) -> None:
    w = world(context)
    [job] = _jobs(w)
    _client(w, "bedrock").stop_model_invocation_job(jobIdentifier=job["jobArn"])


@then("the account holds {count:d} batch inference job")
@then("the account holds {count:d} batch inference jobs")
def step_job_count(context: Context, count: int) -> None:
    w = world(context)
    assert len(_jobs(w)) == count, _jobs(w)
    assert _emulation(w).created_jobs == count, _emulation(w).created_jobs


@then("every Bedrock batch inference job ended {status:w}")
def step_jobs_ended(context: Context, status: str) -> None:
    statuses = [job["status"] for job in _jobs(world(context))]
    assert statuses, statuses
    assert all(found == status for found in statuses), statuses


@then("the account created each of these records once: {keys}")
def step_created_once(context: Context, keys: str) -> None:
    w = world(context)
    created = _emulation(w).created_records
    for key in (part.strip() for part in keys.split(",")):
        assert created.get(w.custom_id(key)) == 1, (key, created)


@then("the Bedrock job's name and client request token carry lowtide's intent id")
def step_job_named(context: Context) -> None:
    w = world(context)
    [job] = _jobs(w)
    [batch] = w.ledger().batches()
    assert job["jobName"] == job_name(batch.id, batch.request_count), (job["jobName"], batch.id)
    assert job["clientRequestToken"] == client_token(batch.id), job["clientRequestToken"]
    assert job["modelInvocationType"] == "Converse", job
    assert batch.provider_batch_id == job["jobArn"], (batch.provider_batch_id, job["jobArn"])


@then("the job was created from the input the dead program wrote, under its intent id")
def step_job_from_orphan(context: Context) -> None:
    w = world(context)
    [batch_id] = w.witnessed["orphan"]
    [job] = _jobs(w)
    assert job["clientRequestToken"] == client_token(batch_id), job
    record = w.ledger().batch(batch_id)
    assert record is not None, record
    assert record.provider_batch_id == job["jobArn"], record


@then("the bucket holds no input any more, and the job's output")
def step_bucket(context: Context) -> None:
    w = world(context)
    keys = sorted(_emulation(w).objects.buckets[DEFAULT_BUCKET])
    assert not [key for key in keys if key.startswith("lowtide/input/")], keys
    assert [key for key in keys if key.endswith(".jsonl.out")], keys
    assert [key for key in keys if key.endswith("manifest.json.out")], keys


@then("every Bedrock answer was priced at batch prices, half the live equivalent")
def step_batch_prices(context: Context) -> None:
    w = world(context)
    for label, outcome in w.asked.items():
        assert isinstance(outcome, ActorResponse), (label, outcome)
        cost = outcome.cost
        assert cost is not None, label
        assert cost.pricing == "batch", (label, cost)
        assert cost.total_usd * 2 == cost.live_equivalent_usd, cost
        assert outcome.ids.batch_id is not None, outcome.ids
        assert outcome.ids.batch_id.startswith("arn:aws:bedrock:"), outcome.ids


# -- the codec: every status --------------------------------------------------------------------------------------


@when(
    "a Bedrock job of {total:d} records is read with the status {status:w},"
    " {succeeded:d} succeeded and {errored:d} errored"
)
def step_read_status(context: Context, total: int, status: str, succeeded: int, errored: int) -> None:
    w = world(context)
    moment = datetime.datetime(2027, 1, 15, tzinfo=datetime.UTC)
    job = {
        "jobArn": "arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/abc",
        "jobName": job_name("lt_00ff", total),
        "status": status,
        "submitTime": moment,
        "lastModifiedTime": moment,
        "totalRecordCount": total,
        "successRecordCount": succeeded,
        "errorRecordCount": errored,
    }
    w.value = remote_batch(job)


@then("it is {phase:w} with these counts: {counts}")
def step_status_counts(context: Context, phase: str, counts: str) -> None:
    batch = world(context).value
    assert batch.phase.value == phase, batch
    expected = {name: int(value) for name, value in (part.split("=") for part in counts.split(", "))}
    shown = {name: value for name, value in batch.counts.as_dict().items() if value}
    assert shown == expected, shown
    assert batch.intent_id == "lt_00ff", batch.intent_id


# -- boto3 against the emulated account --------------------------------------------------------------------------


@when("boto3 writes, lists, reads and deletes an object of the bucket")
def step_s3_life(context: Context) -> None:
    w = world(context)
    s3 = _client(w, "s3")
    s3.put_object(Bucket=DEFAULT_BUCKET, Key="notes/tide.txt", Body=b"high\nlow\n")
    listed = [item["Key"] for item in s3.list_objects_v2(Bucket=DEFAULT_BUCKET, Prefix="notes/")["Contents"]]
    body = s3.get_object(Bucket=DEFAULT_BUCKET, Key="notes/tide.txt")["Body"].read()
    size = s3.head_object(Bucket=DEFAULT_BUCKET, Key="notes/tide.txt")["ContentLength"]
    s3.delete_object(Bucket=DEFAULT_BUCKET, Key="notes/tide.txt")
    w.witnessed["s3"] = [listed, body, size]


@then("boto3 saw the object as written, then gone")
def step_s3_seen(context: Context) -> None:
    w = world(context)
    listed, body, size = w.witnessed["s3"]
    assert listed == ["notes/tide.txt"], w.witnessed["s3"]
    assert body == b"high\nlow\n", w.witnessed["s3"]
    assert size == 9, w.witnessed["s3"]
    code = None
    try:
        _client(w, "s3").get_object(Bucket=DEFAULT_BUCKET, Key="notes/tide.txt")
    except ClientError as exc:
        code = exc.response["Error"]["Code"]
    assert code == "NoSuchKey", f"the deleted object was read, or refused otherwise: {code}"


def _create(w: World, name: str, token: str, *, model: str = MODEL) -> str:
    return str(
        _client(w, "bedrock").create_model_invocation_job(
            jobName=name,
            roleArn=ROLE,
            clientRequestToken=token,
            modelId=model,
            modelInvocationType="Converse",
            inputDataConfig={"s3InputDataConfig": {"s3Uri": f"s3://{DEFAULT_BUCKET}/in/records.jsonl"}},
            outputDataConfig={"s3OutputDataConfig": {"s3Uri": f"s3://{DEFAULT_BUCKET}/out/"}},
        )["jobArn"]
    )


@given("the bucket holds {count:d} Converse records under in/records.jsonl")
def step_records(context: Context, count: int) -> None:
    w = world(context)
    import json

    lines = "".join(
        json.dumps(
            {
                "recordId": f"r{index}",
                "modelInput": {"messages": [{"role": "user", "content": [{"text": f"Question {index}?"}]}]},
            }
        )
        + "\n"
        for index in range(count)
    )
    _client(w, "s3").put_object(Bucket=DEFAULT_BUCKET, Key="in/records.jsonl", Body=lines.encode())


@when('boto3 creates a job named "{name:Q}" with the token "{token:Q}"')
def step_create_job(context: Context, name: str, token: str) -> None:
    w = world(context)
    w.witnessed.setdefault("arns", []).append(_create(w, name, token))


@when('boto3 creates a job named "{name:Q}" with the token "{token:Q}" for the model "{model:Q}"')
def step_create_job_model(context: Context, name: str, token: str, model: str) -> None:
    w = world(context)
    try:
        _create(w, name, token, model=model)
    except ClientError as exc:
        w.value = exc


@then("both creates were answered with the same job, and the account holds one")
def step_same_job(context: Context) -> None:
    w = world(context)
    first, second = w.witnessed["arns"]
    assert first == second, (first, second)
    assert len(_jobs(w)) == 1


@then("boto3 was refused with {code:w}")
def step_refused(context: Context, code: str) -> None:
    error = world(context).value
    assert isinstance(error, ClientError), error
    assert error.response["Error"]["Code"] == code, error.response


@when("{seconds:g} seconds pass on the account's clock")
def step_time_passes(context: Context, seconds: float) -> None:
    world(context).clock.advance(seconds)


@then("boto3 reads the job as {status:w}, {processed:d} of {total:d} records processed")
def step_job_status(context: Context, status: str, processed: int, total: int) -> None:
    w = world(context)
    [arn, *_] = w.witnessed["arns"]
    job = _client(w, "bedrock").get_model_invocation_job(jobIdentifier=arn)
    assert job["status"] == status, job["status"]
    assert (job["processedRecordCount"], job["totalRecordCount"]) == (processed, total), job


@when("boto3 stops the job")
def step_stop(context: Context) -> None:
    w = world(context)
    [arn, *_] = w.witnessed["arns"]
    _client(w, "bedrock").stop_model_invocation_job(jobIdentifier=arn)


@then("the job's output holds {count:d} records joined on recordId, and its manifest counts them")
def step_output(context: Context, count: int) -> None:
    w = world(context)
    [arn, *_] = w.witnessed["arns"]
    job_id = arn.rsplit("/", 1)[-1]
    s3 = _client(w, "s3")
    lines = s3.get_object(Bucket=DEFAULT_BUCKET, Key=f"out/{job_id}/records.jsonl.out")["Body"].read().splitlines()
    import json

    records = [json.loads(line) for line in lines]
    assert len(records) == count, records[:2]
    assert all("modelOutput" in record for record in records), records[:2]
    manifest = json.loads(s3.get_object(Bucket=DEFAULT_BUCKET, Key=f"out/{job_id}/manifest.json.out")["Body"].read())
    assert manifest["processedRecordCount"] == count, manifest
    assert manifest["successRecordCount"] == count, manifest


@then("a call with no credentials is refused by each service")
def step_unsigned(context: Context) -> None:
    import httpx2

    w = world(context)
    url = _url(w)
    s3 = httpx2.get(f"{url}/{DEFAULT_BUCKET}/in/records.jsonl")
    assert s3.status_code == 403, s3.content
    assert b"<Code>AccessDenied</Code>" in s3.content, (s3.status_code, s3.content)
    control = httpx2.get(f"{url}/model-invocation-jobs")
    assert control.status_code == 403, control.status_code
    assert control.headers["x-amzn-ErrorType"] == "MissingAuthenticationTokenException", control.headers


@when('boto3 asks Converse "{prompt}"')
def step_boto_converse(context: Context, prompt: str) -> None:
    w = world(context)
    w.value = _client(w, "bedrock-runtime").converse(
        modelId=MODEL, messages=[{"role": "user", "content": [{"text": prompt}]}]
    )


@then('Converse answered with the emulated reply to "{prompt}" and its usage')
def step_boto_converse_answer(context: Context, prompt: str) -> None:
    answer = world(context).value
    [block] = answer["output"]["message"]["content"]
    assert block["text"].startswith(f'Emulated reply to "{prompt}"'), block
    assert answer["stopReason"] == "end_turn", answer
    assert answer["usage"]["inputTokens"] > 0, answer


@when('a Bedrock batch actor without provider_options.bedrock.s3_bucket is asked "{prompt}"')
def step_actor_without_bucket(context: Context, prompt: str) -> None:
    w = world(context)
    settings = {"name": "nobucket", "provider": "bedrock", "model": MODEL, "max_tokens": 64, "base_url": _url(w),
                "batch_processing": "batch", "provider_options": {"bedrock": {"role_arn": ROLE}}}  # fmt: skip
    actor = w.add_actor(settings)
    w.response = w.attempt_async(lambda: actor.run(prompt))


@when("lowtide collects the ended batches of the ledger")
def step_collect(context: Context) -> None:
    from lowtide.calls import parking

    w = world(context)
    w.in_program(lambda: parking.collect(w.ledger(), clock=w.clock))


@given("the AWS region is not set anywhere")
def step_no_region(context: Context) -> None:
    w = world(context)
    for variable in ("AWS_DEFAULT_REGION", "AWS_REGION"):
        set_env(w, variable, None)
    set_env(w, "AWS_CONFIG_FILE", "/nonexistent/lowtide-aws-config")


@when("a live Bedrock actor is used")
def step_live_actor_used(context: Context) -> None:
    from lowtide import ConfigurationError

    w = world(context)
    w.error = None
    try:
        actor = w.add_actor({"name": "noregion", "provider": "bedrock", "model": MODEL, "max_tokens": 64})
        actor.provider()
    except ConfigurationError as exc:
        w.error = exc


@when("boto3 raises AWS's {name:w} with HTTP status {status:d}")
def step_client_error(context: Context, name: str, status: int) -> None:
    from lowtide.providers.bedrock.errors import translated

    response = {
        "Error": {"Code": name, "Message": f"Emulated {name}."},
        "ResponseMetadata": {"HTTPStatusCode": status, "RequestId": "req-1", "HTTPHeaders": {}},
    }
    world(context).value = translated(ClientError(response, "Converse"))


@when("boto3 raises its {exception:w}")
def step_boto_exception(context: Context, exception: str) -> None:
    from botocore import exceptions

    from lowtide.providers.bedrock.errors import translated

    url = "http://127.0.0.1:9/model/x/converse"
    kinds = {
        "EndpointConnectionError": lambda: exceptions.EndpointConnectionError(endpoint_url=url),
        "ReadTimeoutError": lambda: exceptions.ReadTimeoutError(endpoint_url=url),
        "ConnectionClosedError": lambda: exceptions.ConnectionClosedError(endpoint_url=url),
        "ResponseStreamingError": lambda: exceptions.ResponseStreamingError(error="cut"),
        "ConnectTimeoutError": lambda: exceptions.ConnectTimeoutError(endpoint_url=url),
        "NoCredentialsError": lambda: exceptions.NoCredentialsError(),
    }
    world(context).value = translated(kinds[exception]())


@then("lowtide reads it as a {name:w}")
def step_read_as(context: Context, name: str) -> None:
    from _support import check_error

    error = world(context).value
    check_error(error, name)
