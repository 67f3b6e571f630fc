"""The keyword that runs a `lowtide` command in the Robot process itself (`_in_process.py`), for the tests whose point
is what the command prints and the status it ends with, not its process: each saves an interpreter's start and
lowtide's and an SDK's imports, 1-4 s of CPU under coverage."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

from robot.api import logger
from robot.api.deco import keyword, library

from _in_process import lowtide_in_this_process

__all__ = ["InProcessLibrary"]


@dataclass(frozen=True)
class Result:
    """What Robot's `Run Process` returns, as far as the tests read it: the status, and each output without its last
    newline (as `Run Process` gives it)."""

    rc: int
    stdout: str
    stderr: str


@library(scope="GLOBAL", auto_keywords=False)
class InProcessLibrary:
    @keyword("Run Lowtide In This Process")
    def run_lowtide_in_this_process(self, *args: str, **named: str) -> Result:
        """`lowtide ARGS...` through `lowtide.cli.main` in this process, with this process's environment and each
        `env:NAME=VALUE` given (as `Run Process` takes them), in the folder `cwd=` names when given; logs and returns
        the status and outputs."""
        cwd = named.pop("cwd", None)
        env = dict(os.environ)
        for name, value in named.items():
            if not name.startswith("env:"):
                raise TypeError(f"Run Lowtide In This Process takes cwd= and env:NAME=, not {name}=")
            env[name[4:]] = value
        command = list(args)
        with contextlib.chdir(cwd) if cwd else contextlib.nullcontext():
            ran = lowtide_in_this_process(command, env)
        logger.info(f"lowtide {' '.join(command)}: rc {ran.code}\nstdout:\n{ran.stdout}\nstderr:\n{ran.stderr}")
        return Result(ran.code, _without_last_newline(ran.stdout), _without_last_newline(ran.stderr))


def _without_last_newline(text: str) -> str:
    return text[:-1] if text.endswith("\n") else text
