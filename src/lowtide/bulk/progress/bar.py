"""The rich progress bar `RichReporter` draws, in a module of its own: rich (about 2.5 MiB and 60 modules) is
imported when a bar is first drawn, not by every program that imports lowtide."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console, RenderableType
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.text import Text

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["RunBar"]


class RunBar(Progress):
    """A rich progress bar with a second line holding the counts, batches and cost, which would crowd the bar."""

    def __init__(self, console: Console) -> None:
        super().__init__(
            TextColumn("run {task.fields[run_id]}", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("items · {task.fields[eta]}", markup=False),
            console=console,
            auto_refresh=False,
            # Swapping sys.stdout under the caller's program is a surprise a library should not spring.
            redirect_stdout=False,
            redirect_stderr=False,
        )

    def get_renderables(self) -> Iterable[RenderableType]:
        yield self.make_tasks_table(self.tasks)
        for task in self.tasks:
            yield Text(str(task.fields.get("details", "")), style="dim")
