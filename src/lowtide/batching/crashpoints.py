"""Named points where a test can make this process die with SIGKILL, to prove that nothing is lost or paid twice.

Set `LOWTIDE_CRASHPOINT` to a stage (`after-intent`, `during-create`, `after-create`, `while-polling`,
`while-streaming`, `after-results`: every result stored, the batch not yet said collected; or `after-step-<step>`:
once a create step a backend records, such as its uploaded input file, is in the ledger; a durable agent's
`agent-after-step`, once a step's result is journaled, and `agent-replayed-step`, as a replay returns a journaled
step's result); `during-create:0.3` dies
0.3 s after the create request was sent. Unset, these are no-ops.
"""

from __future__ import annotations

import asyncio
import os
import signal

__all__ = ["CRASHPOINT_ENV", "STAGES", "crash_during", "crashpoint"]

CRASHPOINT_ENV = "LOWTIDE_CRASHPOINT"
STAGES = ("after-intent", "during-create", "after-create", "while-polling", "while-streaming", "after-results")


def _wanted() -> tuple[str, float]:
    stage, _, delay = os.environ.get(CRASHPOINT_ENV, "").partition(":")
    return stage, float(delay or 0.0)


def _die() -> None:  # pragma: no cover - the process ends here; the Robot crash suites observe it
    os.kill(os.getpid(), signal.SIGKILL)


def crashpoint(stage: str) -> None:
    """Die now if `LOWTIDE_CRASHPOINT` names `stage`."""
    if _wanted()[0] == stage:  # pragma: no cover - see _die
        _die()


def crash_during(stage: str) -> asyncio.TimerHandle | None:
    """Arrange to die after the configured delay if `LOWTIDE_CRASHPOINT` names `stage` (for in-flight calls)."""
    wanted, delay = _wanted()
    if wanted != stage:
        return None
    return asyncio.get_running_loop().call_later(delay, _die)  # pragma: no cover - see _die
