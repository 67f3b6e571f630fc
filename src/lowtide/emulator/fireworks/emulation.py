"""The Fireworks AI API as an emulation (the `fireworks` entry point of `lowtide.emulators`): Chat Completions as
OpenAI's emulation serves them in Fireworks' dialect, Fireworks' own models routes (`GET
/v1/accounts/{account}/models`, `.../models/{model}`) and its Batch Inference API (datasets, batch inference jobs, an
output dataset's signed download URLs: `batches.py`), all under `/fireworks/v1/`. The fireworks SDK, given a base
URL, puts `/v1/...` after it for every route (at its default address, chat goes to `/inference/v1/...`), so a program
sets `FIREWORKS_BASE_URL=http://127.0.0.1:8765/fireworks`. Route names are `fireworks.chat.completions.create`,
`fireworks.models.retrieve`, `fireworks.models.list`, `fireworks.datasets.create`, `fireworks.datasets.upload`,
`fireworks.batch_jobs.create`, `fireworks.batch_jobs.get`, `fireworks.batch_jobs.delete`, ..., so faults armed for a
`fireworks.` route reach Fireworks' callers alone; errors are OpenAI's shape (the emulator's reading: the SDK reads
any JSON error body).

A model is shown as Fireworks' REST reference shows one: `name` (`accounts/<account>/models/<id>`), `displayName`,
`state` and `contextLength`; the listing is a page of `models` with `nextPageToken` and `totalSize`, every model in
one page (the emulator's reading: a handful of models never needs a second)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from starlette.requests import Request

from lowtide.core.json_types import json_object
from lowtide.emulator.core.emulation import RouteRow, Shared
from lowtide.emulator.core.http import Answer, Streamed, read_json
from lowtide.emulator.core.jsonutil import JsonObject
from lowtide.emulator.fireworks.batches import FireworksBackend, Job
from lowtide.emulator.openai.catalogue import model_not_found
from lowtide.emulator.openai.dialect import Catalogue, Dialect
from lowtide.emulator.openai.dialect_emulation import CompatEmulation
from lowtide.emulator.openai.http import read_upload

__all__ = ["FIREWORKS", "FireworksEmulation"]

_JSON_BYTES = 1024 * 1024
_UPLOAD_BYTES = 150 * 1024 * 1024
"""The SDK's one-call upload takes a file of up to 150 MB (Fireworks' reference)."""

FIREWORKS = Dialect(
    name="fireworks",
    catalogue=Catalogue.read("lowtide.emulator.fireworks"),
    own_keys={"reasoning_effort": ("none", "low", "medium", "high"), "top_k": ()},
    served=("chat.completions.create",),
    prefix="/fireworks",
)
"""What Fireworks changes of OpenAI's API: its models (named `accounts/<account>/models/<id>`), its body keys, its
path prefix; its models routes are its own."""


def _shown(model: JsonObject) -> JsonObject:
    """A catalogue row as Fireworks' models routes show a model."""
    name = str(model["id"])
    return {
        "name": name,
        "displayName": name.rsplit("/", 1)[-1],
        "state": "READY",
        "contextLength": model.get("context_length"),
    }


class FireworksEmulation(CompatEmulation):
    """The emulated Fireworks account (`Emulator.emulation(FireworksEmulation)`)."""

    dialect = FIREWORKS
    name = FIREWORKS.name
    route_names = (
        *FIREWORKS.route_names,
        "fireworks.models.list",
        "fireworks.models.retrieve",
        "fireworks.datasets.create",
        "fireworks.datasets.get",
        "fireworks.datasets.upload",
        "fireworks.datasets.download",
        "fireworks.datasets.delete",
        "fireworks.datasets.file",
        "fireworks.batch_jobs.create",
        "fireworks.batch_jobs.list",
        "fireworks.batch_jobs.get",
        "fireworks.batch_jobs.delete",
    )

    def __init__(self, shared: Shared) -> None:
        self.fireworks = FireworksBackend(shared.clock, shared.settings, shared.faults, shared.cache, FIREWORKS)
        super().__init__(shared, self.fireworks)

    def routes(self) -> Sequence[RouteRow]:
        account = "/fireworks/v1/accounts/{account}"
        models, datasets, jobs = f"{account}/models", f"{account}/datasets", f"{account}/batchInferenceJobs"
        dataset, job = datasets + "/{dataset}", jobs + "/{job}"
        return [
            (models, "GET", "fireworks.models.list", self._list_models),
            (models + "/{model}", "GET", "fireworks.models.retrieve", self._retrieve_model),
            (datasets, "POST", "fireworks.datasets.create", self._create_dataset),
            (dataset + ":upload", "POST", "fireworks.datasets.upload", self._upload_dataset),
            (dataset + ":getDownloadEndpoint", "GET", "fireworks.datasets.download", self._download_endpoint),
            (dataset, "GET", "fireworks.datasets.get", self._get_dataset),
            (dataset, "DELETE", "fireworks.datasets.delete", self._delete_dataset),
            ("/fireworks/signed/{file_id}", "GET", "fireworks.datasets.file", self._signed_file),
            (jobs, "POST", "fireworks.batch_jobs.create", self._create_job),
            (jobs, "GET", "fireworks.batch_jobs.list", self._list_jobs),
            (job, "GET", "fireworks.batch_jobs.get", self._get_job),
            (job, "DELETE", "fireworks.batch_jobs.delete", self._delete_job),
            *super().routes(),
        ]

    def kept(self) -> dict[str, Mapping[str, object]]:
        jobs = {key: job.kept() for key, job in self.fireworks.jobs.items()}
        return {**super().kept(), "datasets": dict(self.fireworks.datasets), "jobs": jobs}

    def take_back(self, kept: Mapping[str, object]) -> None:
        super().take_back(kept)
        for key, dataset in json_object(kept.get("datasets")).items():
            self.fireworks.datasets[key] = dict(json_object(dataset))
        for key, job in json_object(kept.get("jobs")).items():
            self.fireworks.jobs[key] = Job.from_kept(dict(json_object(job)))

    def begin(self, request: Request) -> None:
        """Every route asks for the key but a signed URL's, which carries its own authority."""
        if not request.url.path.startswith("/fireworks/signed/"):
            super().begin(request)

    async def _create_dataset(self, request: Request) -> Answer:
        return self.fireworks.create_dataset(request.path_params["account"], await read_json(request, _JSON_BYTES))

    async def _get_dataset(self, request: Request) -> Answer:
        return self.fireworks.show_dataset(request.path_params["account"], request.path_params["dataset"])

    async def _delete_dataset(self, request: Request) -> Answer:
        return self.fireworks.delete_dataset(request.path_params["account"], request.path_params["dataset"])

    async def _upload_dataset(self, request: Request) -> Answer:
        upload = await read_upload(request, _UPLOAD_BYTES)
        params = request.path_params
        return self.fireworks.upload_dataset(params["account"], params["dataset"], upload.filename, upload.content)

    async def _download_endpoint(self, request: Request) -> Answer:
        """Signed URLs of the dataset's files: here, the emulator's own address of each (no key needed)."""
        files = self.fireworks.download_files(request.path_params["account"], request.path_params["dataset"])
        base = str(request.base_url).rstrip("/")
        return {"filenameToSignedUrls": {name: f"{base}/fireworks/signed/{file_id}" for name, file_id in files.items()}}

    async def _signed_file(self, request: Request) -> Answer:
        return Streamed(self.fireworks.result_lines(request.path_params["file_id"]), "application/jsonl", gather=True)

    async def _create_job(self, request: Request) -> Answer:
        account = request.path_params["account"]
        job_id = request.query_params.get("batchInferenceJobId")
        return self.fireworks.create_job(account, job_id, await read_json(request, _JSON_BYTES))

    async def _list_jobs(self, request: Request) -> Answer:
        return self.fireworks.list_jobs(request.path_params["account"], dict(request.query_params))

    async def _get_job(self, request: Request) -> Answer:
        return self.fireworks.show_job(request.path_params["account"], request.path_params["job"])

    async def _delete_job(self, request: Request) -> Answer:
        return self.fireworks.delete_job(request.path_params["account"], request.path_params["job"])

    async def _list_models(self, request: Request) -> Answer:
        account = request.path_params["account"]
        prefix = f"accounts/{account}/models/"
        shown = [_shown(model) for model in FIREWORKS.catalogue.listed() if str(model["id"]).startswith(prefix)]
        return {"models": shown, "nextPageToken": "", "totalSize": len(shown)}

    async def _retrieve_model(self, request: Request) -> Answer:
        name = f"accounts/{request.path_params['account']}/models/{request.path_params['model']}"
        for model in FIREWORKS.catalogue.listed():
            if model["id"] == name:
                return _shown(model)
        raise model_not_found(name)
