"""The Fireworks half of the emulator's state and operations, free of HTTP: OpenAI's chat answers and models
(`CompatBackend`) in Fireworks' dialect, and Fireworks' Batch Inference API: datasets (created, then a JSONL file
uploaded to one), batch inference jobs created under a client-chosen id from an input dataset (each runs as one of
OpenAI's batches underneath, on the emulator's clock and faults), the job's output dataset (its results file and its
error file, fetched through signed URLs), and a job deleted (Fireworks has no cancel: a running job deleted stops).

The emulator's reading, where Fireworks' REST reference is silent: a job id or dataset id given twice is refused (409,
`ALREADY_EXISTS`); ids are 1 to 63 lower-case letters, digits and dashes; a results line is `{custom_id, response}`
(the chat completion) and an error line `{custom_id, error: {message}}`; an output dataset's files are
`BIJ_main_results_0.jsonl` and `BIJ_error_0.jsonl`; a deleted job is gone at once (404 after)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import cast

from lowtide.core.clock import Clock
from lowtide.emulator.core.cache import PromptCache
from lowtide.emulator.core.faults import Faults
from lowtide.emulator.core.jsonutil import JsonObject, as_object
from lowtide.emulator.core.settings import Settings
from lowtide.emulator.openai.checks import require_object
from lowtide.emulator.openai.compat import CompatBackend
from lowtide.emulator.openai.dialect import Dialect
from lowtide.emulator.openai.errors import OpenAIError

__all__ = ["ERRORS_FILE", "RESULTS_FILE", "FireworksBackend", "Job"]

_DAY = 24 * 3600.0
_CHAT = "/v1/chat/completions"
_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
RESULTS_FILE = "BIJ_main_results_0.jsonl"
ERRORS_FILE = "BIJ_error_0.jsonl"
_STATES = {
    "validating": "JOB_STATE_VALIDATING",
    "in_progress": "JOB_STATE_RUNNING",
    "finalizing": "JOB_STATE_WRITING_RESULTS",
    "completed": "JOB_STATE_COMPLETED",
    "failed": "JOB_STATE_FAILED",
    "expired": "JOB_STATE_EXPIRED",
    "cancelling": "JOB_STATE_CANCELLING",
    "cancelled": "JOB_STATE_CANCELLED",
}


@dataclass
class Job:
    """One batch inference job: its names, and the OpenAI batch it runs as."""

    job_id: str
    account: str
    model: str
    input_dataset: str
    output_dataset: str
    created_at: float
    batch_id: str
    display_name: str = ""

    def kept(self) -> JsonObject:
        return {
            "job_id": self.job_id,
            "account": self.account,
            "model": self.model,
            "input_dataset": self.input_dataset,
            "output_dataset": self.output_dataset,
            "created_at": self.created_at,
            "batch_id": self.batch_id,
            "display_name": self.display_name,
        }

    @classmethod
    def from_kept(cls, kept: JsonObject) -> Job:
        return cls(
            job_id=str(kept["job_id"]),
            account=str(kept["account"]),
            model=str(kept["model"]),
            input_dataset=str(kept["input_dataset"]),
            output_dataset=str(kept["output_dataset"]),
            created_at=float(str(kept["created_at"])),
            batch_id=str(kept["batch_id"]),
            display_name=str(kept.get("display_name") or ""),
        )


def _when(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")


def _checked_id(value: object, what: str) -> str:
    if not isinstance(value, str) or not _ID.match(value):
        raise OpenAIError(
            400,
            f"Invalid {what} {value!r}: 1 to 63 lower-case letters, digits and dashes, starting with a letter or "
            "digit.",
            param=what,
        )
    return value


def _dataset_id(name: object, account: str) -> str:
    """A dataset named by its id or its resource name (`accounts/<account>/datasets/<id>`)."""
    text = str(name or "")
    prefix = f"accounts/{account}/datasets/"
    return _checked_id(text.removeprefix(prefix), "dataset_id")


class FireworksBackend(CompatBackend):
    """Chat answers, models, and the datasets and batch inference jobs of the emulated Fireworks accounts (by
    `(account, id)`)."""

    def __init__(self, clock: Clock, settings: Settings, faults: Faults, cache: PromptCache, dialect: Dialect) -> None:
        super().__init__(clock, settings, faults, cache, dialect)
        self.datasets: dict[str, JsonObject] = {}
        """Each dataset by `<account>/<id>`: its record, and the file id its upload made (`file`)."""
        self.jobs: dict[str, Job] = {}

    def reset(self) -> None:
        super().reset()
        self.datasets.clear()
        self.jobs.clear()

    # Datasets.

    def create_dataset(self, account: str, body: object) -> JsonObject:
        params = require_object(body)
        dataset_id = _checked_id(params.get("datasetId", params.get("dataset_id")), "dataset_id")
        key = f"{account}/{dataset_id}"
        if key in self.datasets:
            raise OpenAIError(409, f"Dataset accounts/{key.replace('/', '/datasets/', 1)} already exists.")
        dataset = as_object(params.get("dataset")) or {}
        self.datasets[key] = {
            "name": f"accounts/{account}/datasets/{dataset_id}",
            "displayName": str(dataset.get("displayName") or dataset_id),
            "createTime": _when(self.clock.now()),
            "state": "UPLOADING",
            "format": str(dataset.get("format") or "CHAT"),
            "exampleCount": str(dataset.get("exampleCount") or "0"),
            "file": None,
        }
        return self.show_dataset(account, dataset_id)

    def _dataset(self, account: str, dataset_id: str) -> JsonObject:
        found = self.datasets.get(f"{account}/{dataset_id}")
        if found is None:
            raise OpenAIError(404, f"Dataset accounts/{account}/datasets/{dataset_id} not found.")
        return found

    def show_dataset(self, account: str, dataset_id: str) -> JsonObject:
        return {key: value for key, value in self._dataset(account, dataset_id).items() if key != "file"}

    def upload_dataset(self, account: str, dataset_id: str, filename: str, content: bytes) -> JsonObject:
        """The file stored as the dataset's (once: a dataset is uploaded to once), the dataset made ready."""
        dataset = self._dataset(account, dataset_id)
        if dataset.get("file") is not None:
            raise OpenAIError(400, f"Dataset {dataset['name']} was uploaded to already.")
        stored = self.upload(filename, content, "batch", None)
        dataset["file"] = stored["id"]
        dataset["state"] = "READY"
        dataset["exampleCount"] = str(sum(1 for line in content.splitlines() if line.strip()))
        return {"id": dataset_id, "bytes": len(content), "filename": filename, "object": "file"}

    def delete_dataset(self, account: str, dataset_id: str) -> JsonObject:
        self._dataset(account, dataset_id)
        del self.datasets[f"{account}/{dataset_id}"]
        return {}

    # Jobs.

    def create_job(self, account: str, job_id: object, body: object) -> JsonObject:
        """The job made from its input dataset: each row's body sent to the job's model as one of OpenAI's batches."""
        params = require_object(body)
        job_id = _checked_id(job_id, "batch_inference_job_id")
        if f"{account}/{job_id}" in self.jobs:
            raise OpenAIError(
                409, f"Batch inference job accounts/{account}/batchInferenceJobs/{job_id} already exists."
            )
        model = params.get("model")
        if not isinstance(model, str) or not model:
            raise OpenAIError(400, "Missing required parameter: 'model'.", param="model")
        input_id = _dataset_id(params.get("inputDatasetId"), account)
        dataset = self._dataset(account, input_id)
        file_id = dataset.get("file")
        if not isinstance(file_id, str):
            raise OpenAIError(400, f"Dataset {dataset['name']} has no file uploaded yet.")
        output = params.get("outputDatasetId") or f"accounts/{account}/datasets/{job_id}-output"
        output_id = _dataset_id(output, account)
        lines: list[bytes] = []
        for raw in b"".join(self.file_content(file_id)).splitlines():
            row = as_object(json.loads(raw)) if raw.strip() else None
            if row is None:
                continue
            body_of = as_object(row.get("body")) or {}
            line = {
                "custom_id": row.get("custom_id"),
                "method": "POST",
                "url": _CHAT,
                "body": {**body_of, "model": model},
            }
            lines.append(json.dumps(line).encode())
        stored = self.upload(f"fireworks-{job_id}.jsonl", b"\n".join(lines), "batch", None)
        created = self.create_compat_batch(
            {"input_file_id": stored["id"], "endpoint": _CHAT, "completion_window": "24h"}, window_seconds=_DAY
        )
        self.datasets.setdefault(
            f"{account}/{output_id}",
            {
                "name": f"accounts/{account}/datasets/{output_id}",
                "displayName": output_id,
                "createTime": _when(self.clock.now()),
                "state": "READY",
                "format": "CHAT",
                "exampleCount": "0",
                "file": None,
                "job": job_id,
            },
        )
        job = Job(
            job_id=job_id,
            account=account,
            model=model,
            input_dataset=f"accounts/{account}/datasets/{input_id}",
            output_dataset=f"accounts/{account}/datasets/{output_id}",
            created_at=self.clock.now(),
            batch_id=str(created["id"]),
            display_name=str(params.get("displayName") or ""),
        )
        self.jobs[f"{account}/{job_id}"] = job
        return self.render(job)

    def job(self, account: str, job_id: str) -> Job:
        found = self.jobs.get(f"{account}/{job_id}")
        if found is None:
            raise OpenAIError(404, f"Batch inference job accounts/{account}/batchInferenceJobs/{job_id} not found.")
        return found

    def render(self, job: Job) -> JsonObject:
        """The job as Fireworks shows it: its names, state and progress, from the batch it runs as."""
        shown = self.retrieve_batch(job.batch_id)
        counts = as_object(shown.get("request_counts")) or {}
        total, done, failed = (int(str(counts.get(key) or 0)) for key in ("total", "completed", "failed"))
        state = _STATES.get(str(shown.get("status")), "JOB_STATE_PENDING")
        status: JsonObject = {"code": "OK", "message": ""}
        if state == "JOB_STATE_FAILED":
            errors = as_object(shown.get("errors")) or {}
            data = errors.get("data")
            first = as_object(cast("list[object]", data)[0]) if isinstance(data, list) and data else None
            status = {"code": "INVALID_ARGUMENT", "message": str((first or {}).get("message") or "The job failed.")}
        return {
            "name": f"accounts/{job.account}/batchInferenceJobs/{job.job_id}",
            "displayName": job.display_name,
            "createTime": _when(job.created_at),
            "createdBy": "emulated@fireworks.ai",
            "state": state,
            "status": status,
            "model": job.model,
            "inputDatasetId": job.input_dataset,
            "outputDatasetId": job.output_dataset,
            "updateTime": _when(self.clock.now()),
            "jobProgress": {
                "percent": (100 * (done + failed) // total) if total else 0,
                "totalInputRequests": total,
                "totalProcessedRequests": done + failed,
                "successfullyProcessedRequests": done,
                "failedRequests": failed,
            },
        }

    def show_job(self, account: str, job_id: str) -> JsonObject:
        return self.render(self.job(account, job_id))

    def list_jobs(self, account: str, params: dict[str, str]) -> JsonObject:
        """The account's jobs, newest first, a page of `pageSize` (at most 200) after `pageToken`."""
        mine = sorted((job for job in self.jobs.values() if job.account == account), key=lambda j: -j.created_at)
        token, size = params.get("pageToken") or "0", params.get("pageSize") or "50"
        if not token.isdigit() or not size.isdigit() or not 1 <= int(size) <= 200:
            raise OpenAIError(400, f"Invalid page: pageToken {token!r}, pageSize {size!r}.")
        start, end = int(token), int(token) + int(size)
        shown = [self.render(job) for job in mine[start:end]]
        return {
            "batchInferenceJobs": shown,
            "nextPageToken": str(end) if end < len(mine) else "",
            "totalSize": len(mine),
        }

    def delete_job(self, account: str, job_id: str) -> JsonObject:
        """The job gone, and the batch it runs as stopped (what has not run never will)."""
        job = self.job(account, job_id)
        if self.retrieve_batch(job.batch_id).get("status") in ("validating", "in_progress"):
            self.cancel_batch(job.batch_id)
        del self.jobs[f"{account}/{job_id}"]
        return {}

    # The output dataset.

    def download_files(self, account: str, dataset_id: str) -> dict[str, str]:
        """The files of an output dataset, by name: the file ids of its job's results and errors, once it ended."""
        dataset = self._dataset(account, dataset_id)
        job = self.jobs.get(f"{account}/{dataset.get('job')}")
        if job is None:
            return {}
        shown = self.retrieve_batch(job.batch_id)
        files: dict[str, str] = {}
        for name, key in ((RESULTS_FILE, "output_file_id"), (ERRORS_FILE, "error_file_id")):
            file_id = shown.get(key)
            if isinstance(file_id, str) and file_id:
                files[name] = file_id
        return files

    def result_lines(self, file_id: str) -> Iterator[bytes]:
        """An OpenAI output or error file's lines as Fireworks writes its results and errors."""
        for raw in b"".join(self.file_content(file_id)).splitlines():
            if raw.strip():
                yield json.dumps(_result(raw)).encode() + b"\n"


def _result(raw: bytes) -> JsonObject:
    line = as_object(json.loads(raw)) or {}
    response = as_object(line.get("response")) or {}
    body = as_object(response.get("body")) or {}
    if response.get("status_code") == 200:
        return {"custom_id": line.get("custom_id"), "response": body}
    error = as_object(line.get("error")) or as_object(body.get("error")) or {}
    return {
        "custom_id": line.get("custom_id"),
        "error": {"message": str(error.get("message") or "The request failed.")},
    }
