"""Bedrock batch inference by hand with `boto3`: the records (Converse bodies) written to S3, one model invocation job
created, polled until it ends, its output records read back from S3 into a dict. boto3 is synchronous: every call
runs in a worker thread (`asyncio.to_thread`), as a careful user of it in an asyncio program does, never on the loop."""

# boto3 ships no type stubs.
# pyright: reportMissingTypeStubs=false

from __future__ import annotations

import asyncio
import json
import time
from datetime import datetime
from typing import Any

from by_hand import BatchTimes, ByHand
from harness import MAX_TOKENS, Emulator, key, prompt

MODEL = "amazon.nova-micro-v1:0"
BUCKET = "lowtide-batch"
"""The bucket the emulator holds from its start."""
ROLE_ARN = "arn:aws:iam::123456789012:role/benchmark"
REGION = "us-east-1"
AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "AKIDBENCHMARK",
    "AWS_SECRET_ACCESS_KEY": "benchmark",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_EC2_METADATA_DISABLED": "true",
}
"""Credentials of no meaning for boto3's usual chain (both contenders read them): the emulator checks no signature."""
_ENDED = ("Completed", "PartiallyCompleted", "Failed", "Stopped", "Expired")
_LIST_HEADERS = {
    "authorization": "AWS4-HMAC-SHA256 Credential=AKIDBENCHMARK/20260101/us-east-1/bedrock/aws4_request, "
    "SignedHeaders=host, Signature=0"
}
"""The emulator tells the Bedrock control plane's calls by the service the signature's scope names."""


async def raw_sdk(base_url: str, n: int, poll_interval: float) -> tuple[float, float, dict[str, str]]:
    """What a careful user of boto3 writes (AWS's batch inference guide): the JSONL of `{"recordId", "modelInput"}`
    records put in S3, one `Converse` job reading it and writing to an output prefix, `get_model_invocation_job`
    until it ends, the output object (`<prefix>/<job id>/<input name>.out`) streamed line by line."""
    import boto3

    session = boto3.session.Session(region_name=REGION)
    s3: Any = session.client("s3", endpoint_url=base_url)
    bedrock: Any = session.client("bedrock", endpoint_url=base_url)
    started_at, start = time.time(), time.perf_counter()
    records = "".join(
        json.dumps(
            {
                "recordId": key(i),
                "modelInput": {
                    "messages": [{"role": "user", "content": [{"text": prompt(i)}]}],
                    "inferenceConfig": {"maxTokens": MAX_TOKENS},
                },
            }
        )
        + "\n"
        for i in range(n)
    ).encode()
    input_key = "benchmark/input/records.jsonl"
    await asyncio.to_thread(s3.put_object, Bucket=BUCKET, Key=input_key, Body=records, ContentType="application/jsonl")
    del records
    created = await asyncio.to_thread(
        bedrock.create_model_invocation_job,
        jobName=f"benchmark-{int(started_at * 1000)}",
        roleArn=ROLE_ARN,
        modelId=MODEL,
        modelInvocationType="Converse",
        inputDataConfig={"s3InputDataConfig": {"s3Uri": f"s3://{BUCKET}/{input_key}", "s3InputFormat": "JSONL"}},
        outputDataConfig={"s3OutputDataConfig": {"s3Uri": f"s3://{BUCKET}/benchmark/output/"}},
    )
    arn = created["jobArn"]
    job = await asyncio.to_thread(bedrock.get_model_invocation_job, jobIdentifier=arn)
    while job["status"] not in _ENDED:
        await asyncio.sleep(poll_interval)
        job = await asyncio.to_thread(bedrock.get_model_invocation_job, jobIdentifier=arn)
    output_key = f"benchmark/output/{arn.rsplit('/', 1)[-1]}/records.jsonl.out"

    def read_output() -> dict[str, str]:
        texts: dict[str, str] = {}
        body = s3.get_object(Bucket=BUCKET, Key=output_key)["Body"]
        for raw in body.iter_lines():
            if raw:
                line = json.loads(raw)
                if "modelOutput" in line:
                    content = line["modelOutput"]["output"]["message"]["content"]
                    texts[line["recordId"]] = "".join(part.get("text", "") for part in content)
        return texts

    texts = await asyncio.to_thread(read_output)
    return started_at, time.perf_counter() - start, texts


def batch_times(emulator: Emulator) -> list[BatchTimes]:
    page = emulator.get_json("/model-invocation-jobs?maxResults=100", _LIST_HEADERS)
    return [
        BatchTimes(_epoch(job["submitTime"]), _epoch(job["endTime"]) if job.get("endTime") else None)
        for job in page["invocationJobSummaries"]
    ]


def _epoch(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


BY_HAND = ByHand(
    provider="bedrock",
    model=MODEL,
    sdk="boto3",
    base_path="",
    raw_sdk=raw_sdk,
    batch_times=batch_times,
    created_ids_stat="bedrock_created_custom_ids",
    provider_options={"bedrock": {"s3_bucket": BUCKET, "role_arn": ROLE_ARN, "min_records": 1}},
    environment=AWS_ENV,
)
