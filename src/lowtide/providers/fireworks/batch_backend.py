"""Fireworks' Batch Inference API as a `BatchBackend`, through the official fireworks SDK: the requests uploaded as
an input dataset (`datasets.create`, `datasets.upload`), a batch inference job created from it under an id lowtide
chooses (`batch_inference_jobs.create`), polled (`.get`), its output dataset's results file and error file read
through the signed URLs `datasets.get_download_endpoint` gives, joined on `custom_id`. Every shape, state name and
id rule of Fireworks' stays here; its result lines are handed on as OpenAI's output and error lines, which the
dialect's codec (`ChatBatchCodec`) reads.

Exactly-once by the job id: it is made from the intent, `lowtide-<intent hex>-<request count>`, so a create whose
outcome is unknown is simply made again (`idempotent_create`): Fireworks refuses a second job of that id (409), and
the job the first create made is read by its id instead. The input dataset (its id made from the intent too) and the
model are recorded as steps before the job is created: a crash between the upload and the create reuses the dataset
(`resume`).

The batch's id is the job's resource name, `accounts/<account>/batchInferenceJobs/<job id>`, so the account travels
with it in the ledger: `lowtide collect` and `lowtide cancel`, which build the backend from the ledger alone, read
the job (and its datasets) in the account it was created in, whatever account their own host is set to. The account
is recorded as the create's first step too (`account`), for a create resumed or given up on another host. An id of
an earlier release (the job id alone) is read in the backend's own account.

Fireworks has no cancel: a job is deleted (`batch_inference_jobs.delete`), which stops it; what it had not run never
runs, and a deleted job is gone (404). `cancel` deletes the job; a job of lowtide's that is gone is read as ended,
every request of it canceled (the job's name counts them), none answered."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractContextManager, suppress
from datetime import datetime

import httpx
from fireworks import AsyncFireworks, ConflictError, Omit
from fireworks.types import BatchInferenceJob

from lowtide import APIError, BatchSettings, Clock, ConfigurationError, NotFoundError, RateLimitError
from lowtide.providers import (
    Counts,
    CreateSteps,
    Phase,
    RemoteBatch,
    ResultLine,
    SdkBatchBackend,
    UnreadableLine,
    credential_of,
    feed_lines,
    json_object,
)
from lowtide.providers.fireworks.dialect import FIREWORKS
from lowtide.providers.fireworks.sdk import FIREWORKS_SDK
from lowtide.providers.openai.codec import CANCELED_CODE
from lowtide.providers.openai_compatible.batch import ChatBatchCodec

__all__ = ["ACCOUNT_STEP", "DATASET_STEP", "MODEL_STEP", "FireworksBatchBackend", "dataset_id", "job_id", "job_name"]

log = logging.getLogger(__name__)

ACCOUNT_STEP = "account"
DATASET_STEP = "input_dataset"
MODEL_STEP = "model"
_NAME = re.compile(r"^lowtide-([0-9a-f]+)-([0-9]+)$")
_RESOURCE = re.compile(r"^accounts/([^/]+)/batchInferenceJobs/([^/]+)$")
_PHASES = {
    "JOB_STATE_COMPLETED": Phase.ENDED,
    "JOB_STATE_FAILED": Phase.ENDED,
    "JOB_STATE_EXPIRED": Phase.ENDED,
    "JOB_STATE_CANCELLED": Phase.ENDED,
    "JOB_STATE_EARLY_STOPPED": Phase.ENDED,
}
"""Every other state (validating, pending, running, writing results, ...) is running."""
_FAILED_CODE = "batch_failed"
_EXPIRED_CODE = "batch_expired"


def _hex(intent_id: str) -> str:
    return intent_id.removeprefix("lt_").lower()


def job_id(intent_id: str, count: int) -> str:
    """The id an intent's job is created under (Fireworks' ids: lower-case letters, digits and dashes)."""
    return f"lowtide-{_hex(intent_id)}-{count}"


def dataset_id(intent_id: str) -> str:
    """The id of an intent's input dataset."""
    return f"lowtide-{_hex(intent_id)}-input"


def job_name(account: str, job: str) -> str:
    """A job's resource name, its batch id in the ledger: the account it runs in, then its id."""
    return f"accounts/{account}/batchInferenceJobs/{job}"


def _named(name: str) -> tuple[str | None, int]:
    matched = _NAME.match(name.rsplit("/", 1)[-1])
    return (f"lt_{matched.group(1)}", int(matched.group(2))) if matched else (None, 0)


def _epoch(moment: datetime | None) -> float | None:
    return moment.timestamp() if moment is not None else None


def result_line(line: Mapping[str, object]) -> ResultLine | UnreadableLine:
    """A line of Fireworks' results (`{custom_id, response}`) or errors (`{custom_id, error}`) file as OpenAI's output
    or error line."""
    custom_id = line.get("custom_id")
    if not isinstance(custom_id, str):
        return UnreadableLine(json.dumps(line).encode(), "a result without its custom_id")
    response = json_object(line.get("response"))
    if response:
        return {"custom_id": custom_id, "response": {"status_code": 200, "body": dict(response)}}
    error = line.get("error")
    message = json_object(error).get("message") or error
    text = message if isinstance(message, str) and message else "Fireworks answered the request with an error."
    return {"custom_id": custom_id, "error": {"code": "fireworks_request_failed", "message": text}}


class FireworksBatchBackend(SdkBatchBackend):
    """Batch inference jobs of one Fireworks account through one `AsyncFireworks` client (its own retries off)."""

    codec = ChatBatchCodec(FIREWORKS)
    idempotent_create = True
    input_step = DATASET_STEP
    model_step = MODEL_STEP

    def __init__(
        self, client: AsyncFireworks, *, owns_client: bool, clock: Clock, settings: BatchSettings, account: str | None
    ) -> None:
        self._client = client.with_options(max_retries=0)
        super().__init__(
            endpoint=str(self._client.base_url).rstrip("/"),
            credential=credential_of(self._client.api_key, owned=owns_client, client=client),
            clock=clock,
            settings=settings,
        )
        self._account = account or client.account_id
        self._closable = client
        self._owns_client = owns_client

    def account(self) -> str:
        """The account the jobs and datasets belong to: refused before anything is sent when none is set."""
        if not self._account:
            raise ConfigurationError(
                "Fireworks batch inference runs in your own account: set provider_options.fireworks.account_id, or "
                "the FIREWORKS_ACCOUNT_ID environment variable. Nothing was sent.",
                field="provider_options",
            )
        return self._account

    def _dataset_name(self, dataset: str, account: str) -> str:
        return f"accounts/{account}/datasets/{dataset}"

    def _job_of(self, batch_id: str) -> tuple[str, str]:
        """The account and job id a batch id names: its resource name's, or (an id of an earlier release, the job id
        alone) the backend's own account."""
        matched = _RESOURCE.match(batch_id)
        return (matched.group(1), matched.group(2)) if matched else (self.account(), batch_id)

    # The batch's life.

    async def create(self, body: bytes, count: int, *, intent_id: str, steps: CreateSteps) -> RemoteBatch:
        """Upload the requests as the intent's input dataset (recorded, with the model, as steps), then create the
        job from it."""
        account = self.account()
        model, rows = _rows(body)
        dataset = dataset_id(intent_id)
        await steps.done(ACCOUNT_STEP, account)

        async def make_dataset() -> None:
            try:
                await self._client.datasets.create(
                    account_id=account,
                    dataset_id=dataset,
                    dataset={
                        "display_name": dataset,
                        "example_count": str(count),
                        "format": "CHAT",
                        "user_uploaded": {},
                    },
                )
            except ConflictError:
                return  # made by an attempt whose answer was lost: the intent's own

        await self._retrying(make_dataset)
        await self._retrying(
            lambda: self._client.datasets.upload(
                dataset, account_id=account, file=(f"{dataset}.jsonl", rows, "application/jsonl")
            )
        )
        await steps.done(MODEL_STEP, model)
        await steps.done(DATASET_STEP, dataset)
        return await self._create(dataset, model, count, intent_id=intent_id, account=account)

    async def resume(
        self, done: Mapping[str, str], count: int, *, intent_id: str, steps: CreateSteps
    ) -> RemoteBatch | None:
        """The job created (again: same id) from the dataset the intent uploaded; when the dataset is gone, the job
        its create may have made, read by its id; None when there is none (its requests are sent anew). Both in the
        account the intent's create recorded, wherever it is resumed."""
        account = done.get(ACCOUNT_STEP) or self.account()
        try:
            await self._retrying(lambda: self._client.datasets.get(done[DATASET_STEP], account_id=account))
        except NotFoundError:
            try:
                return self._remote(await self._job(account, job_id(intent_id, count)))
            except NotFoundError:
                return None
        return await self._create(done[DATASET_STEP], done[MODEL_STEP], count, intent_id=intent_id, account=account)

    async def abandon(self, steps: Mapping[str, str]) -> None:
        """The create was given up: its input dataset is deleted, in the account it was uploaded to (unless
        `batch.keep_uploads`)."""
        uploaded = steps.get(DATASET_STEP)
        if uploaded is not None and not self.settings.keep_uploads:
            await self._delete_input(uploaded, steps.get(ACCOUNT_STEP) or self.account())

    async def _create(self, dataset: str, model: str, count: int, *, intent_id: str, account: str) -> RemoteBatch:
        name = job_id(intent_id, count)

        async def create() -> BatchInferenceJob:
            return await self._client.batch_inference_jobs.create(
                account_id=account,
                batch_inference_job_id=name,
                display_name=name,
                model=model,
                input_dataset_id=self._dataset_name(dataset, account),
                output_dataset_id=self._dataset_name(f"{name}-output", account),
            )

        # Retried only when refused outright (a rate limit): a create on doubt is made again under the same id.
        try:
            job = await self._retrying(create, retry_on=(RateLimitError,))
        except APIError as exc:
            if exc.status_code != 409:
                raise
            log.info("Fireworks job %s existed already (a create whose answer was lost): read by its id.", name)
            job = await self._job(account, name)
        log.info("Submitted Fireworks batch inference job %s with %d request(s).", name, count)
        return self._remote(job)

    async def retrieve(self, batch_id: str) -> RemoteBatch:
        """The job as Fireworks reports it, in the account its id names; a job of lowtide's that is gone was deleted
        (canceled)."""
        account, job = self._job_of(batch_id)
        try:
            return self._remote(await self._job(account, job))
        except NotFoundError:
            intent_id, count = _named(job)
            if intent_id is None:
                raise
            return self._deleted(job_name(account, job), intent_id, count)

    async def listed(self) -> AsyncIterator[RemoteBatch]:
        """Every job of the account, page after page (the SDK's pages), newest first."""
        jobs: list[BatchInferenceJob] = []

        async def read() -> None:
            jobs.clear()
            async for job in self._client.batch_inference_jobs.list(account_id=self.account(), page_size=200):
                jobs.append(job)

        await self._retrying(read)
        jobs.sort(key=lambda job: _epoch(job.create_time) or 0.0, reverse=True)
        for job in jobs:
            yield self._remote(job)

    async def stream_results(
        self, batch: RemoteBatch, handle: Callable[[ResultLine | UnreadableLine], None], *, expected: int | None = None
    ) -> None:
        """The output dataset's results file, then its error file, each streamed from its signed URL (a download
        broken off is fetched again from its start)."""
        job = batch.handle if isinstance(batch.handle, BatchInferenceJob) else None
        output = job.output_dataset_id if job is not None else None
        if not output:
            return
        account, _ = self._job_of(batch.id)
        dataset = output.rsplit("/", 1)[-1]
        urls = await self._retrying(lambda: self._client.datasets.get_download_endpoint(dataset, account_id=account))
        signed = urls.filename_to_signed_urls or {}
        # The results file before the error file: a request answered in the one is never overwritten by the other.
        for name in sorted(signed, key=lambda name: ("error" in name.lower(), name)):
            await self._retrying(lambda url=signed[name], name=name: self._read(url, name, handle))

    async def _read(self, url: str, name: str, handle: Callable[[ResultLine | UnreadableLine], None]) -> int:
        def each(line: ResultLine | UnreadableLine) -> None:
            handle(line if isinstance(line, UnreadableLine) else result_line(line))

        # A signed URL carries its own authority: the account's key is never sent with it.
        response = await self._client.get(
            url, cast_to=httpx.Response, options={"headers": {"Authorization": Omit()}}, stream=True
        )
        try:
            return await feed_lines(response.aiter_bytes(), each, source=f"Fireworks file {name}")
        finally:
            await response.aclose()

    def unanswered_line(self, batch: RemoteBatch, custom_id: str) -> ResultLine | None:
        """A deleted job's requests that never ran have no result, nor have those of a job that failed or expired."""
        if batch.cancel_requested:
            return {"custom_id": custom_id, "error": {"code": CANCELED_CODE, "message": "The job was deleted."}}
        if batch.status == "job_state_expired":
            return {"custom_id": custom_id, "error": {"code": _EXPIRED_CODE, "message": "The job expired first."}}
        if batch.status == "job_state_failed":
            job = batch.handle if isinstance(batch.handle, BatchInferenceJob) else None
            reason = job.status.message if job is not None and job.status and job.status.message else None
            return {"custom_id": custom_id, "error": {"code": _FAILED_CODE, "message": reason or "The job failed."}}
        return None

    async def cancel(self, batch_id: str) -> RemoteBatch:
        """Fireworks has no cancel: the job is deleted, which stops it (what has not run never runs)."""
        account, job = self._job_of(batch_id)
        with suppress(NotFoundError):
            await self._retrying(lambda: self._client.batch_inference_jobs.delete(job, account_id=account))
        log.info("Fireworks batch inference job %s deleted (Fireworks' cancel).", batch_id)
        return await self.retrieve(batch_id)

    async def _delete_input(self, uploaded: str, account: str | None = None) -> None:
        """Delete an input dataset, in `account` (else the backend's own); one already gone is not an error."""
        owner = account or self.account()
        try:
            await self._retrying(lambda: self._client.datasets.delete(uploaded, account_id=owner))
        except NotFoundError:
            return

    async def finished(self, batch: RemoteBatch) -> None:
        """The answers are stored: the input dataset is deleted (unless `batch.keep_uploads`)."""
        account, job = self._job_of(batch.id)
        intent_id, _ = _named(job)
        if intent_id is not None and not self.settings.keep_uploads:
            await self._delete_input(dataset_id(intent_id), account)

    async def aclose(self) -> None:
        if self._owns_client:
            await self._closable.close()

    # Inside.

    async def _job(self, account: str, name: str) -> BatchInferenceJob:
        return await self._retrying(lambda: self._client.batch_inference_jobs.get(name, account_id=account))

    def _remote(self, job: BatchInferenceJob) -> RemoteBatch:
        """The neutral record of a job: its request counts from its progress, or, before it reports any, its name."""
        name = (job.name or "").rsplit("/", 1)[-1]
        intent_id, named_count = _named(name)
        resource = job.name if job.name and _RESOURCE.match(job.name) else job_name(self.account(), name)
        state = job.state or "JOB_STATE_UNSPECIFIED"
        phase = _PHASES.get(state, Phase.RUNNING)
        progress = job.job_progress
        total = (progress.total_input_requests if progress else None) or named_count
        succeeded = (progress.successfully_processed_requests if progress else None) or 0
        failed = (progress.failed_requests if progress else None) or 0
        rest = max(total - succeeded - failed, 0)
        if phase is not Phase.ENDED:
            counts = Counts(processing=rest, succeeded=succeeded, errored=failed)
        elif state == "JOB_STATE_EXPIRED":
            counts = Counts(succeeded=succeeded, errored=failed, expired=rest)
        elif state in ("JOB_STATE_CANCELLED", "JOB_STATE_EARLY_STOPPED"):
            counts = Counts(succeeded=succeeded, errored=failed, canceled=rest)
        else:
            counts = Counts(succeeded=succeeded, errored=failed + rest)
        created = _epoch(job.create_time) or 0.0
        return RemoteBatch(
            id=resource,
            phase=phase,
            status=state.lower(),
            created_at=created,
            counts=counts,
            ended_at=(_epoch(job.update_time) or self._clock.now()) if phase is Phase.ENDED else None,
            cancel_requested=state == "JOB_STATE_CANCELLED",
            intent_id=intent_id,
            handle=job,
        )

    def _deleted(self, name: str, intent_id: str, count: int) -> RemoteBatch:
        now = self._clock.now()
        return RemoteBatch(
            id=name,
            phase=Phase.ENDED,
            status="deleted",
            created_at=now,
            counts=Counts(canceled=count),
            ended_at=now,
            cancel_requested=True,
            intent_id=intent_id,
            handle=None,
        )

    def _translate(self) -> AbstractContextManager[None]:
        return FIREWORKS_SDK.translate()


def _rows(body: bytes) -> tuple[str, bytes]:
    """The model the codec's input lines name (one a batch), and the lines as Fireworks' dataset rows: `custom_id` and
    `body`, the model left out (the job names it)."""
    model = ""
    rows: list[bytes] = []
    for raw in body.splitlines():
        if not raw.strip():
            continue
        line = json.loads(raw)
        request = dict(line["body"])
        model = str(request.pop("model", model))
        rows.append(json.dumps({"custom_id": line["custom_id"], "body": request}, separators=(",", ":")).encode())
    return model, b"\n".join(rows) + b"\n"
