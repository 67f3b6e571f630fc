"""Named points where a test can make this process die with SIGKILL, to prove that nothing is lost or paid twice.

Set `LOWTIDE_CRASHPOINT` to a stage (`before-intent`: a group's requests claimed, their batch's intent not yet
written; `after-intent`, `during-create`, `after-create`, `while-polling`,
`while-streaming`, `after-results`: every result stored, the batch not yet said collected; or `after-step-<step>`:
once a create step a backend records, such as its uploaded input file, is in the ledger; a durable agent's
`agent-after-step`, once a step's result is journaled, and `agent-replayed-step`, as a replay returns a journaled
step's result); `during-create:0.3` dies
0.3 s after the create request was sent; `before-intent#4` dies the fourth time the stage is reached (a bulk run's
fourth group, sent once a batch settled frees its place). Unset, these are no-ops.
"""

from __future__ import annotations

import asyncio
import os
import signal

__all__ = ["CRASHPOINT_ENV", "STAGES", "crash_during", "crashpoint"]

CRASHPOINT_ENV = "LOWTIDE_CRASHPOINT"
STAGES = (
    "before-intent",
    "after-intent",
    "during-create",
    "after-create",
    "while-polling",
    "while-streaming",
    "after-results",
)


_reached: dict[str, int] = {}
"""How many times each stage named with a count (`stage#n`) was reached in this process."""


def _wanted(stage: str) -> float | None:
    """The delay to die after if `LOWTIDE_CRASHPOINT` names `stage` (at this, its n-th, time), else None."""
    named, _, delay = os.environ.get(CRASHPOINT_ENV, "").partition(":")
    wanted, _, count = named.partition("#")
    if wanted != stage:
        return None
    if count:
        _reached[stage] = seen = _reached.get(stage, 0) + 1
        if seen != int(count):
            return None
    return float(delay or 0.0)


def _die() -> None:  # pragma: no cover - the process ends here; the Robot crash suites observe it
    os.kill(os.getpid(), signal.SIGKILL)


def crashpoint(stage: str) -> None:
    """Die now if `LOWTIDE_CRASHPOINT` names `stage`."""
    if _wanted(stage) is not None:  # pragma: no cover - see _die
        _die()


def crash_during(stage: str) -> asyncio.TimerHandle | None:
    """Arrange to die after the configured delay if `LOWTIDE_CRASHPOINT` names `stage` (for in-flight calls)."""
    delay = _wanted(stage)
    if delay is None:
        return None
    return asyncio.get_running_loop().call_later(delay, _die)  # pragma: no cover - see _die
