"""A Robot listener: the wall and CPU seconds of each top-level suite's `robot` process, into the folder
`LOWTIDE_SUITE_TIMES` names (features/support/clock.py; nox's robot session attaches it when that is set)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[2] / "features" / "support"))

from clock import Clock

ROBOT_LISTENER_API_VERSION = 3
_CLOCK = Clock("robot")


def end_suite(data: Any, result: Any) -> None:
    """A suite of one file: pabot gives each its own process, so the process's seconds so far are the file's."""
    if data.source is not None and Path(data.source).is_file():
        _CLOCK.stop(Path(data.source).name, process=True)
