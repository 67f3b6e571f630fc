"""The `lowtide` command: `lowtide demo` runs the main job on the embedded emulator, `lowtide emulator` serves the
offline Anthropic API on a socket."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from lowtide._version import __version__

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lowtide", description=__doc__)
    parser.add_argument("--version", action="version", version=f"lowtide {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    from lowtide.emulator import server

    emulator = commands.add_parser("emulator", help="serve the offline Anthropic API on a socket")
    server.add_arguments(emulator)
    emulator.set_defaults(handler=server.run_from_args)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":  # pragma: no cover - exercised through the console script
    sys.exit(main())
