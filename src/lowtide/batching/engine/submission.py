"""Exactly-once submission: the intent recorded before the create, the batch id right after, and a create whose
outcome is unknown reconciled against the API (`reconcile.decide`) before anything is sent again."""

from __future__ import annotations

import asyncio
import functools
import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Literal, TypeVar

from lowtide.batching.backend import Phase, RemoteBatch, Settled
from lowtide.batching.crashpoints import crash_during, crashpoint
from lowtide.batching.engine.shared_state import EngineCore, Queued
from lowtide.batching.keys import owner_alive, params_json
from lowtide.batching.reconcile import Candidate, Unresolved, decide
from lowtide.errors import (
    ActorError,
    classify,
)
from lowtide.ledger.interface import AsyncLedgerStore
from lowtide.ledger.store import (
    BatchCreated,
    BatchIntent,
    BatchRecord,
    BatchState,
)
from lowtide.telemetry.switch import metering, tracing

__all__ = ["CLOCK_SKEW", "Submission"]

log = logging.getLogger("lowtide.batching.engine.batch_engine")

T = TypeVar("T")

# How far the API's clock may differ from ours when matching an unknown create against the list of batches.
CLOCK_SKEW = 300.0


class Submission(EngineCore):
    async def _dispatch(self, entries: list[Queued]) -> None:
        crashpoint("before-intent")
        batch_id = f"lt_{uuid.uuid4().hex}"
        now = self._clock.now()
        # The batch's span opens before its intent is written, which keeps its trace context: whichever process
        # collects the batch continues that trace (nothing is opened or written with telemetry off).
        traced = tracing()
        try:
            intent = BatchIntent(
                batch_id,
                provider=self.backend.name,
                endpoint=self.endpoint,
                members=[(e.key, e.custom_id) for e in entries],
                request_bytes=sum(e.size for e in entries),
                owner=self.owner,
                until=now + self.settings.lease_seconds,
                now=now,
                scope=self.scope,
                trace=self._open_span(batch_id, len(entries)) if traced else "",
            )
            recorded = await self.ledger.record_intent(intent)
        except BaseException as exc:
            if traced:
                _end(batch_id, "not recorded", exc)
            raise
        finally:  # in the intent, or (its write failed) free to be queued again by a later call
            self._queued_keys.difference_update(e.key for e in entries)
            if not self._queued_keys:
                self._queued_keys = set()  # a set keeps its size once grown: 100,000 keys leave megabytes behind
        if len(recorded) < len(entries):
            entries = self._left_out(entries, recorded)
            if not entries:
                if traced:
                    _end(batch_id, "gathered elsewhere")
                return
        crashpoint("after-intent")
        if traced:
            self._trace_intent(batch_id, entries)
        keys = [e.key for e in entries]
        # Every custom_id here came from the backend's `custom_id_for`, so it is valid; params go as the JSON the
        # ledger holds.
        body = self.backend.codec.encode((e.custom_id, params_json(e.params)) for e in entries)
        del entries
        steps = _Steps(self.ledger, batch_id)
        created = await self._create(
            batch_id, keys, lambda: self.backend.create(body, len(keys), intent_id=batch_id, steps=steps)
        )
        if created == "unknown":
            self._reconciling[batch_id] = self._spawn(self._reconcile(batch_id), waiters=keys)

    def _open_span(self, batch_id: str, requests: int) -> str:
        """The batch's span opened at its intent; its trace context, which the intent keeps."""
        from lowtide.telemetry.batches import start_batch

        codec = self.backend.codec
        return start_batch(batch_id, provider=codec.name, gen_ai_provider=codec.telemetry_name(), requests=requests)

    def _trace_intent(self, batch_id: str, entries: Sequence[Queued]) -> None:
        """The batch's span, linked both ways with the spans of this process's calls it carries."""
        from lowtide.telemetry.batches import carry

        traced, later = self._traced, self._later
        calls = [(e.key, traced.pop(e.key)) for e in entries if e.key in traced] if traced else []
        carry(batch_id, calls, [e.key for e in entries if e.key in later] if later else (), len(entries))

    def _left_out(self, entries: list[Queued], recorded: Sequence[str]) -> list[Queued]:
        """The entries the intent holds; the others were taken into another process's batch meanwhile (coalescing
        across processes): their calls here wait for that batch, as any call attached to another's work does."""
        kept = set(recorded)
        left: list[tuple[str, asyncio.Future[Settled]]] = []
        for entry in entries:
            if entry.key not in kept:
                future = self._futures.pop(entry.key, None)
                if future is not None and not future.done():
                    left.append((entry.key, future))
        if left:
            self._spawn(self._attach_left_out(left), waiters=functools.partial(_fail_all, left))
        return [entry for entry in entries if entry.key in kept]

    async def _create(
        self, batch_id: str, keys: Sequence[str], create: Callable[[], Awaitable[RemoteBatch]]
    ) -> Literal["created", "unknown", "refused"]:
        """Make the intent's batch with `create` and record its id: "created" (its poller started), "unknown" (the
        outcome is in doubt, recorded: reconcile it before anything is sent again), or "refused" (its calls failed)."""
        timer = crash_during("during-create")
        # In flight from here until the create comes back: no reconciliation may adopt a batch this create made.
        in_flight = self._creating[batch_id] = asyncio.get_running_loop().create_future()
        traced = tracing()
        try:
            if traced:
                remote = await _with_batch_span(batch_id, create)
            else:
                remote = await create()
        except ActorError as exc:
            if self.backend.outcome_unknown(exc):
                # The API may or may not have the batch: find out before anything is sent again.
                log.warning("Create of batch %s has an unknown outcome (%s); reconciling.", batch_id, exc)
                await self.ledger.record_unknown(batch_id, note=f"create outcome unknown: {type(exc).__name__}")
                if traced:
                    _event(batch_id, "create.unknown", {"error.type": type(exc).__name__})
                return "unknown"
            # The API refused the batch: nothing was processed or charged. A later call may try again.
            await self.ledger.record_refused(batch_id, note=f"refused: {exc}", now=self._clock.now())
            # What the create made (an uploaded file) is released before the callers hear of the refusal: a program
            # that exits on it leaves nothing at the provider.
            await self._abandon(batch_id)
            self._fail(keys, exc)
            if traced:
                _end(batch_id, "refused", exc)
            return "refused"
        finally:
            del self._creating[batch_id]
            in_flight.set_result(None)
            if timer is not None:  # pragma: no cover - only with a crash point set
                timer.cancel()
        crashpoint("after-create")
        try:
            created = BatchCreated(batch_id, remote.id, remote.phase.value, self._clock.now(), remote.request_id)
            await self.ledger.record_submitted(created)
        except Exception as exc:
            # The API has the batch, the ledger does not say so. Left `intent`, the next process (or `lowtide
            # collect`) reconciles it: it adopts this batch, which no other intent can claim. Nothing is resent.
            log.error("Batch %s was created as %s, but the ledger could not record it: %s", batch_id, remote.id, exc)
            try:  # not in flight any more: reconciliation adopts it, the one batch this intent can own
                await self.ledger.record_unknown(batch_id, note=f"created as {remote.id}; not recorded: {exc}")
            except Exception:
                self._fail(keys, classify(exc, doing=f"recording batch {remote.id} in the ledger"))
                return "refused"
            return "unknown"
        log.info("Batch %s created at the API as %s, with %d request(s).", batch_id, remote.id, len(keys))
        if traced:
            _event(batch_id, "create", {"lowtide.batch.provider_id": remote.id, "lowtide.batch.phase": "running"})
        self._ensure_poller(batch_id, remote)
        return "created"

    async def _reconcile(self, batch_id: str) -> None:
        """Find the API's batch for an intent whose create is unknown; if it never arrived, send its requests again.

        A candidate is a batch the API created after our intent (less `CLOCK_SKEW`) with the same number of
        requests that no other ledger record has claimed. Results confirm the match by `custom_id`.
        """
        traced = tracing()
        try:
            if traced:  # its look-ups at the API are the batch's, not the first waiting call's
                await self._resumed_span(batch_id)
                await _with_batch_span(batch_id, lambda: self._reconcile_once(batch_id))
            else:
                await self._reconcile_once(batch_id)
        except ActorError as exc:
            # The API cannot be asked: the batch stays `unknown` for a later call, `lowtide collect` or process.
            log.warning("Could not reconcile batch %s: %s", batch_id, exc)
            if traced:  # left unknown, for whichever process looks next
                _end(batch_id, "left", exc)
            self._fail(list((await self.ledger.members(batch_id)).values()), exc)
        finally:
            self._reconciling.pop(batch_id, None)
            if traced and batch_id not in self._pollers:  # no poller took the batch on: its span ends here
                _end(batch_id, "left")
            self._placed()  # adopted, sent again or given up: the parked calls of its batch look again

    async def _resumed_span(self, batch_id: str) -> None:
        """The batch's span, in the trace its intent began, when this process reconciles a batch it holds no span of
        (another process's intent, or this one's before a restart)."""
        from lowtide.telemetry.batches import start_batch

        record = await self.ledger.batch(batch_id)
        if record is not None:
            codec = self.backend.codec
            start_batch(batch_id, provider=codec.name, gen_ai_provider=codec.telemetry_name(),
                        requests=record.request_count, resumed=True, stored=record.trace)  # fmt: skip

    async def _reconcile_once(self, batch_id: str) -> None:
        """Apply `reconcile.decide` until it adopts a batch for this intent or sends its requests again.

        Each look lists the API's batches created since the intent (less `CLOCK_SKEW`) and reads the ledger's other
        unresolved intents of this endpoint. It never guesses between two intents that could own the same batch:
        it waits for a create in flight to come back, or for the candidates to end and their custom ids to say.
        """
        waiting_for = ""
        while True:
            record = await self.ledger.batch(batch_id)
            assert record is not None
            if record.provider_batch_id is not None:  # adopted meanwhile: by a look at another intent's candidates
                self._ensure_poller(batch_id)
                return
            if record.state not in (BatchState.INTENT, BatchState.UNKNOWN):  # pragma: no cover - resolved elsewhere
                self._rewatch(list((await self.ledger.members(batch_id)).values()))
                return
            now = self._clock.now()
            if self.backend.idempotent_create:
                if await self._create_again(record):
                    return
                continue
            if self.backend.finds_by_intent:
                if await self._find_by_intent(record, now):
                    return
                continue
            listed = {
                remote.id: remote
                for remote in await self.backend.recent(created_after=record.intent_at - CLOCK_SKEW)
                if remote.id not in self._foreign and await self.ledger.batch(remote.id) is None
            }
            # The rival intents are read after the listing, never before: an intent is recorded before its create is
            # sent, so every batch the listing holds has its intent among them. Read first, a rival recorded and
            # created in between was missing, and its batch, still being created, was adopted as this intent's (the
            # progress soak on PostgreSQL: two hosts' requests in one batch, then created again).
            now = self._clock.now()
            others = [
                self._unresolved(other, now)
                for other in await self.ledger.unresolved(provider=self.backend.name, endpoint=self.endpoint)
                if other.id != batch_id
            ]
            decision = decide(
                self._unresolved(record, now),
                others,
                [_candidate(remote) for remote in listed.values()],
                now=now,
                grace=self.settings.reconcile_grace,
                skew=CLOCK_SKEW,
            )
            if decision.action.startswith("wait") and decision.reason != waiting_for:
                waiting_for = decision.reason
                log.info("Batch %s waits before it is reconciled: %s.", batch_id, decision.reason)
            match decision.action:
                case "adopt":
                    [candidate] = decision.candidates
                    if await self.ledger.adopt(batch_id, provider_batch_id=candidate.id, now=self._clock.now()):
                        log.info("Batch %s reconciled with the API's %s.", batch_id, candidate.id)
                        _reconciled(batch_id, "adopted")
                        self._ensure_poller(batch_id, listed[candidate.id])
                        return
                case "peek":
                    among = [batch_id, *(other.id for other in others)]
                    for candidate in decision.candidates:
                        await self._assign_by_results(listed[candidate.id], among)
                case "wait-create":
                    await self._await_creates(others)
                case "wait-listing":
                    remaining = record.intent_at + self.settings.reconcile_grace - now
                    await self._clock.sleep(min(self.settings.poll_interval, remaining))
                case "wait-end":
                    await self._clock.sleep(self.settings.poll_interval)
                case "resend":
                    if await self._resend(batch_id, intent_at=record.intent_at):
                        return

    async def _find_by_intent(self, record: BatchRecord, now: float) -> bool:
        """Reconcile exactly, where the API echoes the intent id: adopt the batch that names it, or after the grace
        period send again. True once resolved."""
        found = await self.backend.find_by_intent(record.id, created_after=record.intent_at - CLOCK_SKEW)
        if found is not None:
            if await self.ledger.adopt(record.id, provider_batch_id=found.id, now=self._clock.now()):
                log.info("Batch %s reconciled with the API's %s by its metadata.", record.id, found.id)
                _reconciled(record.id, "adopted")
                self._ensure_poller(record.id, found)
            return True
        remaining = record.intent_at + self.settings.reconcile_grace - now
        if remaining > 0:
            await self._clock.sleep(min(self.settings.poll_interval, remaining))
            return False
        steps = await self.ledger.create_steps(record.id)
        if steps and self.backend.resumable(steps):
            return await self._resume(record, steps)
        return await self._resend(record.id, intent_at=record.intent_at)

    async def _create_again(self, record: BatchRecord) -> bool:
        """Reconcile where the API dedupes creates by the intent id (`BatchBackend.idempotent_create`): the create is
        made again from what its steps left, and the API answers with the batch the first create made, if it made
        one. An intent without such steps never sent its create: its requests are sent anew. An intent a live process
        is still creating (`lowtide collect` beside a running program) is waited for, never taken from it. True once
        resolved."""
        unresolved = self._unresolved(record, self._clock.now())
        if unresolved.in_flight:
            await self._await_creates([unresolved])
            return False
        steps = await self.ledger.create_steps(record.id)
        if not (steps and self.backend.resumable(steps)):
            return await self._resend(record.id, intent_at=record.intent_at)
        if await self._resume(record, steps):
            return True
        await self._clock.sleep(self.settings.poll_interval)  # the create's outcome is in doubt again: not in a spin
        return False

    async def _resume(self, record: BatchRecord, steps: Mapping[str, str]) -> bool:
        """Create an intent's batch again from what its create's steps made (an uploaded file), under the same
        intent: it starts a new attempt in the ledger first, so that no other process sends it meanwhile. True once
        resolved; False to look again (another process took it, or the outcome is in doubt)."""
        now = self._clock.now()
        if not await self.ledger.resume_intent(
            record.id, intent_at=record.intent_at, owner=self.owner, until=now + self.settings.lease_seconds, now=now
        ):
            return False  # resolved or resumed by another process since it was read: look again
        keys = list((await self.ledger.members(record.id)).values())
        _reconciled(record.id, "resumed")
        log.warning("Batch %s never reached the API; created again from what its create left (%s).", record.id,
                    ", ".join(sorted(steps)))  # fmt: skip
        recorder = _Steps(self.ledger, record.id)

        async def resume() -> RemoteBatch:
            remote = await self.backend.resume(steps, len(keys), intent_id=record.id, steps=recorder)
            if remote is None:
                raise _Gone
            return remote

        try:
            created = await self._create(record.id, keys, resume)
        except _Gone:  # what the steps made is gone: the requests are sent anew, in another batch
            return await self._resend(record.id, intent_at=now)
        return created != "unknown"

    def _unresolved(self, record: BatchRecord, now: float) -> Unresolved:
        """An intent as reconciliation sees it: in flight while a live process still waits for its create."""
        if record.id in self._creating:
            in_flight = True
        elif record.owner == self.owner or record.state is BatchState.UNKNOWN:
            in_flight = False  # this process's, and not being created: its outcome is unknown
        else:
            in_flight = owner_alive(record.owner, record.owner_until, now)
        return Unresolved(record.id, record.request_count, record.intent_at, in_flight)

    async def _await_creates(self, others: Sequence[Unresolved]) -> None:
        """Wait for a rival create in flight to come back: at once for this process's, by watching the ledger for
        another process's."""
        here = [self._creating[other.id] for other in others if other.in_flight and other.id in self._creating]
        if here:
            await asyncio.wait(here, return_when=asyncio.FIRST_COMPLETED)
        else:
            await self._clock.sleep(self.settings.watch_interval)

    async def _assign_by_results(self, remote: RemoteBatch, among: Sequence[str]) -> None:
        """Read the first custom id of an ended candidate's results: the intent holding that request owns it."""
        custom_id = await self.backend.first_custom_id(remote)
        owner = await self.ledger.batch_holding(custom_id, among) if custom_id is not None else None
        if owner is None:
            log.warning("The API's batch %s holds no request of an unresolved intent; it is not lowtide's.", remote.id)
            self._foreign.add(remote.id)
        elif await self.ledger.adopt(owner, provider_batch_id=remote.id, now=self._clock.now()):
            log.info("Batch %s reconciled with the API's %s by the custom ids in its results.", owner, remote.id)

    async def _resend(self, batch_id: str, *, intent_at: float | None = None) -> bool:
        """The create never took effect: mark the intent failed and queue its requests for another batch, in one
        transaction that first checks the intent is still unresolved. False when it was resolved meanwhile (another
        process adopted a batch for it, after this one listed the batches): then nothing is sent again."""
        now = self._clock.now()
        keys = await self.ledger.give_up_intent(
            batch_id,
            note="create never reached the API (reconciled)",
            owner=self.owner,
            until=now + self.settings.lease_seconds,
            now=now,
            intent_at=intent_at,
        )
        if keys is None:
            log.info("Batch %s was reconciled by another process meanwhile; nothing is sent again.", batch_id)
            return False
        log.warning("Batch %s never reached the API; its requests are sent again.", batch_id)
        _reconciled(batch_id, "resent")
        if tracing():  # its requests go in another batch, with a span of its own
            _end(batch_id, "resent")
        for record in await self.ledger.requests_for(keys):
            self._enqueue(record)
        self._spawn(self._abandon(batch_id), waiters=[])
        return True

    async def _abandon(self, batch_id: str) -> None:
        """Release what the steps of a given-up create made; a failure costs a file left behind, so it is logged."""
        steps = await self.ledger.create_steps(batch_id)
        if not steps:
            return
        try:
            await self.backend.abandon(steps)
        except ActorError as exc:
            log.warning("Could not release what the create of batch %s made (%s): %s", batch_id, steps, exc)
        except Exception:  # a provider's bug in its cleanup must not keep the refusal from the callers
            log.exception("Releasing what the create of batch %s made (%s) failed", batch_id, steps)

    def _rewatch(self, keys: Sequence[str]) -> None:  # pragma: no cover - an intent resolved by another process
        """Hand the waiters of `keys` to whatever the ledger now says of them."""
        for key in keys:
            future = self._futures.pop(key, None)
            if future is not None and not future.done():
                self._forward(self._final_of(key), future)


async def _with_batch_span(batch_id: str, create: Callable[[], Awaitable[T]]) -> T:
    """The create (or a reconcile) with the batch's span current: the SDK's HTTP spans are its children."""
    from lowtide.telemetry.batches import batch_current

    with batch_current(batch_id):
        return await create()


def _event(batch_id: str, name: str, attributes: Mapping[str, str | int | float | bool]) -> None:
    from lowtide.telemetry.batches import batch_event

    batch_event(batch_id, name, attributes)


def _end(batch_id: str, state: str, error: BaseException | None = None) -> None:
    from lowtide.telemetry.batches import end_batch

    end_batch(batch_id, state, error)


def _reconciled(batch_id: str, outcome: str) -> None:
    """A reconcile's outcome on the batch's span and in `lowtide.reconciles` (when telemetry is on)."""
    if tracing() or metering():
        from lowtide.telemetry.batches import reconciled

        reconciled(batch_id, outcome)


def _candidate(remote: RemoteBatch) -> Candidate:
    return Candidate(remote.id, remote.counts.total, remote.created_at, remote.phase is Phase.ENDED)


class _Gone(Exception):
    """What a create's steps made (an uploaded file) is gone: the intent cannot be resumed."""


class _Steps:
    """The steps of a create (an uploaded file, say) as the ledger records them for its intent."""

    def __init__(self, ledger: AsyncLedgerStore, batch_id: str) -> None:
        self._ledger = ledger
        self._batch_id = batch_id

    async def done(self, step: str, value: str) -> None:
        await self._ledger.record_create_step(self._batch_id, step, value)
        crashpoint(f"after-step-{step}")


def _fail_all(calls: list[tuple[str, asyncio.Future[Settled]]], error: ActorError) -> None:
    """The calls of `calls` still waiting get `error`."""
    for _, future in calls:
        if not future.done():
            future.set_exception(error)
