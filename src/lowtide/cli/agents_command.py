"""`lowtide agents`: the durable agent runs of a ledger (`lowtide.agents`), seen and handled from the command line:
`resume` (cron's `--once`, or `--watch`), `list`, `show`, `stop`, `retry` and `approve`."""

from __future__ import annotations

import json
import os
import sys
import time
from typing import TYPE_CHECKING, Any

import click

from lowtide.cli.ledger_commands import existing_ledger
from lowtide.cli.params import SECONDS, api_key_env_option, json_option, ledger_option
from lowtide.errors import ConfigurationError
from lowtide.ledger.journal_records import AgentRun, AgentState, EntryKind

if TYPE_CHECKING:
    from lowtide.agents.fleet import Advanced
    from lowtide.ledger.interface import LedgerStore

__all__ = ["COMMANDS"]


def _run_json(store: LedgerStore, run: AgentRun) -> dict[str, Any]:
    from lowtide.agents.timeline import run_json

    return run_json(store, run)


def _print_json(value: Any) -> None:
    from lowtide.bulk.outputs.results import exact_json

    click.echo(exact_json(value, indent=True))


def _cost(run: AgentRun) -> str:
    from lowtide.agents.timeline import budget_of

    budget = budget_of(run)
    return f"${run.cost_usd}" + (f" of ${budget}" if budget is not None else "")


def _asks(store: LedgerStore, run: AgentRun) -> str:
    from lowtide.agents.approvals import question

    asked = question(store, run)
    return "" if asked is None else f": {asked.name} (`lowtide agents approve {run.run_id} [--deny]`)"


def _waits(store: LedgerStore, run: AgentRun) -> str:
    """What a parked or waiting run waits for, as a person reads it ("" for a run that waits on nothing)."""
    from lowtide.agents.approvals import question

    asked = question(store, run)
    if asked is not None:
        return f" waiting on a person: {asked.name}"
    return f" waiting on {run.awaiting}" if run.state is AgentState.PARKED and run.awaiting else ""


def _say(store: LedgerStore, done: Advanced) -> None:
    """Each run advanced, as it now stands (and what a person is asked), on stdout; what could not be done on
    stderr."""
    for run in done.runs:
        click.echo(f"{run.run_id} {run.state.value}" + (f": {run.error}" if run.error else "") + _asks(store, run))
    for failed, said in done.errors:
        click.echo(f"lowtide: {failed}: {said}", err=True)


def _importable_here() -> None:
    # As `python -m` does: the agents of the project the command runs in are importable by their references.
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())


def _run_of(store: LedgerStore, run_id: str) -> AgentRun:
    run = store.agent_journal.agent_run(run_id)
    if run is None:
        raise ConfigurationError(f"No agent run {run_id!r} in the ledger {store.location}.", field="run")
    return run


@click.group(
    short_help="Durable agent runs: resume, list, show, stop, retry, approve.",
    epilog="""\b
Examples:
  lowtide agents resume --once
  lowtide agents list --state parked --json
  lowtide agents show triage-42""",
)
def agents() -> None:
    """Durable agent runs (`@agent` functions): each parks while a model turn's batch is out, and is advanced by
    `lowtide agents resume` once its answer is there."""


@agents.command(
    epilog="""\b
Examples:
  lowtide agents resume --once                         from cron: one pass, then exit
  lowtide agents resume --watch --interval 60
  lowtide agents resume --once --import myproject.agents"""
)
@click.option("--once", "mode", flag_value="once", default=True, help="One pass, then exit (the default).")
@click.option("--watch", "mode", flag_value="watch", help="A pass every --interval seconds until interrupted.")
@click.option("--interval", type=SECONDS, default=60.0, show_default=True, help="Seconds between --watch passes.")
@click.option("--import", "imports", multiple=True, metavar="MODULE", help="Import MODULE first (repeatable).")
@ledger_option
@api_key_env_option
@json_option
def resume(
    mode: str, interval: float, imports: tuple[str, ...], ledger: str | None, api_key_env: str | None, json_output: bool
) -> int:
    """Collect the ledger's ended batches, then advance every run whose awaited answer is there (or whose process
    died) to its next park or its end. Exits 1 when a run could not be resumed (its agent cannot be imported: the
    run stays parked) or a batch could not be collected."""
    import asyncio

    from lowtide.agents.fleet import resume_once

    _importable_here()
    store = existing_ledger(ledger)
    while True:
        done = asyncio.run(resume_once(store, imports=imports, api_key_env=api_key_env))
        if json_output:
            _print_json({"advanced": [_run_json(store, r) for r in done.runs], "errors": dict(done.errors)})
        else:
            _say(store, done)
        if mode == "once":
            return 1 if done.errors else 0
        time.sleep(interval)


@agents.command(
    name="list",
    epilog="""\b
Examples:
  lowtide agents list
  lowtide agents list --state in-doubt --state failed --json""",
)
@click.option("--state", "states", multiple=True, type=click.Choice([s.value for s in AgentState]), help="Only these.")
@ledger_option
@json_option
def list_runs(states: tuple[str, ...], ledger: str | None, json_output: bool) -> int:
    """The ledger's agent runs, oldest first: id, state, cost, and the key a parked run waits on."""
    store = existing_ledger(ledger, read_only=True)
    runs = store.agent_journal.agent_runs([AgentState(s) for s in states] if states else None)
    if json_output:
        _print_json([_run_json(store, r) for r in runs])
        return 0
    for run in runs:
        click.echo(f"{run.run_id} {run.state.value} ${run.cost_usd} {run.reference}{_waits(store, run)}")
    return 0


@agents.command(epilog="\b\nExamples:\n  lowtide agents show triage-42\n  lowtide agents show triage-42 --json")
@click.argument("run_id", metavar="RUN")
@ledger_option
@json_option
def show(run_id: str, ledger: str | None, json_output: bool) -> int:
    """A run's timeline: each turn and step, in order, with its key, cost and outcome."""
    from lowtide.agents.timeline import entry_json, timeline

    store = existing_ledger(ledger, read_only=True)
    run = _run_of(store, run_id)
    entries = store.agent_journal.entries(run_id)
    if json_output:
        _print_json({**_run_json(store, run), "journal": timeline(store, entries, time.time())})
        return 0
    click.echo(f"{run.run_id} {run.state.value} {_cost(run)} {run.reference}{_waits(store, run)}")
    for entry in entries:
        shown = entry_json(entry)
        cost = f" ${shown['cost_usd']}" if shown["cost_usd"] else ""
        waited = (entry.ended_at or time.time()) - entry.started_at
        took = f" after {waited:.0f} s" if entry.kind is EntryKind.PERSON else ""
        click.echo(f"  {entry.position} {entry.kind.value} {entry.name} {shown['state']}{took}{cost} [{entry.key}]")
    if run.error:
        click.echo(f"  {run.error}")
    return 0


@agents.command(epilog="\b\nExamples:\n  lowtide agents stop triage-42")
@click.argument("run_id", metavar="RUN")
@ledger_option
@api_key_env_option
def stop(run_id: str, ledger: str | None, api_key_env: str | None) -> int:
    """Stop a run: `stopped` at once, and the batch it waits on canceled where the provider allows. Exits 1 when the
    run has already ended."""
    from lowtide.agents.fleet import stop_run

    store = existing_ledger(ledger)
    _run_of(store, run_id)
    try:
        import asyncio

        run = asyncio.run(stop_run(store, run_id, api_key_env=api_key_env))
    except ConfigurationError as exc:
        click.echo(f"lowtide: {exc}", err=True)
        return 1
    click.echo(f"{run.run_id} {run.state.value}")
    return 0


@agents.command(epilog="\b\nExamples:\n  lowtide agents retry triage-42 --import myproject.agents")
@click.argument("run_id", metavar="RUN")
@click.option("--import", "imports", multiple=True, metavar="MODULE", help="Import MODULE first (repeatable).")
@ledger_option
@api_key_env_option
def retry(run_id: str, imports: tuple[str, ...], ledger: str | None, api_key_env: str | None) -> int:
    """Run an in-doubt run's step again (you checked it is safe to), and advance the run on."""
    from lowtide.agents.fleet import retry_run

    _importable_here()
    store = existing_ledger(ledger)
    import asyncio

    done = asyncio.run(retry_run(store, run_id, imports=imports, api_key_env=api_key_env))
    _say(store, done)
    return 1 if done.errors else 0


@agents.command(
    epilog="""\b
Examples:
  lowtide agents approve deploy-7
  lowtide agents approve deploy-7 --deny --result '"not on a Friday"'
  lowtide agents approve deploy-7 --result '{"comment": "LGTM, edited"}'"""
)
@click.argument("run_id", metavar="RUN")
@click.option("--deny", is_flag=True, help="Deny what the run asks (the default approves it).")
@click.option("--result", "given", metavar="JSON", help="A JSON value the run's code receives with the decision.")
@ledger_option
def approve(run_id: str, deny: bool, given: str | None, ledger: str | None) -> int:
    """Record your decision for a run waiting on a person (`waiting-on-person`): the next `lowtide agents resume`
    advances it. Exits 1 when the run is not waiting on a person (already decided, or never asked)."""
    from lowtide.agents.approvals import approve_run

    try:
        result = None if given is None else json.loads(given)
    except json.JSONDecodeError as exc:
        raise click.BadParameter(f"not JSON: {exc} (a string is written '\"text\"')", param_hint="--result") from exc
    store = existing_ledger(ledger)
    try:
        run = approve_run(store, run_id, deny=deny, result=result)
    except ConfigurationError as exc:
        click.echo(f"lowtide: {exc}", err=True)
        return 1
    click.echo(f"{run.run_id} {run.state.value}: {'denied' if deny else 'approved'}; `lowtide agents resume` goes on")
    return 0


COMMANDS = [agents]
