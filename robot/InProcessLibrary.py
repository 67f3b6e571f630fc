"""The keyword that runs a `lowtide` command in the Robot process itself (`_in_process.py`), for the tests whose point
is what the command prints and the status it ends with, not its process: each saves an interpreter's start and
lowtide's and an SDK's imports, 1-4 s of CPU under coverage."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from dataclasses import dataclass
from typing import Any

from robot.api import logger
from robot.api.deco import keyword, library

import live_client
from _in_process import in_this_process, lowtide_in_this_process

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

    @keyword("Run Live Client In This Process")
    def run_live_client_in_this_process(self, base_url: str, *args: str) -> dict[str, Any]:
        """`live_client.py BASE_URL ARGS...` (many live calls at once through one actor) in this process, with this
        process's environment; fails unless it ends with 0, and returns the JSON summary it prints last."""
        argv = sys.argv
        sys.argv = ["live_client.py", base_url, *args]
        try:
            ran = in_this_process(lambda: asyncio.run(live_client.main()) or 0, "live_client.py", dict(os.environ))
        finally:
            sys.argv = argv
        logger.info(f"live_client.py {base_url} {' '.join(args)}: rc {ran.code}\n{ran.stdout}\n{ran.stderr}")
        if ran.code != 0:
            raise AssertionError(f"live_client.py ended with {ran.code}:\n{ran.stderr}")
        summary: dict[str, Any] = json.loads(ran.stdout.strip().splitlines()[-1])
        return summary


def _without_last_newline(text: str) -> str:
    return text[:-1] if text.endswith("\n") else text
