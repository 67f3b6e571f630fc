"""`python -m lowtide.cli`: the `lowtide` command."""

from __future__ import annotations

import sys

from lowtide.cli import main

if __name__ == "__main__":  # pragma: no cover - run as a program, measured through the subprocess it runs in
    sys.exit(main())
