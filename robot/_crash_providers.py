"""The batch APIs the crash suites drive through `lowtide emulator`: where each keeps its batches, how it lists
them and what its ids look like (CrashLibrary's, and the soak libraries' built on it)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from lowtide.ledger.records import BatchState

API_KEY_ENV = "LOWTIDE_CRASH_API_KEY"
API_KEY = "crash-suite-key"
REPLY = 'Emulated reply to "question {index}"'
FIREWORKS_ACCOUNT = "crash-suite"
"""The Fireworks account the crash client's jobs run in."""


Listed = Mapping[str, Any]
"""A batch as the API lists it, or a page of its list."""


def _dig(value: Any, path: tuple[str, ...]) -> Any:
    """What `value` holds at `path`, a key after a key."""
    for name in path:
        value = value[name]
    return value


def _at(*path: str) -> Callable[[Listed], int]:
    """The number at `path` in a listed batch (an int64 may come as a string)."""
    return lambda batch: int(_dig(batch, path))


def _label(id_key: str, *state: str) -> Callable[[Listed], str]:
    """A listed batch's id and its state at `state`, for messages."""
    return lambda batch: f"{batch[id_key]} ({_dig(batch, state)}"


def _token(name: str) -> Callable[[Listed], str | None]:
    """The next page's token, named `name` in a page; None (or empty) on the last."""
    return lambda page: page.get(name) or None


def _after_last(page: Listed) -> str | None:
    """OpenAI's cursor: the last batch's id while the page says there are more."""
    return page["last_id"] if page.get("has_more") else None


def _one_page(page: Listed) -> None:
    """An API whose listing is one page of every batch."""


@dataclass(frozen=True)
class _Paging:
    """How an API's list of batches is paged."""

    cursor: str = "after"
    """The query parameter that names the page."""
    items: str = "data"
    """Where a page holds its batches."""
    next_page: Callable[[Listed], str | None] = _after_last
    """The cursor of the page after `page`, None on the last."""
    size: str = "limit"
    """The query parameter of the page's size."""
    numbered: bool = False
    """Pages are asked for by number (`cursor` 0, 1, ...) until one comes back short (Mistral's)."""


def _google(items: str) -> _Paging:
    """Google's paging (Gemini, Vertex AI, and Fireworks' API too): a page token, `pageSize`."""
    return _Paging("pageToken", items, _token("nextPageToken"), "pageSize")


@dataclass(frozen=True)
class _Provider:
    """Where the emulator keeps one provider's batches, and what they look like."""

    name: str
    """The emulator's name of the API, that its stats and routes carry (`openai_batches`, `openai.batches.create`);
    Anthropic's, the first, carry none."""
    list_path: str
    headers: dict[str, str]
    size: Callable[[Listed], int] | None
    """The number of requests a listed batch holds; None when the API does not say (Together's jobs)."""
    batch_prefix: str
    route: str
    """The route a client reads a batch's results through, without the API's name."""
    paging: _Paging = field(default_factory=_Paging)
    query: tuple[tuple[str, str], ...] = ()
    """What every call of the API names in its query (Azure's `api-version`)."""
    label: Callable[[Listed], str] = lambda batch: (
        f"{batch['id']} ({batch.get('processing_status') or batch.get('status')}"
    )
    """A listed batch's id and status, for messages."""

    @property
    def fault_prefix(self) -> str:
        """What the emulator's routes of this API are named with (`openai.batches.create`)."""
        return "" if self.name == "anthropic" else f"{self.name}."

    @property
    def batches_stat(self) -> str:
        return self.fault_prefix.replace(".", "_") + "batches"

    @property
    def created_stat(self) -> str:
        return self.fault_prefix.replace(".", "_") + "created_custom_ids"

    @property
    def results_route(self) -> str:
        """The route a client reads a batch's results through (`openai.files.content`)."""
        return self.fault_prefix + self.route


# The batch states `lowtide status` shows for a batch still outstanding.
_OUTSTANDING = {state.value for state in BatchState if state.outstanding}
_BEARER = {"authorization": f"Bearer {API_KEY}"}
_TOTAL = _at("request_counts", "total")
_AWS_SIGNED = {
    "authorization": "AWS4-HMAC-SHA256 Credential=AKIDCRASH/20260101/us-east-1/bedrock/aws4_request, "
    "SignedHeaders=host, Signature=0"
}
_ROWS = (
    _Provider(
        "anthropic",
        "/v1/messages/batches",
        {"x-api-key": API_KEY, "anthropic-version": "2023-06-01"},
        lambda batch: sum(int(v) for v in batch["request_counts"].values()),
        "msgbatch_",
        "batches.results",
        _Paging("after_id"),
    ),
    _Provider("openai", "/v1/batches", _BEARER, _TOTAL, "batch_", "files.content"),
    # Azure OpenAI's batches are OpenAI's, at Azure's paths; every call names its API version.
    _Provider(
        "azure_openai",
        "/openai/batches",
        {"api-key": API_KEY},
        _TOTAL,
        "batch_",
        "files.content",
        query=(("api-version", "2024-10-21"),),
    ),
    # Groq's Batch API is OpenAI's under /openai/v1, its listing one page of every batch.
    _Provider("groq", "/openai/v1/batches", _BEARER, _TOTAL, "batch_", "files.content", _Paging(next_page=_one_page)),
    # Together's jobs are listed as a bare list, and report no request counts (the created custom ids prove it).
    _Provider(
        "together",
        "/v1/batches",
        {**_BEARER, "user-agent": "Together/Python lowtide-crash-suite"},
        None,
        "batch_",
        "files.content",
        _Paging(next_page=_one_page),
    ),
    # Gemini's batch jobs are long-running operations: `batchStats` counts their requests (an int64, as a string);
    # a job of inline requests answers inline, in the job itself.
    _Provider(
        "gemini",
        "/v1beta/batches",
        {"x-goog-api-key": API_KEY},
        _at("metadata", "batchStats", "requestCount"),
        "batches/",
        "batches.get",
        _google("operations"),
        label=_label("name", "metadata", "state"),
    ),
    # Vertex AI's batch prediction jobs of the crash client's project (anonymous: any bearer token); a job's size is
    # the request count its display name carries (`lowtide-<intent id>-<count>`); its answers are files in Cloud
    # Storage, read through the JSON API.
    _Provider(
        "vertex",
        "/v1beta1/projects/crash-project/locations/us-central1/batchPredictionJobs",
        {"authorization": "Bearer crash-suite"},
        lambda job: int(str(job["displayName"]).rpartition("-")[2]),
        "projects/",
        "storage.objects.get",
        _google("batchPredictionJobs"),
        label=_label("name", "state"),
    ),
    # Bedrock's batch inference jobs, listed by the control plane: boto3 signs its calls, the emulator reads only the
    # service named in the signature's scope.
    _Provider(
        "bedrock",
        "/model-invocation-jobs",
        _AWS_SIGNED,
        _at("totalRecordCount"),
        "arn:aws:bedrock:",
        "s3.get_object",
        _Paging("nextToken", "invocationJobSummaries", _token("nextToken"), "maxResults"),
        label=_label("jobArn", "status"),
    ),
    # Mistral's batch jobs: `total_requests` counts them; its list is paged by number.
    _Provider(
        "mistral",
        "/v1/batch/jobs",
        _BEARER,
        _at("total_requests"),
        "",
        "files.content",
        _Paging("page", size="page_size", numbered=True),
    ),
    # xAI's named batches: made empty under a name, then their requests added (each add one of OpenAI's batches in
    # the emulator, so `xai_batches` counts the adds that committed); `state.num_requests` counts what one holds.
    _Provider(
        "xai",
        "/xai/v1/batches",
        _BEARER,
        _at("state", "num_requests"),
        "batch_",
        "batches.results",
        _Paging("pagination_token", "batches", _token("pagination_token")),
        label=lambda batch: f"{batch['batch_id']} ({'cancelled' if batch.get('cancel_time') else 'listed'}",
    ),
    # OpenRouter's batches, its requests inline: listed newest first (`after` the last id), counted by
    # `request_counts.total`, their results read with the batch (`GET /batches/{id}`).
    _Provider("openrouter", "/openrouter/api/v1/batches", _BEARER, _TOTAL, "batch_", "batches.retrieve"),
    # Fireworks' batch inference jobs of the crash client's account: `jobProgress.totalInputRequests` counts a job's
    # requests (each job one of OpenAI's batches in the emulator, so `fireworks_batches` counts the jobs); a job's id
    # in the ledger is its full name (`accounts/<account>/batchInferenceJobs/<id>`).
    _Provider(
        "fireworks",
        f"/fireworks/v1/accounts/{FIREWORKS_ACCOUNT}/batchInferenceJobs",
        _BEARER,
        _at("jobProgress", "totalInputRequests"),
        "accounts/",
        "datasets.file",
        _google("batchInferenceJobs"),
        label=_label("name", "state"),
    ),
)
_PROVIDERS = {row.name: row for row in _ROWS}
# An OpenAI-compatible endpoint configured by data reaches the emulator's OpenAI wire: its batches are OpenAI's.
_PROVIDERS["openai_compatible"] = _PROVIDERS["openai"]
