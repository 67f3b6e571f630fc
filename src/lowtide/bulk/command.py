"""`lowtide run`, `lowtide retry` and `lowtide status RUN`: bulk runs from the command line.

Exit status: 0 when every item succeeded (or a dry run), 1 when some did not (failed, expired, canceled, not run),
2 for a usage or configuration error (nothing was sent).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from lowtide.errors import ConfigurationError
from lowtide.ledger.store import Ledger

__all__ = ["add_commands"]

_JSONL = (".jsonl", ".ndjson", ".json")


def add_commands(
    commands: Any,
    *,
    ledger_argument: Callable[[argparse.ArgumentParser], None],
) -> None:
    run = commands.add_parser("run", help="run every input of a JSONL or CSV file through batches (resumable)")
    run.add_argument("input", type=Path, help="JSONL (a prompt or messages per line) or CSV (with --template)")
    run.add_argument("--actor", type=Path, required=True, help="the actor's YAML or TOML file")
    run.add_argument("--name", help="which actor, when the file holds several")
    run.add_argument("--out", type=Path, help="write one JSON line per input here, in input order")
    run.add_argument("--run-id", help="the run's id (default: derived from the actor and the inputs)")
    run.add_argument("--results-dir", type=Path, help="write raw and processed results here as they arrive")
    run.add_argument("--template", help="CSV: the prompt, with {column} placeholders")
    run.add_argument("--file-column", help="CSV: a column naming a file to send with each prompt")
    run.add_argument("--id-column", help="CSV: a column holding each row's own id")
    run.add_argument("--citations", action="store_true", help="ask for citations on files sent as documents")
    run.add_argument("--response-model", help="parse answers into this pydantic model (module:Class)")
    run.add_argument("--items-per-batch", type=int, help="most requests in one batch (default: the API's 100,000)")
    run.add_argument("--max-parallel-batches", type=int, default=4, help="most batches out at once (default 4)")
    run.add_argument("--max-cost-usd", type=_usd, help="never send a batch whose worst case would cross this")
    run.add_argument("--time-limit", type=float, help="seconds; then outstanding batches are canceled")
    run.add_argument("--dry-run", action="store_true", help="print the plan (batches, cost range) and send nothing")
    _progress_arguments(run)
    ledger_argument(run)
    run.set_defaults(handler=_run)

    retry = commands.add_parser("retry", help="send a run's failed and expired items again")
    retry.add_argument("run_id", metavar="RUN", help="the run's id")
    retry.add_argument("--actor", type=Path, help="an actor file to use (default: the settings the run recorded)")
    retry.add_argument("--name", help="which actor, when the file holds several")
    retry.add_argument("--out", type=Path, help="write the whole run's results here (default: the run's --out)")
    _progress_arguments(retry)
    ledger_argument(retry)
    retry.set_defaults(handler=_retry)


def _progress_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--progress",
        choices=("auto", "rich", "plain", "none"),
        default="auto",
        help="progress on stderr: a live display on a terminal, plain lines elsewhere (default auto)",
    )
    parser.add_argument("--progress-interval", type=float, default=30.0, help="seconds between plain lines")
    parser.add_argument("--json", action="store_true", help="print the summary (or plan) as JSON")


def _usd(value: str) -> Decimal:
    try:
        amount = Decimal(value)
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"not an amount of dollars: {value!r}") from None
    if not amount.is_finite() or amount <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0: {value!r}")
    return amount


def _run(args: argparse.Namespace) -> int:
    from lowtide.actor import Actor
    from lowtide.bulk.loaders import load_csv, load_jsonl
    from lowtide.bulk.models import import_model

    suffix = args.input.suffix.lower()
    if suffix == ".csv":
        if not args.template:
            raise ConfigurationError("A CSV input needs --template, the prompt with {column} placeholders.")
        jobs = load_csv(args.input, args.template, file_column=args.file_column, id_column=args.id_column)
    elif suffix in _JSONL:
        if args.template or args.file_column or args.id_column:
            raise ConfigurationError("--template, --file-column and --id-column are for CSV inputs.")
        jobs = load_jsonl(args.input)
    else:
        raise ConfigurationError(f"{args.input}: unknown input kind {suffix!r}; use .jsonl or .csv.")
    actor = Actor.from_file(args.actor, args.name, ledger=args.ledger)
    run = actor.bulk(
        run_id=args.run_id,
        response_model=import_model(args.response_model) if args.response_model else None,
        citations=args.citations,
        items_per_batch=args.items_per_batch,
        max_parallel_batches=args.max_parallel_batches,
        max_cost_usd=args.max_cost_usd,
        time_limit=args.time_limit,
        results_dir=args.results_dir,
        out=args.out,
        progress=args.progress,
        progress_stream=sys.stderr,
        progress_interval=args.progress_interval,
    ).add_jobs(jobs)
    if args.dry_run:
        plan = asyncio.run(run.plan())
        print(json.dumps(plan.as_json(), indent=2) if args.json else "\n".join(plan.lines()))
        return 0
    result = asyncio.run(_closing(actor, run.run()))
    return _report(result, json_output=args.json)


def _retry(args: argparse.Namespace) -> int:
    from lowtide.actor import Actor
    from lowtide.bulk.runner import retry_run
    from lowtide.ledger.runs import RunStore
    from lowtide.ledger.store import open_ledger

    ledger = open_ledger(args.ledger)
    if args.actor is not None:
        actor = Actor.from_file(args.actor, args.name, ledger=ledger)
    else:
        record = RunStore(ledger).run(args.run_id)
        if record is None:
            raise ConfigurationError(f"The ledger {ledger.path} has no run {args.run_id!r}.", field="run_id")
        actor = Actor(record.configuration, ledger=ledger)
    options: dict[str, Any] = {"progress": args.progress, "progress_interval": args.progress_interval}
    if args.out is not None:
        options["out"] = args.out
    result = asyncio.run(_closing(actor, retry_run(actor, args.run_id, **options)))
    return _report(result, json_output=args.json)


async def _closing(actor: Any, work: Any) -> Any:
    try:
        return await work
    finally:
        await actor.aclose()


def _report(result: Any, *, json_output: bool) -> int:
    from lowtide.bulk.results import exact_json

    if json_output:
        print(exact_json(result.as_json()))
    else:
        print(result.summary())
        reasons: dict[str, int] = {}
        for item in result.items:
            if not item.ok:
                why = item.reason or (f"{type(item.error).__name__}: {item.error}" if item.error else item.status)
                reasons[why] = reasons.get(why, 0) + 1
        for why, count in sorted(reasons.items(), key=lambda pair: -pair[1])[:10]:
            print(f"  {count} item(s): {why}")
        if result.to_retry:
            print(f"send the failed and expired items again with: lowtide retry {result.run_id}")
    return 0 if result.ok else 1


def status_of_run(ledger_path: Path | None, run_id: str, *, json_output: bool) -> int:
    from lowtide.bulk.results import exact_json
    from lowtide.bulk.status import run_status
    from lowtide.ledger.store import open_ledger

    report = run_status(open_ledger(ledger_path), run_id)
    print(exact_json(report.as_json(), indent=True) if json_output else "\n".join(report.lines()))
    return 0


def print_runs(ledger: Ledger, *, latest: int = 10) -> None:
    """One line for each of the latest bulk runs in the ledger (`lowtide status RUN` shows one in full)."""
    from lowtide.bulk.status import run_status
    from lowtide.ledger.runs import RunStore

    runs = RunStore(ledger).runs()
    for record in runs[-latest:]:
        report = run_status(ledger, record.id)
        counts = ", ".join(f"{n} {status}" for status, n in report.counts.items() if n)
        print(f"run {record.id} (actor {record.actor}): {report.items} item(s): {counts}; ${report.cost_usd:.6f}")
    if len(runs) > latest:
        print(f"({len(runs) - latest} older run(s) not shown)")
