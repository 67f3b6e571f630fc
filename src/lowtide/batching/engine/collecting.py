"""Polling and collecting: one poller per batch serves every waiter; results are stored as they stream, handed to
their waiters, and what may succeed next time is queued for another batch."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractContextManager, nullcontext

from lowtide.batching.adaptive import poll_schedule
from lowtide.batching.backend import BatchCodec, Phase, RemoteBatch, ResultLine, Settled, UnreadableLine
from lowtide.batching.crashpoints import crashpoint
from lowtide.batching.engine.late_waiters import LateWaiters
from lowtide.batching.engine.shared_state import REREAD_CHUNK
from lowtide.batching.gc_tuning import freeze_survivors, thaw
from lowtide.batching.outcomes import custom_id_of, outcome_of, raw_text, unreadable
from lowtide.batching.policy import result_row
from lowtide.batching.polling import wait_until_ended
from lowtide.batching.records import error_to_json
from lowtide.batching.wakeups import webhook_wakes
from lowtide.errors import (
    ActorError,
    BatchRequestError,
    BatchTimeoutError,
)
from lowtide.ledger.store import (
    BatchRecord,
    BatchState,
    OutcomeRow,
    RequestState,
)
from lowtide.telemetry.switch import tracing
from lowtide.webhooks.notify import batch_notice

__all__ = ["RESULTS_PER_TRANSACTION", "Collection"]

log = logging.getLogger("lowtide.batching.engine.batch_engine")

RESULTS_PER_TRANSACTION = 2000
"""Results stored (and their callers woken) in the first transaction of a batch's; each one after holds twice the one
before, up to `MOST_RESULTS_PER_TRANSACTION`: the first answers are handed out soon, and a large batch's results
cost fewer rewrites of the pages their index spreads over (100,000 in chunks of 2,000: 0.86 s of CPU and 300 MiB
written; of 10,000: 0.66 s and 180 MiB)."""
MOST_RESULTS_PER_TRANSACTION = 10_000


class Collection(LateWaiters):
    async def settle_stored(self, batch: BatchRecord) -> bool:
        """Mark an ended batch collected when the ledger already holds every member's result; True if it did.

        A process that stopped after storing a batch's results but before saying the batch was collected leaves
        it `ended` with nothing left to fetch: this closes it without downloading its results again.
        """
        if batch.state is not BatchState.ENDED:
            return False
        keys = list((await self.ledger.members(batch.id)).values())
        # The members without a final result from the batch are looked at alone (one moved on to another batch does
        # not hold it open), a chunk at a time: the first chunk of a batch a stop cut short (most of those a resumed
        # run finds) says so, and its other members' states are not read.
        finals = await self.ledger.stored_finals(batch.id)
        missing = [key for key in keys if key not in finals]
        for start in range(0, len(missing), REREAD_CHUNK):
            states = await self.ledger.states_of(missing[start : start + REREAD_CHUNK])
            if not all(member.state.final or member.batch_id != batch.id for member in states):
                return False
        # Every member final: their states alone (not their full records) say how the batch ended.
        states = await self.ledger.states_of(keys)
        counts = batch.counts or {}
        state = (
            BatchState.CANCELED
            if any(member.state is RequestState.CANCELED for member in states)
            else BatchState.EXPIRED
            if counts.get("expired") and not counts.get("succeeded")
            else BatchState.COLLECTED
        )
        await self.ledger.record_collected(batch.id, state=state, now=self._clock.now())
        return True

    def _stored_in(self, batch_id: str | None) -> None:
        """A call was answered from a result the ledger holds, stored from `batch_id`: should that batch have been left
        `ended` (its process stopped after storing its results, before saying it was collected), it is closed on this
        pass (`settle_stored`), in the background, once per batch in this engine's life. A batch polled here closes
        itself."""
        if batch_id is None or batch_id in self._stored_from or batch_id in self._pollers:
            return
        self._stored_from.add(batch_id)
        closing = self._spawn(self._close_if_stored(batch_id), waiters=[])
        self._closing.add(closing)
        closing.add_done_callback(self._closing.discard)

    async def _close_if_stored(self, batch_id: str) -> None:
        try:
            batch = await self._batch(batch_id)
            if batch is not None:
                await self.settle_stored(batch)
        except ActorError as exc:  # no call waits on it: it is looked at again on a later pass
            self._stored_from.discard(batch_id)
            log.warning("Could not look at whether batch %s is collected: %s", batch_id, exc)

    def _ensure_poller(self, batch_id: str, remote: RemoteBatch | None = None) -> None:
        if batch_id in self._pollers:
            return
        self._pollers[batch_id] = self._spawn(self._poll(batch_id, remote), waiters=self._members_of(batch_id))

    async def _poll(self, batch_id: str, remote: RemoteBatch | None) -> None:
        collected = False
        members: dict[str, str] = {}
        failure: ActorError | None = None
        provider_batch_id: str | None = None
        requeued: set[str] = set()
        """Requests a collection cut short stored as retryable and queued again: their calls wait on the next batch."""
        collecting = False
        try:  # (the reads too: a poller stopped while it reads releases the batch all the same)
            record = await self.ledger.batch(batch_id)
            assert record is not None
            assert record.provider_batch_id is not None
            provider_batch_id = record.provider_batch_id
            # Read while the batch runs, not after it ends: the answers are waited for from then on.
            members, attempts = await self.ledger.members_and_attempts(batch_id)
            with _batch_span(batch_id, self.backend.codec, len(members), record.trace):
                async with webhook_wakes(self.ledger, record, self.settings, self._clock) as wakes:
                    ended = await wait_until_ended(
                        self.backend,
                        remote or record.provider_batch_id,
                        settings=self.settings,
                        clock=self._clock,
                        on_status=self._status_recorder(batch_id),
                        wakes=wakes,
                        schedule=await poll_schedule(self.history, record, self.settings),
                    )
                collecting = True
                await self._collect(
                    batch_id,
                    ended,
                    members,
                    attempts,
                    request_id=record.request_id,
                    requeued=requeued,
                    adopted=record.adopted,
                )
            collected = True
            self.history.learn(record, ended.ended_at)
            if self.notifier is not None:
                self.notifier.soon("batch.ended", batch_notice(record, ended), subject=record.id)
                if self.notifier.tells("key.answered"):  # each key's answer stored from it, when asked for
                    self.notifier.keys_answered(record, await self.ledger.states_of(list(members.values())))
        except BatchTimeoutError as exc:
            exc.custom_ids = list(members)
            failure = exc  # the requests stay in the ledger, to be collected later
        except ActorError as exc:
            failure = exc
            log.warning(
                "Could not finish collecting batch %s: %s: %s. Its requests not answered yet wait on it in the"
                " ledger; `lowtide collect`, `actor.result(key)` or the same call or run again collects them.",
                provider_batch_id or batch_id, type(exc).__name__, exc,
            )  # fmt: skip
        finally:
            try:
                if collecting and (collected or failure is not None):  # (not when cancelled: the engine is closing)
                    await self._answer_late_or_reread(members)
            finally:
                # At once after the last look for calls that came late: one that comes now sees no poller here.
                self._pollers.pop(batch_id, None)
                if tracing():
                    _end_span(batch_id, collected, failure)
                try:
                    if not collected:  # left to be collected later: by whichever process looks next
                        await self.ledger.release_batch(batch_id, owner=self.owner)
                finally:
                    if failure is not None:  # told once the batch is free: `lowtide collect` may take it at once
                        self._fail([key for key in members.values() if key not in requeued], failure)

    def _status_recorder(self, batch_id: str) -> Callable[[RemoteBatch], Awaitable[None]]:
        polls = 0

        async def record(batch: RemoteBatch) -> None:
            nonlocal polls
            ended = batch.phase is Phase.ENDED
            counts = batch.counts.as_dict() if ended else None
            await self.ledger.record_status(batch_id, phase=batch.phase.value, counts=counts, ended_at=batch.ended_at)
            if tracing():
                _poll_event(batch_id, batch)
            polls += 1
            if polls > 1:
                crashpoint("while-polling")

        return record

    async def _collect(
        self,
        batch_id: str,
        ended: RemoteBatch,
        members: dict[str, str],
        attempts: dict[str, tuple[int, int]],
        *,
        request_id: str | None = None,
        requeued: set[str] | None = None,
        adopted: bool = False,
    ) -> None:
        """Stream results into the ledger in chunks, settle waiters, and requeue what may succeed next time.

        A line that cannot be read or mapped is its request's `BatchRequestUnreadable` (the line kept), never the
        batch's failure. A download that stays broken after the backend's retries keeps what arrived (stored, handed
        out, what may succeed next time queued again and added to `requeued`) and raises: the other requests wait on
        the batch, which the next collection reads again. A batch reconciliation `adopted` none of whose lines is this
        ledger's was another's: it is disowned (`_disown`).

        A batch collected again (a collection cut short by a crash, or a download that stayed broken) stores only what
        the ledger lacks: the lines of the members whose final result from it is stored already (`stored_finals`, read
        once) are neither made into outcomes nor stored again, and their calls, if any wait here, get what is stored.
        """
        done = await self._stored_before(batch_id, attempts)
        registered = self._registered  # (a call that comes to wait on a key of `done` later is answered by `store`)
        rows: list[OutcomeRow] = []
        settled: list[tuple[str, Settled]] = []
        seen: set[str] = set()
        retry: set[str] = set()
        strangers = 0
        nameless: dict[bytes, UnreadableLine] = {}
        """Lines that could not be read and name no request (by their bytes: a download read again repeats them)."""
        lines: list[ResultLine | UnreadableLine] = []  # the chunk's lines as received, for `on_results`
        writing: asyncio.Task[None] | None = None
        """The last chunk's write: each chunk is stored after the one before, while the download goes on."""
        chunk = RESULTS_PER_TRANSACTION

        async def store(
            before: asyncio.Task[None] | None,
            rows: list[OutcomeRow],
            settled: list[tuple[str, Settled]],
            lines: list[ResultLine | UnreadableLine],
        ) -> None:
            """Store a chunk (after the chunk before it); once it is stored, hand its outcomes out (and what is stored
            to calls that came to wait on a skipped key since)."""
            nonlocal registered
            if before is not None:
                await before
            if rows:
                await self.ledger.record_outcomes(batch_id, rows, now=self._clock.now())
            if tracing():
                await self._trace_answers(batch_id, rows)
            crashpoint("while-streaming")
            if lines and self.on_results is not None:
                try:
                    self.on_results(batch_id, ended.id, lines)
                except Exception:
                    log.exception("on_results failed on batch %s; its results are stored all the same.", ended.id)
            self._settle(settled)
            freeze_survivors(len(settled))  # the answers just handed out live as long as their callers keep them
            if done:
                registered = await self._answer_skipped(done, registered)

        def write() -> None:
            """Store the chunk in hand, after the chunks before it (the stream is not held up meanwhile)."""
            nonlocal writing, rows, settled, lines, chunk
            if not rows and not lines:
                return
            writing = asyncio.ensure_future(store(writing, rows, settled, lines))
            rows, settled, lines = [], [], []
            chunk = min(2 * chunk, MOST_RESULTS_PER_TRANSACTION)

        codec = self.backend.codec

        def handle(line: ResultLine | UnreadableLine) -> None:
            nonlocal strangers
            custom_id = custom_id_of(codec, line)
            if custom_id is None or custom_id not in members:
                if isinstance(line, UnreadableLine) and custom_id is None:
                    if line.raw not in nameless:  # kept for the requests without a result, and in the raw results
                        nameless[line.raw] = line
                        if self.on_results is not None:
                            lines.append(line)
                    return
                strangers += 1
                return
            key = members[custom_id]
            if custom_id in seen:
                return  # a download broken off is fetched again from the start: this line is stored already
            seen.add(custom_id)
            if key not in attempts:
                return  # it has left this batch (an earlier look stored its result and sent it again): not its state
            if key in done:  # stored by a collection before this one, cut short: stored and handed out already
                if self.on_results is not None:
                    lines.append(line)  # (the raw results keep each request's line once: one cut short may lack it)
                    if len(lines) >= chunk:
                        write()
                return
            used, allowed = attempts[key]
            outcome, stored = outcome_of(codec, line, custom_id, batch_id=ended.id, request_id=request_id)
            try:
                row = result_row(key, outcome, stored, used=used, allowed=allowed)
            except Exception as exc:  # an answer the ledger cannot hold as it came: kept as its line
                log.warning("Could not store the answer of request %s in batch %s: %s", custom_id, ended.id, exc)
                outcome = unreadable(ended.id, custom_id, raw_text(line), f"{type(exc).__name__}: {exc}")
                row = result_row(key, outcome, None, used=used, allowed=allowed)
            rows.append(row)
            if row.state is RequestState.PENDING:
                retry.add(key)
            else:
                retry.discard(key)
                if row.state.final:
                    settled.append((key, outcome))
            if self.on_results is not None:
                lines.append(line)
            if len(rows) >= chunk:
                write()

        try:
            try:
                await self.backend.stream_results(ended, handle, expected=len(members))
            except ActorError:
                # Broken for good this time: what arrived is kept, the rest waits on the batch for the next look.
                write()
                if writing is not None:
                    await writing
                await self._requeue(retry)
                if requeued is not None:
                    requeued.update(retry)
                thaw()
                raise
            if strangers and not seen and adopted:
                await self._disown(batch_id, ended, members)
                return
            if strangers and not seen:
                log.error(
                    "Batch %s holds none of the requests of %s; it was not ours. Sending them again.",
                    ended.id,
                    batch_id,
                )
            unanswered = self.backend.unanswered_line
            for custom_id in [
                custom_id for custom_id in members if custom_id not in seen and members[custom_id] not in done
            ]:
                line = unanswered(ended, custom_id)
                if line is not None:
                    handle(line)  # a request the provider left out on purpose: the line it stands for
            for custom_id, key in members.items():
                if custom_id not in seen and key in attempts and key not in done:
                    error = self._missing(ended.id, custom_id, list(nameless.values()))
                    used, allowed = attempts.get(key, (1, 1))
                    retry_it = bool(strangers and not seen) and used < allowed
                    rows.append(
                        OutcomeRow(
                            key, RequestState.PENDING if retry_it else RequestState.FAILED, error=error_to_json(error)
                        )
                    )
                    if retry_it:
                        retry.add(key)
                    else:
                        settled.append((key, error))
            # The last chunk's callers are woken once the batch is collected too: a caller given its answer finds
            # the batch closed, as it would if the ledger answered at once.
            last, settled = settled, []
            write()
            if writing is not None:
                await writing
        except BaseException:
            if writing is not None and not writing.done():  # the chunks still being stored go with the collection
                writing.cancel()
                writing.add_done_callback(_retrieved)
            raise
        crashpoint("after-results")
        counts = ended.counts
        state = (
            BatchState.CANCELED
            if ended.cancel_requested
            else BatchState.EXPIRED
            if counts.expired and not counts.succeeded
            else BatchState.COLLECTED
        )
        await self.ledger.record_collected(batch_id, state=state, now=self._clock.now())
        # What the batch holds at the provider (an uploaded input file) is released before the last callers get
        # their answers: a program that exits on its last answer leaves nothing behind that it would pay to keep.
        await self._finished(ended)
        self._settle(last)
        freeze_survivors(len(last))
        thaw()
        await self._requeue(retry)

    async def _trace_answers(self, batch_id: str, rows: list[OutcomeRow]) -> None:
        """The calls of another process (or of this one before a restart) answered here end their own trace: each
        gets a span parented on the context stored with its request."""
        from lowtide.telemetry.batches import answered_elsewhere, batch_event, traced_keys

        batch_event(batch_id, "results", {"lowtide.batch.results": len(rows)})
        held = traced_keys(batch_id)
        others = [row.key for row in rows if row.key not in held]
        if not others:
            return
        stored = await self.ledger.traces_of(others)
        states = {row.key: row.state.value for row in rows}
        answered_elsewhere(batch_id, {key: (context, states[key]) for key, context in stored.items()}, held)

    @staticmethod
    def _missing(batch_id: str, custom_id: str, nameless: list[UnreadableLine]) -> BatchRequestError:
        """The error of a request an ended batch gave no result for: lost, or maybe in a line that named nobody."""
        if not nameless:
            return BatchRequestError(
                f"Batch {batch_id} ended without a result for request {custom_id}.",
                batch_id=batch_id,
                custom_id=custom_id,
            )
        return unreadable(
            batch_id,
            custom_id,
            "\n".join(line.text for line in nameless),
            f"no line of the batch's results names it; {len(nameless)} line(s) that name no request could not be"
            f" read ({nameless[0].reason}), and are kept here",
        )

    async def _requeue(self, retry: set[str]) -> None:
        """Queue again, for a later batch, the requests whose stored result says they may succeed next time."""
        if not retry:
            return
        now = self._clock.now()
        again = sorted(retry)
        await self.ledger.requeue(again, owner=self.owner, until=now + self.settings.lease_seconds, now=now)
        for record in await self.ledger.requests_for(again):
            self._enqueue(record)

    async def _disown(self, batch_id: str, ended: RemoteBatch, members: Mapping[str, str]) -> None:
        """The batch reconciliation adopted for `batch_id` held none of this ledger's custom ids (each carries the
        ledger's identity): another ledger's or program's, of the same size and time. Nothing of it is stored or
        counted, it is never a candidate again (kept apart in the ledger), and the intent is reconciled again: its
        own batch if the API lists one by now, else its requests sent again, once."""
        self._foreign.add(ended.id)
        if await self.ledger.disown(batch_id, provider_batch_id=ended.id, now=self._clock.now()):
            log.error(
                "The API's batch %s, adopted for %s after an unknown create, holds none of this ledger's requests:"
                " it is another's, and nothing of it is counted. Reconciling %s again.",
                ended.id,
                batch_id,
                batch_id,
            )
            if batch_id not in self._reconciling:
                self._reconciling[batch_id] = self._spawn(self._reconcile(batch_id), waiters=self._members_of(batch_id))
            return
        for key in members.values():  # pragma: no cover - resolved by another process meanwhile: what it says goes
            future = self._futures.pop(key, None)
            if future is not None and not future.done():
                self._forward(self._final_of(key), future)

    async def _finished(self, ended: RemoteBatch) -> None:
        """Tell the backend a batch's results are stored (it may delete an uploaded input file); a failure there is
        logged: the answers are stored, and a file left behind costs nothing."""
        log.info("The API's batch %s ended; its results are stored.", ended.id)
        try:
            await self.backend.finished(ended)
        except ActorError as exc:
            log.warning("Could not release what batch %s holds at the provider: %s", ended.id, exc)
        except Exception:  # a provider's bug in its cleanup must not keep the stored answers from their callers
            log.exception("Releasing what batch %s holds at the provider failed", ended.id)


def _batch_span(batch_id: str, codec: BatchCodec, requests: int, stored: str | None) -> AbstractContextManager[None]:
    """The batch's span current while it is polled and collected: begun here, in the trace of the span its intent
    opened (`stored`), if another process (or this one, before) made the batch."""
    if not tracing():
        return nullcontext()
    from lowtide.telemetry.batches import batch_current, start_batch

    name = codec.telemetry_name()
    start_batch(batch_id, provider=codec.name, gen_ai_provider=name, requests=requests, resumed=True, stored=stored)
    return batch_current(batch_id)


def _poll_event(batch_id: str, batch: RemoteBatch) -> None:
    from lowtide.telemetry.batches import batch_event

    counts = batch.counts
    batch_event(
        batch_id,
        "poll",
        {
            "lowtide.batch.phase": batch.phase.value,
            "lowtide.batch.succeeded": counts.succeeded,
            "lowtide.batch.total": counts.total,
        },
    )


def _end_span(batch_id: str, collected: bool, failure: BaseException | None) -> None:
    from lowtide.telemetry.batches import end_batch

    end_batch(batch_id, "collected" if collected else "left", None if collected else failure)


def _retrieved(task: asyncio.Task[None]) -> None:
    """Retrieve a dropped write's error (its collection failed first and says why)."""
    if not task.cancelled():
        task.exception()
