"""The ways to show where a bulk run stands (`RunProgress`, from `lowtide.core.run_reports`): a live rich bar, plain
lines, a callback.

A run can take hours (batches end within 24 hours), so the display must be cheap, honest about what is unknown
(no ETA until something has finished) and safe: a user's callback that raises is logged, never fatal.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal, Protocol, TextIO, get_args

from lowtide.core.clock import Clock, SystemClock
from lowtide.core.run_reports import PROGRESS_SEPARATOR, RunProgress, format_duration
from lowtide.errors import ConfigurationError

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import TaskID

__all__ = [
    "CallbackReporter",
    "MultiReporter",
    "NullReporter",
    "PlainReporter",
    "ProgressCallback",
    "ProgressReporter",
    "ReporterMode",
    "RichReporter",
    "RunProgress",
    "format_duration",
    "reporter_for",
]

logger = logging.getLogger(__name__)

_SEPARATOR = PROGRESS_SEPARATOR
_ASCII_SEPARATOR = " | "


ProgressCallback = Callable[[RunProgress], None]


class ProgressReporter(Protocol):
    """Shows a run's progress: `update` as the run goes, `close` once at its end with the final snapshot."""

    def update(self, progress: RunProgress) -> None: ...

    def close(self, progress: RunProgress) -> None: ...


class NullReporter:
    """Shows nothing (`progress="none"` without a callback)."""

    def update(self, progress: RunProgress) -> None:
        pass

    def close(self, progress: RunProgress) -> None:
        pass


class RichReporter:
    """A live progress bar on a terminal, drawn by rich, refreshed on each update (no thread of its own)."""

    def __init__(self, console: Console | None = None) -> None:
        from rich.console import Console  # rich is imported when a bar is drawn, not with lowtide

        from lowtide.bulk.progress.bar import RunBar

        self.console = console if console is not None else Console(stderr=True)
        self._bar = RunBar(self.console)
        self._task: TaskID | None = None
        self._closed = False

    def update(self, progress: RunProgress) -> None:
        if self._closed:
            return
        run_id, eta = progress.run_id, progress.eta_text()
        details = _SEPARATOR.join([progress.counts_text(), progress.batches_text(), progress.cost_text()])
        fields: dict[str, Any] = {"run_id": run_id, "eta": eta, "details": details}
        if self._task is None:
            # The task exists before the display starts, so that the first frame shows this snapshot.
            self._task = self._bar.add_task(run_id, total=progress.items_total, completed=progress.items_done, **fields)
            self._bar.start()
            return
        self._bar.update(self._task, total=progress.items_total, completed=progress.items_done, **fields)
        self._bar.refresh()

    def close(self, progress: RunProgress) -> None:
        if self._closed:
            return
        self.update(progress)
        self._closed = True
        self._bar.stop()


class PlainReporter:
    """One line of progress at most every `interval` seconds (the first at once), and a final line, unless the line
    printed last already said the same (the time taken aside).

    For logs, CI and anything else that is not a terminal: nothing is redrawn, so the output reads top to bottom.
    """

    def __init__(self, stream: TextIO, *, interval: float = 30.0, clock: Clock | None = None) -> None:
        if interval < 0:
            raise ConfigurationError(f"The progress interval must be 0 seconds or more, not {interval:g}.")
        self.stream = stream
        self.interval = interval
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._last: float | None = None
        self._printed: RunProgress | None = None
        self._separator = _separator_for(stream)

    def update(self, progress: RunProgress) -> None:
        now = self._clock.now()
        if self._last is not None and now - self._last < self.interval:
            return
        self._last = now
        self._write(progress)

    def close(self, progress: RunProgress) -> None:
        # The run's last update is usually its final state already: a second line saying it again is noise.
        if self._printed is None or replace(self._printed, elapsed_seconds=0) != replace(progress, elapsed_seconds=0):
            self._write(progress)

    def _write(self, progress: RunProgress) -> None:
        self.stream.write(progress.line(self._separator) + "\n")
        self.stream.flush()
        self._printed = progress


def _separator_for(stream: TextIO) -> str:
    """The middle-dot separator, unless the stream's encoding cannot write it (an ASCII console, say)."""
    encoding = getattr(stream, "encoding", None)
    if not isinstance(encoding, str):
        return _SEPARATOR
    try:
        _SEPARATOR.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return _ASCII_SEPARATOR
    return _SEPARATOR


class CallbackReporter:
    """Hands every snapshot to `callback`. A callback that raises does not stop the run: the first failure is
    logged with its traceback, later ones are only counted (`failures`), and the callback keeps being called.
    """

    def __init__(self, callback: ProgressCallback) -> None:
        self.callback = callback
        self.failures = 0

    def update(self, progress: RunProgress) -> None:
        self._call(progress)

    def close(self, progress: RunProgress) -> None:
        self._call(progress)

    def _call(self, progress: RunProgress) -> None:
        try:
            self.callback(progress)
        except Exception:
            self.failures += 1
            if self.failures == 1:
                logger.warning(
                    "The progress callback %r raised; the run goes on, and later failures of it are not logged.",
                    self.callback,
                    exc_info=True,
                )


class MultiReporter:
    """Passes every snapshot to each of `reporters`, in order: a display and a callback, say."""

    def __init__(self, reporters: Sequence[ProgressReporter]) -> None:
        self.reporters = tuple(reporters)

    def update(self, progress: RunProgress) -> None:
        for reporter in self.reporters:
            reporter.update(progress)

    def close(self, progress: RunProgress) -> None:
        for reporter in self.reporters:
            reporter.close(progress)


ReporterMode = Literal["auto", "rich", "plain", "none"]


def reporter_for(
    mode: ReporterMode = "auto",
    stream: TextIO | None = None,
    interval: float = 30.0,
    clock: Clock | None = None,
    on_progress: ProgressCallback | None = None,
) -> ProgressReporter:
    """The reporter for a run: `auto` draws a rich bar on a terminal and prints plain lines anywhere else.

    `stream` defaults to standard error, so that standard output stays free for results. `on_progress`, when given,
    is called with every snapshot as well, whatever the mode.
    """
    if mode not in get_args(ReporterMode):
        raise ConfigurationError(
            f"Unknown progress mode {mode!r}; use one of {', '.join(get_args(ReporterMode))}.", field="progress"
        )
    out = stream if stream is not None else sys.stderr
    if mode == "auto":
        mode = "rich" if _is_terminal(out) else "plain"
    reporters: list[ProgressReporter] = []
    if mode == "rich":
        from rich.console import Console

        reporters.append(RichReporter(Console(file=out)))
    elif mode == "plain":
        reporters.append(PlainReporter(out, interval=interval, clock=clock))
    if on_progress is not None:
        reporters.append(CallbackReporter(on_progress))
    if not reporters:
        return NullReporter()
    return reporters[0] if len(reporters) == 1 else MultiReporter(reporters)


def _is_terminal(stream: TextIO) -> bool:
    """Whether a live bar can be drawn on `stream`: a terminal, and not one that says it cannot move the cursor."""
    try:
        interactive = stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False
    return interactive and os.environ.get("TERM", "") != "dumb"
