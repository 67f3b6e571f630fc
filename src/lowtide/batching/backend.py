"""The seam between lowtide's durable batch machinery and a provider's batch API.

The engine, the ledger, bulk runs and the CLI talk to a `BatchBackend` and nothing else; every provider's shapes,
status names, id rules and error types stay behind it, in `providers/<name>/`. A backend returns neutral records:
a `RemoteBatch` (with a neutral `Phase` and `Counts`) and result lines as the API sent them, joined on custom id.

The pure half, a `BatchCodec` (requests to the provider's bodies, result lines to outcomes, id and size rules), needs
no client and no key: a dry run uses it alone. A provider class names its codec (`Provider.codec`) and offers its
backend through `Provider.batch_backend()`; a third-party provider registered through the
`lowtide.providers` entry-point group that does gets everything a built-in one gets: the ledger, keys,
coalescing, exactly-once create, park and resume, budgets and bulk runs.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from typing import Any, Protocol

from pydantic import BaseModel

from lowtide.batching.prompt_caching import PromptCaching
from lowtide.core.custom_ids import CustomIdParts
from lowtide.core.modes import BatchProcessingMode
from lowtide.errors import ActorError, APIConnectionError, APIUnreachableError, ServerError
from lowtide.messages.answers import Settled
from lowtide.types import ActorRequest, ActorResponse

__all__ = [
    "NO_STEPS",
    "BatchBackend",
    "BatchCodec",
    "BatchLimits",
    "Counts",
    "CreateSteps",
    "CustomIdParts",
    "Phase",
    "RemoteBatch",
    "ResultLine",
    "Settled",
    "UnreadableLine",
    "credential_of",
]

ResultLine = Mapping[str, Any]
"""One line of a batch's results, as the API sent it; it names its request by `custom_id`."""


@dataclass(frozen=True, slots=True)
class UnreadableLine:
    """A whole line of a batch's results that lowtide could not read as a JSON object (not JSON, not UTF-8, a string
    with an unpaired surrogate): handed on as it came, so that its request becomes an error that keeps it
    (`BatchRequestUnreadable`), and a bulk run's raw results keep its bytes."""

    raw: bytes
    """The line as the API sent it, without its newline."""
    reason: str
    """What is wrong with it, in a few words."""
    custom_id: str | None = None
    """The custom id the line names, when one can be made out of it."""

    @property
    def text(self) -> str:
        """The line as text: bytes that are not UTF-8 as `\\xNN` escapes."""
        return self.raw.decode("utf-8", "backslashreplace")


class Phase(StrEnum):
    """Where a batch stands at the provider, in lowtide's words."""

    RUNNING = "running"
    """Accepted and processing (or being validated or finalized): wait."""
    CANCELING = "canceling"
    """A cancellation was asked for; the batch has not ended yet."""
    ENDED = "ended"
    """Ended (completed, canceled, expired, or failed as a whole): its results can be read."""


@dataclass(frozen=True, slots=True)
class Counts:
    """How many of a batch's requests are in each state."""

    processing: int = 0
    succeeded: int = 0
    errored: int = 0
    canceled: int = 0
    expired: int = 0

    @property
    def total(self) -> int:
        return self.processing + self.succeeded + self.errored + self.canceled + self.expired

    def as_dict(self) -> dict[str, int]:
        return {
            "canceled": self.canceled,
            "errored": self.errored,
            "expired": self.expired,
            "processing": self.processing,
            "succeeded": self.succeeded,
        }


@dataclass(frozen=True, slots=True)
class RemoteBatch:
    """A batch as the provider reports it."""

    id: str
    """The provider's id of the batch."""
    phase: Phase
    status: str
    """The provider's own name for its state (`in_progress`, `finalizing`, ...), for people to read."""
    created_at: float
    counts: Counts
    ended_at: float | None = None
    cancel_requested: bool = False
    request_id: str | None = None
    """The id the provider gave the call that returned this record, when it gives one."""
    intent_id: str | None = None
    """lowtide's intent id, as the provider echoes it back (batch metadata), when it can."""
    handle: object = field(default=None, compare=False, repr=False)
    """The provider's own object, handed back to the backend so that it need not look the batch up again."""


@dataclass(frozen=True, slots=True)
class BatchLimits:
    """What one batch may hold, and how long the provider lets it run."""

    max_requests: int
    max_bytes: int
    max_hours: float = 24.0


class CreateSteps(Protocol):
    """The ledger's record of a create made of several calls (upload a file, then create): what each step made
    stays known after a crash, so that whoever takes the intent over creates its batch from it (`BatchBackend.resume`)
    or, giving the intent up, releases it (`BatchBackend.abandon`)."""

    async def done(self, step: str, value: str) -> None:
        """Record that `step` of the create is done, with what it produced (a file id, say)."""
        ...


def credential_of(key: str, *, owned: bool, client: object) -> str:
    """An in-memory identity of a client's credentials (a digest, never the key), for grouping calls into batches.
    An injected client (an emulator's, say) is an endpoint of its own, even when base URLs and keys look alike."""
    owner = "own" if owned else f"client-{id(client)}"
    return hashlib.sha256(f"{owner}:{key}".encode()).hexdigest()


class _NoSteps:
    """The steps of a create nobody will take over (one outside the ledger): nothing is recorded."""

    async def done(self, step: str, value: str) -> None:
        return


NO_STEPS: CreateSteps = _NoSteps()


class BatchCodec(ABC):
    """One provider's batch requests and results, as pure functions: no client, no key, no I/O."""

    name: str
    """The provider's name (the registry's, and the ledger's `provider`)."""
    gen_ai_provider_name: str | None = None
    """`gen_ai.provider.name` of its batches' spans: the GenAI conventions' value, as its `Provider` says it."""
    limits: BatchLimits
    prompt_caching: PromptCaching | None = None
    """The API's prompt caching, when a bulk run may prime a shared prefix before sending the rest (None: never)."""

    def telemetry_name(self) -> str:
        """`gen_ai.provider.name` of this provider's batches: its `gen_ai_provider_name`, else its `name`."""
        return self.gen_ai_provider_name or self.name

    @abstractmethod
    def encode_request(self, request: ActorRequest) -> dict[str, Any]:
        """The provider's body for one request, as the ledger stores it and keys are derived from."""

    @abstractmethod
    def custom_id_for(self, key: str, ledger: str | None) -> str:
        """The custom id a request keyed `key` carries: valid by the provider's rules, the same for the same key and
        ledger. `ledger` is the identity of the ledger that claims the request (`LedgerStore.identity`): the custom
        id must carry it, so that no request of another ledger (another file, another database, using the same API
        key with the same inputs) ever has the same one, and a batch of theirs is never taken for one of its own.
        None for a batch outside any ledger (`oneshot.run_batch`), where the key alone names the request."""

    @abstractmethod
    def request_size(self, custom_id: str, params_json: str) -> int:
        """The bytes one request adds to a batch (what `limits.max_bytes` counts)."""

    @abstractmethod
    def encode(self, entries: Iterable[tuple[str, str]]) -> bytes:
        """The batch's input, from (custom id, request body as JSON) pairs whose custom ids are valid."""

    def worst_case_usd(
        self, params: Mapping[str, Any], params_json: str | None, *, mode: BatchProcessingMode
    ) -> Decimal | None:
        """The most one request can cost at `mode`'s prices (None when the price is unknown), for budgets."""
        return None

    def cost_range(self, params: Mapping[str, Any]) -> tuple[Decimal, Decimal] | None:
        """(low, high) estimate of one request at batch prices, for a dry run (None when the price is unknown).
        By default: from nothing to its worst case."""
        high = self.worst_case_usd(params, None, mode=BatchProcessingMode.BATCH)
        return None if high is None else (Decimal(0), high)

    def model_of(self, params: Mapping[str, Any]) -> str:
        """The model a request body names (recorded with the request, and what its price is read for)."""
        model = params.get("model")
        return model if isinstance(model, str) else ""

    def batch_group(self, params: Mapping[str, Any] | str, model: str) -> str:
        """What requests travelling in one batch must share (`params` may be the JSON the ledger holds): a
        provider whose batches take one model or one endpoint each says so here. Requests of different groups are
        sent in batches of their own. By default every request may travel with any other."""
        return ""

    def custom_id_of(self, line: ResultLine) -> str | None:
        """The custom id a result line names (`custom_id` unless the provider calls it otherwise)."""
        custom_id = line.get("custom_id")
        return custom_id if isinstance(custom_id, str) else None

    # Rebuilding a lost ledger from the API (`lowtide ledger rebuild`): a codec that does not read its own ids back
    # leaves its provider's batches out of a rebuild, which says so.

    def custom_id_parts(self, custom_id: str) -> CustomIdParts | None:
        """What a custom id this codec made (`custom_id_for`) says: the key and the ledger's identity when they can
        be read from it, `custom_ids.HASHED` when it is a digest of both; None for an id it never makes in a ledger
        (a user's own, another program's). Only the codec knows its id rule (`custom_ids.parts_of_ledger_custom_id`
        reads back `ledger_custom_id`'s)."""
        raise NotImplementedError(f"The {self.name} codec cannot read its custom ids back.")

    def decode_input(self, line: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
        """One request of a batch's input as `encode` wrote it (a line of its input file, one of its inline
        requests): its custom id and its body as the ledger stores it (`encode_request`'s); None for a line of no
        shape `encode` writes."""
        raise NotImplementedError(f"The {self.name} codec cannot read a batch's input back.")

    @abstractmethod
    def line_outcome(
        self, line: ResultLine, *, batch_id: str, request_id: str | None
    ) -> tuple[Settled, dict[str, object] | None]:
        """One result line's outcome, and (for an answer) the dict it is stored as. An answer of text blocks alone
        may be given as a `TextAnswer` (`answers`): about a tenth of the memory of its response, for runs that hold
        thousands."""

    @abstractmethod
    def parse(self, response: ActorResponse[object], response_model: type[BaseModel]) -> ActorResponse[object]:
        """The response with its answer parsed into `response_model` (a `StructuredOutputError` if it does not
        fit)."""


class BatchBackend(ABC):
    """One provider's batch API, as the durable engine needs it: its codec, and the calls that cost money."""

    codec: BatchCodec
    finds_by_intent: bool = False
    """Whether the API echoes lowtide's intent id (batch metadata), so that an unknown create is found exactly."""
    idempotent_create: bool = False
    """Whether the API dedupes a create by the intent id (an idempotency key, such as Bedrock's
    `clientRequestToken`): then a create whose outcome is unknown is made again at once from what its steps left
    (`resumable`, `resume`), and the API answers with the batch the first create made, if it made one; no listing, no
    grace period. Such a backend records its steps before it sends the create, so that an intent with no steps never
    reached the API."""

    list_page: int = 100
    """How many batches a listing of the API's asks for a page (`recent`, `listed`): its largest page, or near it.
    Tests set it lower, to page through a few batches."""

    @property
    def name(self) -> str:
        return self.codec.name

    @property
    @abstractmethod
    def endpoint(self) -> str:
        """Where the batches live (a base URL, never a key): recorded in the ledger."""

    @property
    @abstractmethod
    def credential(self) -> str:
        """An in-memory identity of the credentials, for grouping calls into batches; never stored or logged."""

    # The batch's life.

    @abstractmethod
    async def create(self, body: bytes, count: int, *, intent_id: str, steps: CreateSteps) -> RemoteBatch:
        """Create the batch. Never retried on doubt: a failure raises its `ActorError`, and `outcome_unknown`
        says whether the batch may exist all the same."""

    def outcome_unknown(self, error: ActorError) -> bool:
        """Whether a create that failed with `error` may have made its batch (a timeout, a dropped connection,
        a server error): then it is reconciled before anything is sent again. Otherwise it was refused, or never
        sent (a connection that could not be made)."""
        return isinstance(error, APIConnectionError | ServerError) and not isinstance(error, APIUnreachableError)

    async def recent(self, *, created_after: float) -> list[RemoteBatch]:
        """The batches the provider lists as created after `created_after` (epoch seconds). Asked only of a backend
        that cannot find a batch by its intent nor create one again under the same token (`finds_by_intent` and
        `idempotent_create` False), which must implement it."""
        raise NotImplementedError

    async def find_by_intent(self, intent_id: str, *, created_after: float) -> RemoteBatch | None:
        """The batch whose metadata names `intent_id`, when `finds_by_intent`."""
        raise NotImplementedError

    @abstractmethod
    async def retrieve(self, batch_id: str) -> RemoteBatch:
        """The batch as the provider reports it now (transient failures retried)."""

    @abstractmethod
    async def stream_results(
        self, batch: RemoteBatch, handle: Callable[[ResultLine | UnreadableLine], None], *, expected: int | None = None
    ) -> None:
        """Feed every result line of an ended batch to `handle`, never holding them all; a whole line that cannot be
        read as JSON goes as an `UnreadableLine` (`batching.lines.read_line` tells), never stopping the others. A
        broken download (a dropped connection, a last line cut short) is fetched again from the start, so `handle`
        must accept a line it has seen; one that stays broken raises its `ActorError`, and the batch's requests wait
        for the next collection."""

    def unanswered_line(self, batch: RemoteBatch, custom_id: str) -> ResultLine | None:
        """The result line standing for a request the ended `batch` wrote no line for, when the provider leaves such
        requests out on purpose (canceled before they ran, or a batch that failed as a whole); None when a missing
        line means the request was lost."""
        return None

    async def first_custom_id(self, batch: RemoteBatch) -> str | None:
        """The custom id of an ended batch's first result line: enough to say whose batch it is. Asked of a backend
        that cannot find a batch by its intent (`finds_by_intent` False), which must implement it, and by a rebuild
        (`listed`), which reads the batches of a backend without it from their results alone."""
        raise NotImplementedError

    # What a rebuild of a lost ledger reads (`lowtide ledger rebuild`): every built-in backend implements these; a
    # backend that does not has its provider's batches left out of a rebuild, which says so.

    def listed(self) -> AsyncIterator[RemoteBatch]:
        """Every batch the API still lists for these credentials, newest first, page after page (transient failures
        retried)."""
        raise NotImplementedError(f"The {self.name} backend cannot list the account's batches.")

    async def inputs(self, batch: RemoteBatch, handle: Callable[[str, Mapping[str, Any]], None]) -> bool:
        """Feed `handle` each request `batch` holds, as its input still says (the uploaded file, the stored object):
        its custom id and its body as the ledger stores it (`BatchCodec.decode_input`). False, having fed nothing,
        when the API does not show the input (Anthropic's never does; a file deleted once the results were stored):
        then only the batch's results, once it has ended, say which requests it held."""
        return False

    @abstractmethod
    async def cancel(self, batch_id: str) -> RemoteBatch:
        """Ask the provider to cancel the batch."""

    def resumable(self, steps: Mapping[str, str]) -> bool:
        """Whether the steps a create left behind (an uploaded input file) are enough to create its batch again
        with `resume`, rather than sending its requests anew. False by default."""
        return False

    async def resume(
        self, done: Mapping[str, str], count: int, *, intent_id: str, steps: CreateSteps
    ) -> RemoteBatch | None:
        """Create the batch of an intent whose create never reached the API, from what its steps made (`done`),
        under the same intent id; None when what they made is gone (then its requests are sent anew). Called only
        when `resumable(done)`; failures as for `create`."""
        raise NotImplementedError

    async def abandon(self, steps: Mapping[str, str]) -> None:
        """An intent whose create was refused, or never reached the API, is given up (its requests go in another
        batch): release what the steps of its create made (an uploaded input file). Nothing by default."""
        return

    async def finished(self, batch: RemoteBatch) -> None:
        """The batch's results are stored: release what it holds at the provider (an uploaded input file)."""
        return

    async def aclose(self) -> None:
        """Release connections the backend opened itself."""
        return
