"""`lowtide status`, `lowtide runs`, `lowtide collect` and `lowtide cancel`: the ledger's work, seen and handled
from the command line. Each reads an existing ledger and says which; none creates one."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from lowtide.cli.params import COUNT, api_key_env_option, json_option, ledger_option
from lowtide.errors import APIError, ConfigurationError

if TYPE_CHECKING:
    from lowtide.ledger.store import LedgerStore

# The ledger's stores, and asyncio, are imported by the commands that open one: `lowtide --help` does not.

__all__ = ["COMMANDS", "existing_ledger"]

_TICKET_STATES = ("waiting-on-batch", "ended", "collected", "canceled", "expired", "failed")
_SHOWN = 20


def existing_ledger(
    given: str | Path | None,
    *,
    read_only: bool = False,
    source: str = "--ledger",
    never_write: bool = False,
    own: bool = False,
    unchanged: bool = False,
) -> LedgerStore:
    """The ledger `given` names (default: $LOWTIDE_LEDGER or the state directory), which must exist: a command that
    reads the ledger never leaves an empty one behind where the user expected theirs (a database named by a URL must
    exist on its server; its tables are made if it has none).

    `read_only` (a command that only reads): a ledger this process cannot write (a SQLite file in a read-only
    directory or file system) is opened so that nothing is written, where its kind can; one it can write is opened as
    usual (a SQLite file then leaves no `-wal` or `-shm` file behind). `never_write` (`lowtide dashboard`): opened
    read-only wherever its kind can, writable or not. `own`: a store of the caller's alone, not the process's one
    (`open_ledger(own=True)`), which the caller closes. `unchanged` (`lowtide ledger copy`'s source): a store of the
    caller's too, which never writes to the ledger, even one an older lowtide wrote (`LedgerKind.open_unchanged`)."""
    from lowtide.ledger.store import ledger_location, open_ledger

    location = ledger_location(given, source=source)
    kind = location.kind
    if kind.in_process:
        raise ConfigurationError(
            f"{location} is a ledger in one process's memory, gone when it ends: there is none here to read. Name the"
            " ledger your programs use with --ledger or $LOWTIDE_LEDGER.",
            field="ledger",
        )
    missing = kind.missing(location.target)
    if missing is not None:
        raise ConfigurationError(
            f"There is no ledger at {missing}. Name the one your programs use with --ledger or $LOWTIDE_LEDGER.",
            field="ledger",
        )
    if unchanged:
        return kind.open_unchanged(kind.place(location.target))
    read_only = never_write or (read_only and not kind.writable(location.target))
    return open_ledger(location, read_only=read_only, own=own)


def _unknown(unpriced: int) -> str:
    """The answers whose cost is unknown (a model with no price), said beside a sum that leaves them out: never shown
    as free."""
    return f" + {unpriced} answer(s) of unknown cost" if unpriced else ""


def _echo(line: str = "", *, err: bool = False) -> None:
    click.echo(line, err=err)


def _print_json(value: Any) -> None:
    from lowtide.bulk.outputs.results import exact_json

    _echo(exact_json(value, indent=True))


@click.command(
    short_help="Show what the ledger holds, or one run.",
    epilog="""\b
Examples:
  lowtide status                                 everything, newest 20 requests and batches
  lowtide status --state failed --limit 0        every failed request
  lowtide status --actor planner --json
  lowtide status my-run-id                       one bulk run (see lowtide runs)""",
)
@click.argument("run", required=False, metavar="[RUN]")
@ledger_option
@click.option("--actor", help="Only this actor's requests.")
@click.option(
    "--state",
    "states",
    multiple=True,
    type=click.Choice(_TICKET_STATES),
    help="Only requests in this state (repeatable).",
)
@click.option("--batch", help="Only this batch's requests (lowtide's batch id or the API's).")
@click.option(
    "--limit",
    type=COUNT,
    default=None,
    help=f"Show the newest N requests and batches (0: all). Default: {_SHOWN} as text, all as JSON.",
)
@json_option
def status(
    run: str | None,
    ledger: str | None,
    actor: str | None,
    states: tuple[str, ...],
    batch: str | None,
    limit: int | None,
    json_output: bool,
) -> int:
    """Show requests, batches, states and costs from the ledger, or one bulk run.

    Reads the ledger only: no API call. `lowtide collect` fetches what ended batches hold.
    """
    from lowtide.calls.parking import status as ledger_status

    store = existing_ledger(ledger, read_only=True)
    if run is not None:
        return _run_status(store, run, json_output=json_output)
    report = ledger_status(store, actor=actor, states=states or None, batch=batch)
    shown = limit if limit is not None else (0 if json_output else _SHOWN)
    tickets = report.tickets[-shown:] if shown else report.tickets
    batches = report.batches[-shown:] if shown else report.batches
    if json_output:
        _print_json({"ledger": store.location, **report.as_json(tickets=tickets, batches=batches)})
        return 0
    _echo(f"ledger {store.location}: {len(report.batches)} batch(es), {len(report.tickets)} request(s)")
    for summary in batches:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(summary.counts.items()) if v)
        _echo(
            f"  {summary.batch_id or summary.id:<40} {summary.state:<17} {summary.requests:>6} req  {counts:<40}"
            f" ${summary.cost_usd:.6f}{_unknown(summary.unpriced)} (live ${summary.live_cost_usd:.6f}"
            f"{_unknown(summary.unpriced)})"
        )
    for ticket in tickets:
        _echo(f"  {ticket.key:<40} {ticket.state:<17} batch {ticket.batch_id or '-'}  attempts {ticket.attempts}")
    hidden = max(len(report.batches) - len(batches), len(report.tickets) - len(tickets))
    if hidden:
        _echo(
            f"  ({len(report.tickets) - len(tickets):,} older request(s) and {len(report.batches) - len(batches):,}"
            " batch(es) not shown: --limit 0 shows all; --state, --actor and --batch narrow the list)"
        )
    for line in report.actors:
        counted = ", ".join(f"{k} {v}" for k, v in sorted(line.states.items()))
        _echo(
            f"actor {line.actor}: {line.requests} request(s) ({counted}); ${line.cost_usd:.6f}{_unknown(line.unpriced)}"
            f" at batch prices, ${line.live_cost_usd:.6f}{_unknown(line.unpriced)} live"
        )
    unknown = _unknown(report.unpriced)
    live = f"${report.live_cost_usd:.6f}{unknown}"
    _echo(f"total: ${report.cost_usd:.6f}{unknown} at batch prices; the same calls live: {live}")
    records = _run_lines(store, latest=5)
    if records:
        _echo("latest bulk runs (lowtide runs lists them all; lowtide status RUN shows one):")
        for record in records:
            _echo(f"  {record}")
    return 0


def _run_status(store: LedgerStore, run_id: str, *, json_output: bool) -> int:
    from lowtide.bulk.recorded.status import run_status

    report = run_status(store, run_id)
    if json_output:
        _print_json({"ledger": store.location, **report.as_json()})
    else:
        _echo(f"ledger {store.location}")
        for line in report.lines():
            _echo(line)
    return 0


def _run_lines(store: LedgerStore, *, latest: int, actor: str | None = None) -> list[str]:
    return [_run_line(report) for report in _runs(store, latest=latest, actor=actor)]


def _runs(store: LedgerStore, *, latest: int, actor: str | None) -> list[Any]:
    from lowtide.bulk.recorded.status import run_status

    records = [r for r in store.run_store.runs() if actor is None or r.actor == actor]
    chosen = records[-latest:] if latest else records
    return [run_status(store, record.id) for record in reversed(chosen)]


def _run_line(report: Any) -> str:
    from lowtide.core.run_reports import usd

    counts = ", ".join(f"{n} {name}" for name, n in report.counts.items() if n)
    started = datetime.fromtimestamp(report.created_at, UTC).strftime("%Y-%m-%d %H:%M")
    return (
        f"{report.run_id:<32} {started}  actor {report.actor}: {report.items} item(s): {counts}; {usd(report.cost_usd)}"
    )


@click.command(
    short_help="List the bulk runs in the ledger.",
    epilog="""\b
Examples:
  lowtide runs
  lowtide runs --limit 0 --actor reviewer
  lowtide runs --json | jq '.runs[] | select(.finished | not) | .run_id'""",
)
@ledger_option
@click.option("--actor", help="Only this actor's runs.")
@click.option("--limit", type=COUNT, default=_SHOWN, show_default=True, help="Show the newest N runs (0: all).")
@json_option
def runs(ledger: str | None, actor: str | None, limit: int, json_output: bool) -> int:
    """List the bulk runs in the ledger, newest first: items, where they stand, cost.

    `lowtide status RUN` shows one run in full; `lowtide retry RUN` sends its failed items again.
    """
    store = existing_ledger(ledger, read_only=True)
    reports = _runs(store, latest=limit, actor=actor)
    if json_output:
        _print_json({"ledger": store.location, "runs": [r.as_json() for r in reports]})
        return 0
    _echo(f"ledger {store.location}: {len(reports)} run(s) shown")
    for report in reports:
        _echo(f"  {_run_line(report)}")
    return 0


@click.command(
    short_help="Fetch the results of ended batches.",
    epilog="""\b
Examples:
  lowtide collect                                every outstanding batch
  lowtide collect msgbatch_01abc...              one batch, by the API's id or lowtide's
  lowtide collect --api-key-env WORK_ANTHROPIC_KEY --json""",
)
@click.argument("batches", nargs=-1, metavar="[BATCH]...")
@ledger_option
@api_key_env_option
@json_option
def collect(batches: tuple[str, ...], ledger: str | None, api_key_env: str | None, json_output: bool) -> int:
    """Fetch the results of ended batches into the ledger, and say where each batch stands.

    A batch still processing is checked once and left as it is; a batch whose create never got an answer is
    reconciled with the API. Waiting programs (and `lowtide run` again) then find their answers in the ledger.
    """
    import asyncio

    from lowtide.calls.parking import collect as collect_batches

    store = existing_ledger(ledger)
    try:
        summaries = asyncio.run(collect_batches(store, batch_ids=batches or None, api_key_env=api_key_env))
    except APIError as exc:
        click.echo(
            f"lowtide: {exc}. The batches it could not look at stay as they were in the ledger (nothing is lost);"
            " run lowtide collect again once the API can be reached.",
            err=True,
        )
        return 3
    if json_output:
        _print_json({"ledger": store.location, "batches": [s.as_json() for s in summaries]})
        return 0
    for summary in summaries:
        _echo(f"{summary.batch_id or summary.id} {summary.state}")
    return 0


@click.command(
    short_help="Cancel an outstanding batch.",
    epilog="""\b
Examples:
  lowtide cancel msgbatch_01abc...                a batch, by the API's id or lowtide's
  lowtide cancel plan-issue-42                    the batch of the request with this key""",
)
@click.argument("target")
@ledger_option
@api_key_env_option
@json_option
def cancel(target: str, ledger: str | None, api_key_env: str | None, json_output: bool) -> int:
    """Cancel an outstanding batch, named by its id or by the key of a request in it.

    Requests the API had not yet answered end as canceled; answers already made are still collected and paid for.
    Exits 1 when the batch has already ended (there is nothing to cancel).
    """
    import asyncio

    from lowtide.calls.parking import cancel as cancel_batch
    from lowtide.errors import BatchNotOutstanding

    store = existing_ledger(ledger)
    try:
        summary = asyncio.run(cancel_batch(store, target, api_key_env=api_key_env))
    except BatchNotOutstanding as exc:
        if json_output:
            _print_json({"ledger": store.location, "canceled": False, "reason": str(exc)})
        click.echo(f"lowtide: {exc}", err=True)
        return 1
    except APIError as exc:
        click.echo(f"lowtide: could not cancel {target}: {exc}. Nothing was changed; the batch runs on.", err=True)
        return 3
    if json_output:
        _print_json({"ledger": store.location, "canceled": True, "batch": summary.as_json()})
    else:
        _echo(f"{summary.batch_id} cancellation requested ({summary.state})")
    return 0


COMMANDS = [status, runs, collect, cancel]
