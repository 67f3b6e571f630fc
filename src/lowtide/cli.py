"""The `lowtide` command: `lowtide demo` runs the main job on the embedded emulator, `lowtide emulator` serves the
offline Anthropic API on a socket."""

from __future__ import annotations

import argparse
import asyncio
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

    from lowtide.emulator import server

    demo = commands.add_parser("demo", help="run the main job on the in-process emulator (no key, no network)")
    demo.add_argument("--config", type=Path, default=None, help="an actors file to use instead of the bundled one")
    demo.add_argument(
        "--processing-seconds", type=float, default=1.0, help="how long each emulated batch stays in progress"
    )
    demo.set_defaults(handler=_demo)

    emulator = commands.add_parser("emulator", help="serve the offline Anthropic API on a socket")
    server.add_arguments(emulator)
    emulator.set_defaults(handler=server.run_from_args)
    return parser


def _demo(args: argparse.Namespace) -> int:
    from lowtide.demo import run_demo

    failures = asyncio.run(run_demo(sys.stdout, config=args.config, processing_seconds=args.processing_seconds))
    return 1 if failures else 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except ActorError as exc:
        print(f"lowtide: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover - exercised through the console script
    sys.exit(main())
