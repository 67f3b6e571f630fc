"""Commands and clients run in the Robot process itself, their outputs captured, for the tests whose point is what the
command does, not its process (no kill, no signal): each process saved is an interpreter's start-up and lowtide and a
provider's SDK imported again, 1-3 s of CPU under coverage."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from _processes import UNHANDLED
from lowtide.ledger.store import close_ledgers

__all__ = ["Ran", "in_this_process", "lowtide_in_this_process"]


@dataclass(frozen=True)
class Ran:
    """A command run in this process: its exit code, what it printed, its wall and CPU seconds."""

    code: int
    stdout: str
    stderr: str
    seconds: float
    cpu: float


def in_this_process(main: Callable[[], int], what: str, env: Mapping[str, str], *, loggers: Sequence[str] = ()) -> Ran:
    """`main()` with `env` for the environment while it runs (what a process of its own would be given), stdout and
    stderr captured, and the records of `loggers` written to its stderr (as a process's own logging setup would);
    then every ledger it opened closed, as at a process's exit, and the environment, the loggers' levels and handlers
    put back. Fails, as `Process.wait` does, on an asyncio
    error nobody handled."""
    out, err, saved = io.StringIO(), io.StringIO(), dict(os.environ)
    handler = logging.StreamHandler(err)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
    levels = {name: logging.getLogger(name).level for name in loggers}
    for name in loggers:
        logging.getLogger(name).addHandler(handler)
    started, cpu = time.monotonic(), time.process_time()
    os.environ.clear()
    os.environ.update(env)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main()
            finally:
                close_ledgers()  # what a process's exit does (`atexit`): its WAL checkpointed, `-wal`, `-shm` gone
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    finally:
        os.environ.clear()
        os.environ.update(saved)
        for name, level in levels.items():
            logging.getLogger(name).removeHandler(handler)
            logging.getLogger(name).setLevel(level)
    ran = Ran(code, out.getvalue(), err.getvalue(), time.monotonic() - started, time.process_time() - cpu)
    found = UNHANDLED.search(ran.stderr)
    if found:
        start = max(0, found.start() - 200)
        raise AssertionError(f"{what} reported an error nobody handled:\n{ran.stderr[start:][:3000]}")
    return ran


def lowtide_in_this_process(args: Sequence[str], env: Mapping[str, str]) -> Ran:
    """`lowtide ARGS...` in this process, through `lowtide.cli.main`: what the console script (`lowtide.__main__:run`)
    calls once its imports are done."""
    from lowtide.cli import main

    return in_this_process(lambda: main(list(args)), f"lowtide {' '.join(args)}", env)
