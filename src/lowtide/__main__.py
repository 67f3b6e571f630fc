"""`python -m lowtide` and the `lowtide` console script: the command, a Ctrl-C while it is still starting included."""

from __future__ import annotations

import sys


def run() -> int:
    """Run the `lowtide` command and return its exit status. The command's modules are imported here, inside the
    guard: a Ctrl-C while they load (the first half second) ends the process with status 130 and one line, as it does
    once the command runs, not with a traceback of the imports."""
    try:
        from lowtide.cli import main

        return main()
    except KeyboardInterrupt:
        print("\nlowtide: interrupted while starting; nothing was sent.", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover - run as a program, measured through the subprocess it runs in
    sys.exit(run())
