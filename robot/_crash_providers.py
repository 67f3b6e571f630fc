"""The batch APIs the crash suites drive through `lowtide emulator`: where each keeps its batches, how it lists
them and what its ids look like (CrashLibrary's, and the soak libraries' built on it)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from lowtide.ledger.records import BatchState

API_KEY_ENV = "LOWTIDE_CRASH_API_KEY"
API_KEY = "crash-suite-key"
REPLY = 'Emulated reply to "question {index}"'
FIREWORKS_ACCOUNT = "crash-suite"
"""The Fireworks account the crash client's jobs run in."""


@dataclass(frozen=True)
class _Provider:
    """Where the emulator keeps one provider's batches, and what they look like."""

    list_path: str
    headers: dict[str, str]
    cursor: str
    size: Callable[[Mapping[str, Any]], int] | None
    """The number of requests a listed batch holds; None when the API does not say (Together's jobs)."""
    batches_stat: str
    created_stat: str
    batch_prefix: str
    fault_prefix: str
    """What the emulator's routes of this API are named with (`openai.batches.create`)."""
    results_route: str
    """The route a client reads a batch's results through."""
    items: str = "data"
    """Where a page of the list holds its batches."""
    next_page: Callable[[Mapping[str, Any]], str | None] = lambda page: (
        page["last_id"] if page.get("has_more") else None
    )
    """The cursor of the page after `page`, None on the last."""
    page_size: str = "limit"
    query: tuple[tuple[str, str], ...] = ()
    """What every call of the API names in its query (Azure's `api-version`)."""
    label: Callable[[Mapping[str, Any]], str] = lambda batch: (
        f"{batch['id']} ({batch.get('processing_status') or batch.get('status')}"
    )
    """A listed batch's id and status, for messages."""
    numbered: bool = False
    """Pages are asked for by number (`cursor` 0, 1, ...) until one comes back short (Mistral's)."""


# The batch states `lowtide status` shows for a batch still outstanding.
_OUTSTANDING = {state.value for state in BatchState if state.outstanding}
_PROVIDERS = {
    "anthropic": _Provider(
        list_path="/v1/messages/batches",
        headers={"x-api-key": API_KEY, "anthropic-version": "2023-06-01"},
        cursor="after_id",
        size=lambda batch: sum(int(v) for v in batch["request_counts"].values()),
        batches_stat="batches",
        created_stat="created_custom_ids",
        batch_prefix="msgbatch_",
        fault_prefix="",
        results_route="batches.results",
    ),
    "openai": _Provider(
        list_path="/v1/batches",
        headers={"authorization": f"Bearer {API_KEY}"},
        cursor="after",
        size=lambda batch: int(batch["request_counts"]["total"]),
        batches_stat="openai_batches",
        created_stat="openai_created_custom_ids",
        batch_prefix="batch_",
        fault_prefix="openai.",
        results_route="openai.files.content",
    ),
    # Azure OpenAI's batches are OpenAI's, at Azure's paths; every call names its API version.
    "azure_openai": _Provider(
        list_path="/openai/batches",
        query=(("api-version", "2024-10-21"),),
        headers={"api-key": API_KEY},
        cursor="after",
        size=lambda batch: int(batch["request_counts"]["total"]),
        batches_stat="azure_openai_batches",
        created_stat="azure_openai_created_custom_ids",
        batch_prefix="batch_",
        fault_prefix="azure_openai.",
        results_route="azure_openai.files.content",
    ),
    # Groq's Batch API is OpenAI's under /openai/v1, its listing one page of every batch.
    "groq": _Provider(
        list_path="/openai/v1/batches",
        headers={"authorization": f"Bearer {API_KEY}"},
        cursor="after",
        size=lambda batch: int(batch["request_counts"]["total"]),
        batches_stat="groq_batches",
        created_stat="groq_created_custom_ids",
        batch_prefix="batch_",
        fault_prefix="groq.",
        results_route="groq.files.content",
        next_page=lambda page: None,
    ),
    # Together's jobs are listed as a bare list, and report no request counts (the created custom ids prove it).
    "together": _Provider(
        list_path="/v1/batches",
        headers={"authorization": f"Bearer {API_KEY}", "user-agent": "Together/Python lowtide-crash-suite"},
        cursor="after",
        size=None,
        batches_stat="together_batches",
        created_stat="together_created_custom_ids",
        batch_prefix="batch_",
        fault_prefix="together.",
        results_route="together.files.content",
        next_page=lambda page: None,
    ),
    # Gemini's batch jobs are long-running operations: `batchStats` counts their requests (an int64, as a string).
    "gemini": _Provider(
        list_path="/v1beta/batches",
        headers={"x-goog-api-key": API_KEY},
        cursor="pageToken",
        size=lambda job: int(job["metadata"]["batchStats"]["requestCount"]),
        batches_stat="gemini_batches",
        created_stat="gemini_created_custom_ids",
        batch_prefix="batches/",
        fault_prefix="gemini.",
        # A job of inline requests answers inline, in the job itself.
        results_route="gemini.batches.get",
        items="operations",
        next_page=lambda page: page.get("nextPageToken"),
        page_size="pageSize",
        label=lambda job: f"{job['name']} ({job['metadata']['state']}",
    ),
    # Vertex AI's batch prediction jobs of the crash client's project (anonymous: any bearer token); a job's size is
    # the request count its display name carries (`lowtide-<intent id>-<count>`).
    "vertex": _Provider(
        list_path="/v1beta1/projects/crash-project/locations/us-central1/batchPredictionJobs",
        headers={"authorization": "Bearer crash-suite"},
        cursor="pageToken",
        size=lambda job: int(str(job["displayName"]).rpartition("-")[2]),
        batches_stat="vertex_batches",
        created_stat="vertex_created_custom_ids",
        batch_prefix="projects/",
        fault_prefix="vertex.",
        # A job's answers are files in Cloud Storage, read through the JSON API.
        results_route="vertex.storage.objects.get",
        items="batchPredictionJobs",
        next_page=lambda page: page.get("nextPageToken"),
        page_size="pageSize",
        label=lambda job: f"{job['name']} ({job['state']}",
    ),
    # Bedrock's batch inference jobs, listed by the control plane: boto3 signs its calls, the emulator reads only the
    # service named in the signature's scope.
    "bedrock": _Provider(
        list_path="/model-invocation-jobs",
        headers={
            "authorization": "AWS4-HMAC-SHA256 Credential=AKIDCRASH/20260101/us-east-1/bedrock/aws4_request, "
            "SignedHeaders=host, Signature=0"
        },
        cursor="nextToken",
        size=lambda job: int(job["totalRecordCount"]),
        batches_stat="bedrock_batches",
        created_stat="bedrock_created_custom_ids",
        batch_prefix="arn:aws:bedrock:",
        fault_prefix="bedrock.",
        results_route="bedrock.s3.get_object",
        items="invocationJobSummaries",
        next_page=lambda page: page.get("nextToken"),
        page_size="maxResults",
        label=lambda job: f"{job['jobArn']} ({job['status']}",
    ),
    # Mistral's batch jobs: `total_requests` counts them; its list is paged by number.
    "mistral": _Provider(
        list_path="/v1/batch/jobs",
        headers={"authorization": f"Bearer {API_KEY}"},
        cursor="page",
        size=lambda job: int(job["total_requests"]),
        batches_stat="mistral_batches",
        created_stat="mistral_created_custom_ids",
        batch_prefix="",
        fault_prefix="mistral.",
        results_route="mistral.files.content",
        page_size="page_size",
        numbered=True,
    ),
    # xAI's named batches: made empty under a name, then their requests added (each add one of OpenAI's batches in
    # the emulator, so `xai_batches` counts the adds that committed); `state.num_requests` counts what one holds.
    "xai": _Provider(
        list_path="/xai/v1/batches",
        headers={"authorization": f"Bearer {API_KEY}"},
        cursor="pagination_token",
        size=lambda batch: int(batch["state"]["num_requests"]),
        batches_stat="xai_batches",
        created_stat="xai_created_custom_ids",
        batch_prefix="batch_",
        fault_prefix="xai.",
        results_route="xai.batches.results",
        items="batches",
        next_page=lambda page: page.get("pagination_token"),
        label=lambda batch: f"{batch['batch_id']} ({'cancelled' if batch.get('cancel_time') else 'listed'}",
    ),
    # OpenRouter's batches, its requests inline: listed newest first (`after` the last id), counted by
    # `request_counts.total`, their results read with the batch (`GET /batches/{id}`).
    "openrouter": _Provider(
        list_path="/openrouter/api/v1/batches",
        headers={"authorization": f"Bearer {API_KEY}"},
        cursor="after",
        size=lambda batch: int(batch["request_counts"]["total"]),
        batches_stat="openrouter_batches",
        created_stat="openrouter_created_custom_ids",
        batch_prefix="batch_",
        fault_prefix="openrouter.",
        results_route="openrouter.batches.retrieve",
    ),
    # Fireworks' batch inference jobs of the crash client's account: `jobProgress.totalInputRequests` counts a job's
    # requests (each job one of OpenAI's batches in the emulator, so `fireworks_batches` counts the jobs).
    "fireworks": _Provider(
        list_path=f"/fireworks/v1/accounts/{FIREWORKS_ACCOUNT}/batchInferenceJobs",
        headers={"authorization": f"Bearer {API_KEY}"},
        cursor="pageToken",
        size=lambda job: int(job["jobProgress"]["totalInputRequests"]),
        batches_stat="fireworks_batches",
        created_stat="fireworks_created_custom_ids",
        batch_prefix="accounts/",
        fault_prefix="fireworks.",
        results_route="fireworks.datasets.file",
        items="batchInferenceJobs",
        next_page=lambda page: page.get("nextPageToken") or None,
        page_size="pageSize",
        label=lambda job: f"{job['name']} ({job['state']}",
    ),
}
# An OpenAI-compatible endpoint configured by data reaches the emulator's OpenAI wire: its batches are OpenAI's.
_PROVIDERS["openai_compatible"] = _PROVIDERS["openai"]
