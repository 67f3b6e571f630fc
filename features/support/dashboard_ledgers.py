"""A ledger as `lowtide dashboard` is shown it in the tests, written through the ledger's own interface (`LedgerStore`):
a finished run (4 answered, 1 failed, 1 expired), a run in progress (4 answered in an ended batch, 6 waiting in a
batch still out, a cost limit), and a call parked by `actor.submit` (no run) waiting longest of all, in another
provider's batch; and a durable agent run parked on its second turn (the Agents page). `answer_waiting` ends the run in
progress, as a process collecting its batch would."""

from __future__ import annotations

import time
from decimal import Decimal

from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.journal_records import AgentRun, AgentState, EntryKind, JournalEntry
from lowtide.ledger.records import BatchCreated, BatchIntent, BatchState, NewRequest, OutcomeRow, RequestState
from lowtide.ledger.runs import NewItem

__all__ = [
    "AGENT_RUN",
    "LARGE",
    "PARKED_KEY",
    "SPLIT",
    "answer_split",
    "answer_waiting",
    "build",
    "build_large",
    "build_split",
]

OWNER = "dashboard-test-owner"
PARKED_KEY = "parked-call-1"
FINISHED = "reviews-finished"
LIVE = "reviews-live"
LARGE = "reviews-large"
SPLIT = "reviews-split"
AGENT_RUN = "triage-7"
ENDPOINT = "http://127.0.0.1:9/v1"
CHEAP = Decimal("0.0015")
LIVE_PRICE = Decimal("0.003")


def _claim(
    store: LedgerStore,
    keys: list[str],
    *,
    actor: str,
    model: str,
    now: float,
    worst_case: Decimal | None = Decimal("0.01"),
) -> None:
    identity = store.identity()
    store.claim(
        [
            NewRequest(
                key=key,
                custom_id=f"{key}_{identity}",
                actor=actor,
                model=model,
                params={"model": model, "max_tokens": 64, "messages": [{"role": "user", "content": key}]},
                max_attempts=1,
                worst_case_usd=worst_case,
            )
            for key in keys
        ],
        owner=OWNER,
        until=now + 3600,
        now=now,
    )


def _send(store: LedgerStore, batch_id: str, keys: list[str], *, provider: str, at: float) -> None:
    identity = store.identity()
    store.record_intent(
        BatchIntent(
            batch_id,
            provider=provider,
            endpoint=ENDPOINT,
            members=[(key, f"{key}_{identity}") for key in keys],
            request_bytes=100 * len(keys),
            owner=OWNER,
            until=at + 3600,
            now=at,
        )
    )
    store.record_create_step(batch_id, "input_file", f"file-{batch_id}")
    store.record_submitted(BatchCreated(batch_id, provider_batch_id=f"api-{batch_id}", phase="running", now=at))


def _answer(store: LedgerStore, batch_id: str, outcomes: list[OutcomeRow], *, at: float) -> None:
    store.record_status(batch_id, phase="ended", counts={"succeeded": len(outcomes)}, ended_at=at)
    store.record_outcomes(batch_id, outcomes, now=at)
    store.record_collected(batch_id, state=BatchState.COLLECTED, now=at)


def _ok(key: str) -> OutcomeRow:
    return OutcomeRow(
        key,
        RequestState.SUCCEEDED,
        {"text": f"answer to {key}", "model": "model-small"},
        cost_usd=CHEAP,
        live_cost_usd=LIVE_PRICE,
    )


def _run(store: LedgerStore, run_id: str, keys: list[str], *, now: float, limit: str | None) -> None:
    store.run_store.create(
        run_id,
        actor="reviewer",
        configuration={"provider": "anthropic", "model": "model-small"},
        options={"max_cost_usd": limit},
        fingerprint=run_id,
        items=[NewItem(index=i, item_id=None, job={"prompt": key}, key=key) for i, key in enumerate(keys)],
        now=now,
    )


def build(store: LedgerStore, *, now: float | None = None) -> None:
    """Write the ledger the dashboard's tests look at into `store` (empty)."""
    now = time.time() if now is None else now
    # The parked call: sent 5 hours ago to another provider, still waiting.
    _claim(store, [PARKED_KEY], actor="triage", model="model-other", now=now - 5 * 3600)
    _send(store, "batch-parked", [PARKED_KEY], provider="openai", at=now - 5 * 3600)

    finished = [f"fin-{i}" for i in range(6)]
    _claim(store, finished, actor="reviewer", model="model-small", now=now - 3 * 3600)
    _run(store, FINISHED, finished, now=now - 3 * 3600, limit=None)
    _send(store, "batch-fin", finished, provider="anthropic", at=now - 3 * 3600)
    error = {
        "class": "BatchRequestErrored",
        "message": "the request was invalid",
        "error_type": "invalid_request_error",
        "api_message": "max_tokens: must be at most 8192",
        "retryable": False,
    }
    expired = {"class": "BatchRequestExpired", "message": "the batch expired before this request was processed"}
    _answer(
        store,
        "batch-fin",
        [
            *(_ok(key) for key in finished[:4]),
            OutcomeRow(finished[4], RequestState.FAILED, error=error),
            OutcomeRow(finished[5], RequestState.EXPIRED, error=expired),
        ],
        at=now - 2 * 3600,
    )

    live = [f"live-{i}" for i in range(10)]
    _claim(store, live, actor="reviewer", model="model-small", now=now - 90 * 60)
    _run(store, LIVE, live, now=now - 90 * 60, limit="5.00")
    _send(store, "batch-live-1", live[:4], provider="anthropic", at=now - 90 * 60)
    _answer(store, "batch-live-1", [_ok(key) for key in live[:4]], at=now - 60 * 60)
    _send(store, "batch-live-2", live[4:], provider="anthropic", at=now - 10 * 60)
    _agent_run(store, first_turn=finished[0], second_turn=live[4], now=now)
    _spend(store, answered=finished[:4], waiting=live[4:6], other=live[6], now=now)


def _spend(store: LedgerStore, *, answered: list[str], waiting: list[str], other: str, now: float) -> None:
    """Spend by owner: team "research" (project "tides") spent 4 answers' $0.0015 and a live call's $0.0040 and
    reserves 2 waiting requests' $0.01, under a cap of $1.00 in all and its project's of $0.05; team "ops" reserves
    one more $0.01, with no cap."""
    from lowtide.ledger.spend_records import CapPeriod, CapScope, Owner, SpendCap, SpendEntry

    spending = store.spending
    research, ops = Owner("research", "tides"), Owner("ops")
    at = now - 60
    entries = [SpendEntry(key, research, "reviewer", "model-small", Decimal("0.01"), at, "host-a") for key in answered]
    entries += [SpendEntry(key, research, "reviewer", "model-small", Decimal("0.01"), at, "host-a") for key in waiting]
    entries.append(SpendEntry(other, ops, "reviewer", "model-small", Decimal("0.01"), at, "host-a"))
    entries.append(SpendEntry("live:dashboard", research, "chatter", "model-small", Decimal("0.05"), at, "host-a"))
    assert spending.reserve_all(entries).admitted
    spending.settle("live:dashboard", Decimal("0.0040"))
    spending.set_cap(SpendCap(CapScope.TEAM, "research", CapPeriod.ALL, Decimal("1.00")))
    spending.set_cap(SpendCap(CapScope.PROJECT, "tides", CapPeriod.ALL, Decimal("0.05")))


def _agent_run(store: LedgerStore, *, first_turn: str, second_turn: str, now: float) -> None:
    """A run whose first turn went in the finished run's batch (answered an hour after it was sent), whose step ran,
    and whose second turn waits in the batch still out (its requests stand for the turns' own)."""
    journal = store.agent_journal
    journal.open_run(
        AgentRun(
            run_id=AGENT_RUN, reference="agents_app:triage", input='{"args":["flaky test"],"kwargs":{}}',
            state=AgentState.PARKED, result=None, error=None, cost_usd=CHEAP, awaiting=second_turn, holder=None,
            held_until=None, created_at=now - 3 * 3600, updated_at=now - 10 * 60,
        )
    )  # fmt: skip
    entries = [
        (
            EntryKind.TURN,
            "planner: 'Plan a fix for: flaky test'",
            first_turn,
            '{"text":"a plan"}',
            CHEAP,
            3 * 3600,
            2 * 3600,
        ),
        (EntryKind.STEP, "agents_app:read_build_log", f"{AGENT_RUN}/1", '"3 failures"', None, 2 * 3600, 2 * 3600),
        (EntryKind.TURN, "planner: 'Review this plan'", second_turn, None, None, 10 * 60, None),
    ]
    for position, (kind, name, key, result, cost, started, ended) in enumerate(entries):
        journal.put_entry(
            JournalEntry(
                run_id=AGENT_RUN, position=position, kind=kind, name=name, fingerprint=f"f{position}", key=key,
                result=result, error=None, cost_usd=cost, idempotent=False, retry=False, attempts=1,
                started_at=now - started, ended_at=None if ended is None else now - ended,
            )
        )  # fmt: skip


def answer_waiting(store: LedgerStore, *, now: float | None = None, replayed: bool = False) -> None:
    """The run in progress's last batch ends and is collected: every item answered. `replayed`: its results are
    stored, then stored again a minute later before it is marked collected (a collection cut by a crash and run again
    by the next process)."""
    now = time.time() if now is None else now
    outcomes = [_ok(f"live-{i}") for i in range(4, 10)]
    if replayed:
        store.record_status("batch-live-2", phase="ended", counts={"succeeded": len(outcomes)}, ended_at=now)
        store.record_outcomes("batch-live-2", outcomes, now=now)
        now += 60
    _answer(store, "batch-live-2", outcomes, at=now)


def build_large(store: LedgerStore, items: int, *, now: float | None = None) -> None:
    """Write into `store` (empty) one run of `items` requests, all sent in one batch still out: a run too large to
    count at each refresh (100,000 items take a few tenths of a second to count)."""
    now = time.time() if now is None else now
    keys = [f"large-{i:06d}" for i in range(items)]
    _claim(store, keys, actor="reviewer", model="model-small", now=now - 600)
    _run(store, LARGE, keys, now=now - 600, limit=None)
    _send(store, "batch-large", keys, provider="anthropic", at=now - 600)


def build_split(store: LedgerStore, *, now: float, limit: str | None = "1.00") -> None:
    """Write into `store` a run of 6 items (actor `splitter`) caught mid-way: 2 in a batch the API has, 1 in a batch
    whose create is still in flight (no API id yet), 3 queued and not yet in a batch. Without a cost `limit` its
    requests carry no worst case, as a run without one prices none."""
    keys = [f"split-{i}" for i in range(6)]
    worst_case = Decimal("0.01") if limit is not None else None
    _claim(store, keys, actor="splitter", model="model-small", now=now - 600, worst_case=worst_case)
    _run(store, SPLIT, keys, now=now - 600, limit=limit)
    _send(store, "batch-split", keys[:2], provider="anthropic", at=now - 300)
    identity = store.identity()
    store.record_intent(
        BatchIntent(
            "batch-split-creating",
            provider="anthropic",
            endpoint=ENDPOINT,
            members=[(keys[2], f"{keys[2]}_{identity}")],
            request_bytes=100,
            owner=OWNER,
            until=now + 3600,
            now=now - 60,
        )
    )


def answer_split(store: LedgerStore, *, now: float) -> None:
    """The split run's batch the API has ends: one answer, one failure."""
    error = {"class": "BatchRequestErrored", "message": "invalid", "error_type": "invalid_request_error"}
    _answer(store, "batch-split", [_ok("split-0"), OutcomeRow("split-1", RequestState.FAILED, error=error)], at=now)
