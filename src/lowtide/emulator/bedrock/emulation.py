"""AWS as an emulation (the `bedrock` entry point of `lowtide.emulators`): S3 path-style, the Bedrock control plane's
batch inference jobs and bedrock-runtime's Converse, on the emulator's one port, so that a program setting only
`AWS_ENDPOINT_URL` (and any credentials) reaches all three through boto3. Its callers are claimed by their SigV4
signature (`http.service_of`); a call with no credentials is refused (S3: `AccessDenied`; Bedrock:
`MissingAuthenticationTokenException`), signatures are never checked. Its handle in tests is
`emulator.emulation(BedrockEmulation)`: `objects`, `jobs`, `conversations` (the Converse bodies received, each with
its `modelId`), `created_jobs`, `created_records`, `fail_jobs(n)`, `jobs.min_records` (the account's minimum of
records per job, 100 unless `LOWTIDE_EMULATOR_BEDROCK_MIN_RECORDS` says otherwise)."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response

from lowtide.emulator.bedrock.catalog import catalog_routes
from lowtide.emulator.bedrock.errors import AwsError, aws_error_response, from_api_error
from lowtide.emulator.bedrock.http import BEDROCK, S3, service_of
from lowtide.emulator.bedrock.jobs import BedrockJob, JobStore, Record
from lowtide.emulator.bedrock.routes import bedrock_routes
from lowtide.emulator.bedrock.s3 import ObjectStore, S3Object, s3_routes
from lowtide.emulator.core.emulation import Emulation, ErrorHandler, RouteRow, Shared
from lowtide.emulator.core.errors import ApiError
from lowtide.emulator.core.http import request_id
from lowtide.emulator.core.jsonutil import JsonObject

__all__ = ["MIN_RECORDS_ENV", "BedrockEmulation"]

MIN_RECORDS_ENV = "LOWTIDE_EMULATOR_BEDROCK_MIN_RECORDS"
_BEDROCK_PATHS = ("/model-invocation-job", "/model/", "/foundation-models", "/inference-profiles")


class BedrockEmulation(Emulation):
    """The emulated AWS account (`emulator.emulation(BedrockEmulation)`)."""

    name = "bedrock"
    route_names = (
        "bedrock.batches.create",
        "bedrock.batches.list",
        "bedrock.batches.stop",
        "bedrock.batches.get",
        "bedrock.models.list",
        "bedrock.models.get",
        "bedrock.profiles.list",
        "bedrock.profiles.get",
        "bedrock.converse",
        "bedrock.converse_stream",
        "bedrock.s3.put_object",
        "bedrock.s3.get_object",
        "bedrock.s3.delete_object",
        "bedrock.s3.create_bucket",
        "bedrock.s3.list_objects",
    )

    def __init__(self, shared: Shared) -> None:
        super().__init__(shared)
        self.objects = ObjectStore()
        self.jobs = JobStore(self.objects, shared.faults)
        self.conversations: list[JsonObject] = []
        minimum = os.environ.get(MIN_RECORDS_ENV, "")
        if minimum.isdigit():
            self.jobs.min_records = int(minimum)

    @property
    def created_jobs(self) -> int:
        return self.jobs.created_jobs

    @property
    def created_records(self) -> dict[str, int]:
        """For every job created, one per record id in its input."""
        return self.jobs.created_records

    def fail_jobs(self, times: int = 1, message: str = "Internal error while processing the job.") -> None:
        """Make the next `times` jobs created end `Failed` (with `message`) when their validation ends."""
        self.jobs.failing.extend([message] * times)

    def routes(self) -> Sequence[RouteRow]:
        return [
            *bedrock_routes(self.jobs, self.shared.settings, self.shared.clock.now, self.conversations),
            *catalog_routes(self.shared.settings),
        ]

    def fallback_routes(self) -> Sequence[RouteRow]:
        return s3_routes(self.objects, self.shared.clock.now)

    def begin(self, request: Request) -> None:
        service = service_of(request.headers)
        own_path = request.url.path.startswith(_BEDROCK_PATHS)
        if not own_path and service != S3:
            raise AwsError(403, "AccessDenied", "Access Denied: the request is not signed.", s3=True)
        if own_path and service != BEDROCK:
            raise AwsError(403, "MissingAuthenticationTokenException", "Missing Authentication Token")
        self.jobs.settle(self.shared.clock.now())

    def takes_fallback(self, headers: Headers, path: str) -> bool:
        """S3's path-style calls: those signed for S3, and unsigned ones to a bucket the account holds (refused)."""
        if service_of(headers) == S3:
            return True
        bucket = path.lstrip("/").split("/", 1)[0]
        return "authorization" not in headers and bucket in self.objects.buckets

    def claims(self, headers: Headers) -> bool:
        return headers.get("authorization", "").startswith("AWS4-HMAC-SHA256") and service_of(headers) in (S3, BEDROCK)

    def answer_headers(self, request: Request) -> dict[str, str]:
        """The request id under the header boto3 reads it from (S3's, or the Bedrock APIs')."""
        rid = request_id(request)
        return {"x-amz-request-id": rid} if service_of(request.headers) == S3 else {"x-amzn-RequestId": rid}

    def translate(self, error: ApiError) -> Exception:
        return from_api_error(error)

    def error_response(self, request: Request, error: Exception) -> Response:
        return aws_error_response(request, error)

    def exception_handlers(self) -> Mapping[type[Exception], ErrorHandler]:
        return {AwsError: aws_error_response}

    def stats(self) -> Mapping[str, object]:
        return {
            "bedrock_batches": len(self.jobs.jobs),
            "bedrock_created_batches": self.jobs.created_jobs,
            "bedrock_created_custom_ids": dict(self.jobs.created_records),
            "bedrock_objects": sum(len(objects) for objects in self.objects.buckets.values()),
        }

    def reset(self) -> None:
        self.objects.reset()
        self.jobs.reset()
        self.conversations.clear()

    def saved(self) -> Mapping[str, str]:
        if not self.jobs.jobs and all(not objects for objects in self.objects.buckets.values()):
            return {}
        jobs = [
            {
                **{name: value for name, value in vars(job).items() if name not in ("records", "rows")},
                "records": [[record.record_id, record.model_input] for record in job.records],
            }
            for job in self.jobs.jobs.values()
        ]
        buckets = {
            bucket: {key: [base64.b64encode(found.data).decode(), found.modified] for key, found in objects.items()}
            for bucket, objects in self.objects.buckets.items()
        }
        section = {
            "buckets": buckets,
            "jobs": jobs,
            "tokens": self.jobs.tokens,
            "failing": self.jobs.failing,
            "created_jobs": self.jobs.created_jobs,
            "created_records": self.jobs.created_records,
        }
        return {"bedrock": json.dumps(section)}

    def restore(self, document: Mapping[str, Any]) -> None:
        raw = document.get("bedrock")
        if raw is None:
            return
        section: dict[str, Any] = json.loads(raw) if isinstance(raw, str) else dict(raw)
        self.objects.buckets = {
            bucket: {
                key: S3Object(base64.b64decode(data), float(modified)) for key, (data, modified) in objects.items()
            }
            for bucket, objects in section["buckets"].items()
        }
        self.jobs.jobs = {}
        for fields in section["jobs"]:
            records = [Record(str(record_id), model_input) for record_id, model_input in fields.pop("records")]
            job = BedrockJob(**fields, records=records)
            self.jobs.jobs[job.job_id] = job
        self.jobs.tokens = dict(section["tokens"])
        self.jobs.failing = list(section["failing"])
        self.jobs.created_jobs = int(section["created_jobs"])
        self.jobs.created_records = dict(section["created_records"])
