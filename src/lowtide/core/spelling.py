"""How a setting is named in a message: as a Python argument (`items_per_batch`, `name='planner'`) to a program,
as a flag (`--items-per-batch`, `--name planner`) to someone at the `lowtide` command.

The command runs inside `command_line()`; everything else reads as Python. A message names a setting through
`argument`, never by spelling it out, so that one message reads right in both places.
"""

from __future__ import annotations

import shlex
from collections.abc import Generator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["argument", "command_line"]

_ON_COMMAND_LINE: ContextVar[bool] = ContextVar("lowtide_on_command_line", default=False)


def argument(field: str, value: str | None = None) -> str:
    """`field` as the user gives it, with `value` when given: `run_id` or `run_id='x'` from Python, `--run-id` or
    `--run-id x` on the command line."""
    if _ON_COMMAND_LINE.get():
        flag = "--" + field.replace("_", "-")
        return flag if value is None else f"{flag} {shlex.quote(value)}"
    return field if value is None else f"{field}={value!r}"


@contextmanager
def command_line() -> Generator[None]:
    """Messages raised inside name settings as the `lowtide` command's flags."""
    token = _ON_COMMAND_LINE.set(True)
    try:
        yield
    finally:
        _ON_COMMAND_LINE.reset(token)
