"""Runs picked up from the ledger alone: `load_run` (a run's jobs and options, for `lowtide retry` and `lowtide
status`), `retry_run` (its failed and expired items sent again; in a live run also those it did not attempt), and
`item_status` (where an item stands)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from pydantic import BaseModel

from lowtide.bulk.inputs.jobs import Job, Jobs
from lowtide.bulk.outputs.results import ItemStatus, RunResult
from lowtide.bulk.recorded.items import item_key
from lowtide.bulk.running.definition import RunActor
from lowtide.bulk.running.runner import DEFAULT_PARALLEL_BATCHES, BulkRun
from lowtide.errors import ConfigurationError
from lowtide.ledger.runs import ItemRow
from lowtide.ledger.store import RequestState

__all__ = ["item_status", "load_run", "prepare_retry", "retry_run"]

_SUCCEEDED = RequestState.SUCCEEDED


def load_run(actor: RunActor, run_id: str, **options: Any) -> BulkRun:
    """A `BulkRun` rebuilt from the ledger: the run's jobs and options, for `actor` (usually its own settings)."""
    store = actor.ledger.run_store
    record = store.run(run_id)
    if record is None:
        raise ConfigurationError(f"The ledger {actor.ledger.location} has no run {run_id!r}.", field="run_id")
    saved = dict(record.options)
    model = _import_model(saved.get("response_model"))
    kwargs: dict[str, Any] = {
        "run_id": run_id,
        "defaults": saved.get("defaults") or {},
        "response_model": model,
        "citations": bool(saved.get("citations")),
        # Recorded as the string of a Decimal.
        "max_cost_usd": Decimal(saved["max_cost_usd"]) if saved.get("max_cost_usd") is not None else None,
        "time_limit": saved.get("time_limit"),
        "cancel_grace": saved.get("cancel_grace") or 60.0,
        "results_dir": saved.get("results_dir"),
        "out": saved.get("out"),
    }
    if saved.get("mode") == "live":  # runs recorded before live runs existed have no mode: batch
        kwargs.update(
            mode="live",
            abort_on=saved.get("abort_on") or (),
            abort_mode=saved.get("abort_mode") or "drain",
            post_process_timeout=saved.get("post_process_timeout"),
        )
    else:
        kwargs.update(
            items_per_batch=saved.get("items_per_batch"),
            max_parallel_batches=saved.get("max_parallel_batches") or DEFAULT_PARALLEL_BATCHES,
        )
    kwargs.update(options)
    run = BulkRun(actor, **kwargs)
    run.jobs = Jobs(Job.model_validate(row.job) for row in store.items(run_id))
    return run


async def retry_run(actor: RunActor, run_id: str, **options: object) -> RunResult:
    """Send a run's failed and expired items again (new keys: their first answers stay on record); keep the rest.

    In a live run, items it did not attempt are sent too, and an item whose answer is stored but whose
    post-processing failed keeps its answer: only the post-processor runs again (given `post_process=`).
    """
    run, again = prepare_retry(actor, run_id, **options)
    return await run.run(only=again)


def prepare_retry(actor: RunActor, run_id: str, **options: object) -> tuple[BulkRun, list[int]]:
    """The run `retry_run` runs again, and the items it sends (their new attempts recorded): for a caller that runs it
    otherwise (`BulkRun.run_to_files`, as `lowtide retry` does)."""
    run = load_run(actor, run_id, **options)
    store = actor.ledger.run_store
    live = run.mode == "live"
    again = [row for row in store.items(run_id, with_jobs=False) if _retryable(row, live=live)]
    # A new key for each item sent again; not for one never sent, nor (live) one whose answer is stored.
    paid = [r for r in again if r.request_state is not None and not (live and r.request_state is _SUCCEEDED)]
    store.new_attempts(run_id, [(row.index, item_key(run_id, row.index, row.attempt + 1)) for row in paid],
                       now=actor.clock.now())  # fmt: skip
    return run, [row.index for row in again]


def _retryable(row: ItemRow, *, live: bool) -> bool:
    status = item_status(row)
    return status in (ItemStatus.FAILED, ItemStatus.EXPIRED) or (live and status is ItemStatus.NOT_RUN)


def item_status(row: ItemRow) -> ItemStatus:
    """Where an item stands: what the run decided for it, else its latest request's state."""
    if row.status is not None:
        return ItemStatus(row.status)
    if row.request_state is RequestState.WAITING:
        return ItemStatus.WAITING  # in a batch the API has, its answer not collected yet
    if row.request_state is None or not row.request_state.final:
        return ItemStatus.PENDING
    return ItemStatus(row.request_state.value)


def _import_model(path: object) -> type[BaseModel] | None:
    if not isinstance(path, str) or not path:
        return None
    from lowtide.bulk.recorded.model_paths import import_model

    return import_model(path)
