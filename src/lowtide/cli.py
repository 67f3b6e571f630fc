"""The `lowtide` command: `lowtide demo` runs the main job on the embedded emulator, `lowtide run` runs a file of
inputs through batches, `lowtide status|collect|cancel|retry` work from the ledger, and `lowtide emulator` serves
the offline Anthropic API on a socket."""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path

from lowtide._version import __version__
from lowtide.errors import ActorError

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lowtide", description=__doc__)
    parser.add_argument("--version", action="version", version=f"lowtide {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    from lowtide.bulk import command as bulk_command
    from lowtide.emulator import server

    demo = commands.add_parser("demo", help="run the main job on the in-process emulator (no key, no network)")
    demo.add_argument("--config", type=Path, default=None, help="an actors file to use instead of the bundled one")
    demo.add_argument(
        "--processing-seconds",
        type=server.seconds_argument,
        default=1.0,
        help="how long each emulated batch stays in progress",
    )
    demo.add_argument(
        "--bulk-items", type=_count, default=200, help="reviews in the demo's bulk run (0 to skip it; default 200)"
    )
    demo.set_defaults(handler=_demo)

    status = commands.add_parser("status", help="show tickets, batches, states and costs from the ledger (or a run)")
    status.add_argument("run", nargs="?", metavar="RUN", help="show this bulk run instead")
    _ledger_argument(status)
    status.add_argument("--actor", help="only this actor's requests")
    status.add_argument("--json", action="store_true", help="print JSON instead of text")
    status.set_defaults(handler=_status)

    collect = commands.add_parser("collect", help="fetch the results of ended batches into the ledger")
    _ledger_argument(collect)
    collect.add_argument("batch", nargs="*", help="batch ids (default: every outstanding batch)")
    _api_key_argument(collect)
    collect.set_defaults(handler=_collect)

    cancel = commands.add_parser("cancel", help="cancel an outstanding batch, by batch id or request key")
    _ledger_argument(cancel)
    cancel.add_argument("target", help="a batch id (lowtide's or the API's) or a request key")
    _api_key_argument(cancel)
    cancel.set_defaults(handler=_cancel)

    bulk_command.add_commands(commands, ledger_argument=_ledger_argument)

    emulator = commands.add_parser("emulator", help="serve the offline Anthropic API on a socket")
    server.add_arguments(emulator)
    emulator.set_defaults(handler=server.run_from_args)
    return parser


def _count(value: str) -> int:
    try:
        count = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None
    if count < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {count}")
    return count


def _demo(args: argparse.Namespace) -> int:
    from lowtide.demo import run_demo

    failures = asyncio.run(
        run_demo(sys.stdout, config=args.config, processing_seconds=args.processing_seconds, bulk_items=args.bulk_items)
    )
    return 1 if failures else 0


def _ledger_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ledger", type=Path, default=None, help="ledger file (default: $LOWTIDE_LEDGER or the state directory)"
    )


def _api_key_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--api-key-env", default="ANTHROPIC_API_KEY", help="environment variable holding the key")


def _status(args: argparse.Namespace) -> int:
    from lowtide.ledger.store import open_ledger
    from lowtide.parking import status

    if args.run is not None:
        from lowtide.bulk.command import status_of_run

        return status_of_run(args.ledger, args.run, json_output=args.json)
    report = status(open_ledger(args.ledger), actor=args.actor)
    if args.json:
        print(json.dumps(report.as_json(), indent=2, default=str))
        return 0
    print(f"{len(report.batches)} batch(es), {len(report.tickets)} request(s)")
    for batch in report.batches:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(batch.counts.items()) if v)
        print(
            f"  {batch.batch_id or batch.id:<40} {batch.state:<17} {batch.requests:>6} req  {counts:<40}"
            f" ${batch.cost_usd:.6f} (live ${batch.live_cost_usd:.6f})"
        )
    for ticket in report.tickets:
        print(f"  {ticket.key:<40} {ticket.state:<17} batch {ticket.batch_id or '-'}  attempts {ticket.attempts}")
    for line in report.actors:
        states = ", ".join(f"{k} {v}" for k, v in sorted(line.states.items()))
        print(
            f"actor {line.actor}: {line.requests} request(s) ({states}); ${line.cost_usd:.6f} at batch prices,"
            f" ${line.live_cost_usd:.6f} live"
        )
    print(f"total: ${report.cost_usd:.6f} at batch prices; the same calls live: ${report.live_cost_usd:.6f}")
    from lowtide.bulk.command import print_runs

    print_runs(open_ledger(args.ledger))
    return 0


def _collect(args: argparse.Namespace) -> int:
    from lowtide.ledger.store import open_ledger
    from lowtide.parking import collect

    batches = asyncio.run(collect(open_ledger(args.ledger), batch_ids=args.batch or None, api_key_env=args.api_key_env))
    for batch in batches:
        print(f"{batch.batch_id or batch.id} {batch.state}")
    return 0


def _cancel(args: argparse.Namespace) -> int:
    from lowtide.ledger.store import open_ledger
    from lowtide.parking import cancel

    batch = asyncio.run(cancel(open_ledger(args.ledger), args.target, api_key_env=args.api_key_env))
    print(f"{batch.batch_id} cancellation requested ({batch.state})")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(given)
    try:
        return int(args.handler(args))
    except ActorError as exc:
        print(f"lowtide: {exc}", file=sys.stderr)
        return 2
    except sqlite3.DatabaseError as exc:
        # Damage found while reading (a ledger whose pages are corrupt opens, then fails on the rows it reads).
        print(
            f"lowtide: the ledger is damaged ({exc}); move it aside and start a new one (what it held can be"
            " recovered with `sqlite3 FILE .recover`).",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt:
        again = shlex.join(["lowtide", *given])
        print(
            f"\nlowtide: interrupted. Nothing is lost: what was sent is recorded in the ledger, and batches already"
            f" created keep running at the API. Run the same command again to resume without paying twice:\n  {again}",
            file=sys.stderr,
        )
        return 130


if __name__ == "__main__":  # pragma: no cover - exercised through the console script
    sys.exit(main())
