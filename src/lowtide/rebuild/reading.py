"""Reading one account's batches for a rebuild: whose each listed batch is (the identity its custom ids carry, read by
the provider's codec), and what a batch of the lost ledger's holds (its requests, their bodies where its input still
shows them, their results where it has ended), through the provider-neutral seam alone (`BatchBackend.listed`,
`inputs`, `first_custom_id`, `stream_results`; `BatchCodec.custom_id_parts`, `decode_input`)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from lowtide.batching.backend import Phase, RemoteBatch, ResultLine, UnreadableLine
from lowtide.batching.keys import derive_key
from lowtide.batching.outcomes import custom_id_of, outcome_of
from lowtide.batching.policy import result_row
from lowtide.core.custom_ids import CustomIdParts
from lowtide.errors import BatchRequestError, ConfigurationError, NotFoundError, PermissionDeniedError
from lowtide.ledger.records import UNKEYED, OutcomeRow, stored_json
from lowtide.rebuild.found import FoundBatch, Owner, Seen, Source

__all__ = ["Reader"]

_GONE = (NotFoundError, PermissionDeniedError)
"""What an API answers for results it no longer holds (Gemini answers 403 as often as 404)."""


@dataclass
class _Read:
    """What was read of a batch so far: its input (custom id -> body as JSON), its results (custom id -> the result
    as stored when final, whether it may be retried, its model)."""

    inputs: dict[str, str] | None = None
    results: dict[str, tuple[OutcomeRow, bool, str]] = field(default_factory=dict[str, tuple[OutcomeRow, bool, str]])
    gone: bool = False
    """The batch ended, and its results are no longer held (past the API's retention)."""

    def custom_ids(self) -> list[str]:
        return [*(self.inputs or {}), *(cid for cid in self.results if cid not in (self.inputs or {}))]


class Reader:
    """The batches of one account (`Source`), as a rebuild reads them."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.backend = source.backend
        self.codec = source.backend.codec

    async def batches(self) -> AsyncIterator[RemoteBatch]:
        """Every batch the account's API still lists."""
        try:
            listing = self.backend.listed()
        except NotImplementedError as exc:
            raise ConfigurationError(
                f"{exc} A rebuild cannot tell which of its batches were the lost ledger's, so it recovers none of"
                f" {self.source.provider}'s: leave its actors out to rebuild the rest (a rerun would send their"
                " requests again).",
                field="actors",
            ) from None
        async for batch in listing:
            yield batch

    async def owner(self, batch: RemoteBatch) -> tuple[str | Owner, _Read | None]:
        """Whose `batch` is: the identity its custom ids carry, else an `Owner`; with what was read to tell, when the
        whole batch was (a hashed first id, a batch still running), so that it need not be read again."""
        if batch.phase is not Phase.ENDED:
            inputs = await self._inputs(batch)
            if inputs is None:
                return Owner.UNSEEN, None
            return self._among(inputs), _Read(inputs=inputs)
        try:
            first = await self.backend.first_custom_id(batch)
        except (NotImplementedError, *_GONE):
            first = None
        if first is not None:
            parts = self._parts(first)
            if parts is None:
                return Owner.FOREIGN, None
            if parts.identity is not None:
                return parts.identity, None
        read = await self._read_all(batch)
        ids = read.custom_ids()
        if not ids:
            return Owner.GONE, None
        return self._among(ids), read

    async def read(self, batch: RemoteBatch, owner: str | Owner, read: _Read | None = None) -> FoundBatch:
        """Everything `batch` (the lost ledger's: `owner` is its identity, or `Owner.HASHED`) still shows of its
        requests; `read`, what `owner` read of it already."""
        if read is None or (batch.phase is Phase.ENDED and not read.results and read.inputs is not None):
            read = await self._read_all(batch)
        found = FoundBatch(self.source, batch, owner, results_gone=read.gone)
        inputs = read.inputs or {}
        for custom_id in read.custom_ids():
            key = self._key(custom_id, owner)
            if key is None:
                continue  # not a request of this ledger's (no batch holds two ledgers' requests; a line of no id)
            params = _exact(inputs.get(custom_id), key, self.source.provider)
            seen = Seen(custom_id, key, params=params)
            result = read.results.get(custom_id)
            if result is not None:
                seen.row, seen.retryable, seen.model = result
                seen.row.key = key
            if params is not None:
                seen.model = self.codec.model_of(json.loads(params)) or seen.model
            found.requests[custom_id] = seen
        return found

    def _key(self, custom_id: str, owner: str | Owner) -> str | None:
        parts = self._parts(custom_id)
        if parts is None:
            return None
        if parts.key is None:
            return UNKEYED + custom_id
        return parts.key if parts.identity == owner else None

    def _among(self, custom_ids: Iterable[str]) -> str | Owner:
        """The identity the first plain id among `custom_ids` carries; `Owner.HASHED` when lowtide made them all but
        none is plain; `Owner.FOREIGN` when none is lowtide's."""
        hashed = False
        for custom_id in custom_ids:
            parts = self._parts(custom_id)
            if parts is None:
                continue
            if parts.identity is not None:
                return parts.identity
            hashed = True
        return Owner.HASHED if hashed else Owner.FOREIGN

    def _parts(self, custom_id: str) -> CustomIdParts | None:
        try:
            return self.codec.custom_id_parts(custom_id)
        except NotImplementedError as exc:
            raise ConfigurationError(
                f"{exc} A rebuild cannot tell which of {self.source.provider}'s batches were the lost ledger's, so it"
                " recovers none of them: leave its actors out to rebuild the rest (a rerun would send their requests"
                " again).",
                field="actors",
            ) from None

    async def _inputs(self, batch: RemoteBatch) -> dict[str, str] | None:
        """The batch's requests as its input still shows them (custom id -> body as the ledger stores it); None when
        the API does not show it."""
        found: dict[str, str] = {}

        def handle(custom_id: str, params: Mapping[str, Any]) -> None:
            found[custom_id] = stored_json(params)

        return found if await self.backend.inputs(batch, handle) else None

    async def _read_all(self, batch: RemoteBatch) -> _Read:
        """The batch's input where the API shows it, and (ended) its results: each line's outcome as the ledger
        stores it, and a line for each request of its input the provider left out on purpose (a canceled batch's)."""
        read = _Read(inputs=await self._inputs(batch))
        if batch.phase is not Phase.ENDED:
            return read
        codec = self.codec

        def handle(line: ResultLine | UnreadableLine) -> None:
            custom_id = custom_id_of(codec, line)
            if custom_id is None or custom_id in read.results:
                return  # a line of no request; or one seen already (a download read again from the start)
            outcome, stored = outcome_of(codec, line, custom_id, batch_id=batch.id, request_id=batch.request_id)
            # Final here; a rebuild decides from the attempts made whether a retryable error is sent again.
            row = result_row(custom_id, outcome, stored, used=1, allowed=1)
            retryable = isinstance(outcome, BatchRequestError) and outcome.retryable
            model = stored.get("model") if stored is not None else None
            read.results[custom_id] = (row, retryable, model if isinstance(model, str) else "")

        try:
            await self.backend.stream_results(batch, handle)
        except _GONE:
            # Past the API's retention (Anthropic keeps results 29 days): what the input shows, if anything, is left.
            read.results.clear()
            read.gone = True
            return read
        for custom_id in read.inputs or {}:
            if custom_id not in read.results and (line := self.backend.unanswered_line(batch, custom_id)) is not None:
                handle(line)
        return read


def _exact(params: str | None, key: str, provider: str) -> str | None:
    """A body read back from a batch's input, when it is the one the ledger stored: a key derived from the body (`auto-`
    and a digest of it) says so; one that does not match it (an Azure deployment serving a model named otherwise, whose
    input leaves that name out) is taken as unknown, so that the rerun's claim of the key takes its answer."""
    if params is None or not key.startswith("auto-"):
        return params
    return params if derive_key(provider, params) == key else None
