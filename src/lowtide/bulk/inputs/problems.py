"""What is wrong with a bulk input: `InputProblem`s, raised together as one `InputError` (gathered per input by
`parser.Problems`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lowtide.errors import ConfigurationError

__all__ = ["MAX_PROBLEMS_SHOWN", "InputError", "InputProblem"]

MAX_PROBLEMS_SHOWN = 5
"""How many problems an `InputError` spells out; the rest are counted."""


@dataclass(frozen=True)
class InputProblem:
    """One thing wrong with a bulk input: where (`label` and `line`, when known) and what to do about it."""

    line: int | None
    message: str
    label: str = "line"

    def __str__(self) -> str:
        return self.message if self.line is None else f"{self.label} {self.line}: {self.message}"


class InputError(ConfigurationError):
    """Raised when a bulk input (a JSONL or CSV file, a job's file, a list of jobs) cannot be run as it is.

    Raised before anything is sent. `source` names the input; `problems` holds the first few problems found
    (`MAX_PROBLEMS_SHOWN`), each with its 1-based line (a CSV's header is line 1), and `total` counts them all.
    """

    def __init__(self, source: str | Path, problems: Sequence[InputProblem], *, total: int | None = None) -> None:
        self.source = str(source)
        self.problems = tuple(problems)
        self.total = max(total or 0, len(self.problems))
        super().__init__(self._message())

    def _message(self) -> str:
        if self.total == 1:
            only = self.problems[0]
            where = "" if only.line is None else f", {only.label} {only.line}"
            return f"{self.source}{where}: {only.message}"
        listing = "".join(f"\n  {problem}" for problem in self.problems)
        hidden = self.total - len(self.problems)
        more = f"\n  ... and {hidden} more" if hidden else ""
        return f"{self.source}: {self.total} problems, nothing was sent:{listing}{more}"
