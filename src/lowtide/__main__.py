"""`python -m lowtide`: the `lowtide` command, for environments whose scripts are not on the PATH."""

from __future__ import annotations

import sys

from lowtide.cli import main

if __name__ == "__main__":  # pragma: no cover - run as a program, measured through the subprocess it runs in
    sys.exit(main())
