"""The Bedrock control plane's batch inference routes (CreateModelInvocationJob, GetModelInvocationJob,
ListModelInvocationJobs, StopModelInvocationJob) and bedrock-runtime's Converse and ConverseStream, as rows of
(path, method, route name, handler). A job's identifier in a path is its ARN (percent-encoded by boto3, so it may
hold `/`) or its id."""

from __future__ import annotations

import datetime
from collections.abc import Callable

from starlette.requests import Request

from lowtide.emulator.bedrock.converse import converse, known_model, stream_events
from lowtide.emulator.bedrock.errors import validation
from lowtide.emulator.bedrock.http import region_of
from lowtide.emulator.bedrock.jobs import JobStore, render_job
from lowtide.emulator.core.emulation import RouteRow
from lowtide.emulator.core.http import Answer, Streamed, read_json
from lowtide.emulator.core.ids import new_id
from lowtide.emulator.core.jsonutil import JsonObject, as_array, as_object
from lowtide.emulator.core.settings import Settings
from lowtide.providers.bedrock.catalogue import input_modalities

__all__ = ["bedrock_routes"]

_BODY_BYTES = 20 * 1024 * 1024
_LIST_DEFAULT = 100
_LIST_MAX = 1000


def _parse_time(value: str) -> float:
    try:
        parsed = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise validation(f"{value!r} is not a timestamp.") from None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.UTC)).timestamp()


def _holds_image(body: JsonObject) -> bool:
    """Whether a Converse body's messages hold an `image` block (refused by a model whose inputModalities lack it)."""
    for message in as_array(body.get("messages")) or []:
        for block in as_array((as_object(message) or {}).get("content")) or []:
            if "image" in (as_object(block) or {}):
                return True
    return False


async def _body(request: Request) -> JsonObject:
    body = as_object(await read_json(request, _BODY_BYTES))
    if body is None:
        raise validation("The request body must be a JSON object.")
    return body


class _Api:
    def __init__(
        self, jobs: JobStore, settings: Settings, now: Callable[[], float], received: list[JsonObject]
    ) -> None:
        self._jobs = jobs
        self._settings = settings
        self._now = now
        self._received = received

    async def create(self, request: Request) -> Answer:
        body = await _body(request)
        token = body.get("clientRequestToken")
        if not isinstance(token, str) or not token:
            token = new_id("token")  # botocore fills one in itself; a caller without one gets one of ours
        model = body.get("modelId")
        job = self._jobs.create(
            body,
            region=region_of(request.headers),
            now=self._now(),
            processing=self._settings.processing_seconds,
            cancel=self._settings.cancel_seconds,
            token=token,
            known_model=isinstance(model, str) and known_model(model, self._settings.extra_models),
        )
        return {"jobArn": job.arn}

    async def get(self, request: Request) -> Answer:
        job = self._jobs.find(str(request.path_params["job"]))
        return render_job(job, self._jobs, self._now())

    async def stop(self, request: Request) -> Answer:
        self._jobs.stop(str(request.path_params["job"]), self._now())
        return {}

    async def list_jobs(self, request: Request) -> Answer:
        query = request.query_params
        now = self._now()
        jobs = list(self._jobs.jobs.values())
        if query.get("sortOrder", "Descending") != "Ascending":
            jobs.reverse()
        after = query.get("submitTimeAfter")
        before = query.get("submitTimeBefore")
        name = query.get("nameContains")
        status = query.get("statusEquals")
        chosen = [
            job
            for job in jobs
            if (after is None or job.created_at > _parse_time(after))
            and (before is None or job.created_at < _parse_time(before))
            and (name is None or name in job.name)
            and (status is None or job.status(now) == status)
        ]
        raw_size = query.get("maxResults") or str(_LIST_DEFAULT)
        if not raw_size.isdigit() or not 1 <= int(raw_size) <= _LIST_MAX:
            raise validation(f"maxResults must be between 1 and {_LIST_MAX}.")
        size = int(raw_size)
        start = 0
        token = query.get("nextToken")
        if token:
            ids = [job.job_id for job in chosen]
            if token not in ids:
                raise validation("The nextToken is not valid.")
            start = ids.index(token)
        page = chosen[start : start + size]
        answer: JsonObject = {"invocationJobSummaries": [render_job(job, self._jobs, now) for job in page]}
        if start + size < len(chosen):
            answer["nextToken"] = chosen[start + size].job_id
        return answer

    def _call(self, request: Request, body: JsonObject) -> JsonObject:
        model = str(request.path_params["model_id"])
        self._received.append({"modelId": model, **body})
        if not known_model(model, self._settings.extra_models):
            raise validation("The provided model identifier is invalid.")
        if "IMAGE" not in input_modalities(model) and _holds_image(body):
            raise validation(
                "This model doesn't support the image content block that you provided. Try again with a supported"
                " text or chat model."
            )
        return converse(body, new_id("resp"))

    async def converse(self, request: Request) -> Answer:
        return self._call(request, await _body(request))

    async def converse_stream(self, request: Request) -> Answer:
        answer = self._call(request, await _body(request))
        return Streamed(stream_events(answer), "application/vnd.amazon.eventstream")


def bedrock_routes(
    jobs: JobStore, settings: Settings, now: Callable[[], float], received: list[JsonObject]
) -> list[RouteRow]:
    """The rows; every Converse body (with the `modelId` of its path) is appended to `received`."""
    api = _Api(jobs, settings, now, received)
    return [
        ("/model-invocation-job", "POST", "bedrock.batches.create", api.create),
        ("/model-invocation-jobs", "GET", "bedrock.batches.list", api.list_jobs),
        ("/model-invocation-job/{job:path}/stop", "POST", "bedrock.batches.stop", api.stop),
        ("/model-invocation-job/{job:path}", "GET", "bedrock.batches.get", api.get),
        ("/model/{model_id:path}/converse", "POST", "bedrock.converse", api.converse),
        ("/model/{model_id:path}/converse-stream", "POST", "bedrock.converse_stream", api.converse_stream),
    ]
