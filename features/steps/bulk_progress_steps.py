"""Steps for bulk progress: the progress line, plain lines on a manual clock, the rich bar, and choosing a reporter."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import logging
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Protocol, TextIO, cast

from _support import names, world
from rich.console import Console
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.bulk import CallbackReporter, MultiReporter, PlainReporter, ProgressReporter, RichReporter, RunProgress
from lowtide.bulk.progress.reporters import reporter_for


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    bulk_progress: Scene


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_BASE = RunProgress(
    run_id="r1",
    items_total=0,
    items_done=0,
    succeeded=0,
    failed=0,
    canceled=0,
    not_run=0,
    batches_total=0,
    batches_done=0,
    batches_in_flight=0,
    cost_usd=Decimal(0),
    cost_limit_usd=None,
    elapsed_seconds=0.0,
)


class TerminalStream(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


class BareWriter:
    """A stream that can only write: no `isatty`, no `encoding`."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        self.parts.append(text)
        return len(text)

    def flush(self) -> None:
        pass


@dataclass
class Scene:
    """The run's progress, the reporter under test, and what came out of it."""

    progress: RunProgress = _BASE
    reporter: ProgressReporter | None = None
    stream: Any = None
    start: float = 0.0
    received: list[RunProgress] = field(default_factory=list[RunProgress])
    callback: Callable[[RunProgress], None] | None = None
    calls: int = 0
    log: list[logging.LogRecord] | None = None
    closed_output: str | None = None


def scene(context: Context) -> Scene:
    current = getattr(context, "bulk_progress", None)
    if not isinstance(current, Scene):
        current = Scene()
        context.bulk_progress = current
    return current


def _value(name: str, text: str) -> Any:
    kind = RunProgress.__dataclass_fields__[name].type
    if "Decimal" in str(kind):
        return Decimal(text) if text else None
    return float(text) if "float" in str(kind) else int(text)


def at_second(state: Scene, second: float) -> RunProgress:
    """The progress at `second` into the run: as many items done, each of them a success."""
    done = int(second)
    return dataclasses.replace(state.progress, items_done=done, succeeded=done, failed=0, elapsed_seconds=second)


def seconds_of(text: str) -> list[float]:
    return [float(part) for part in names(text.replace(" and ", ", "))]


def output(state: Scene) -> str:
    stream = state.stream
    if isinstance(stream, Console):
        return cast(io.StringIO, stream.file).getvalue()
    if isinstance(stream, BareWriter):
        return "".join(stream.parts)
    if isinstance(stream, io.TextIOWrapper):
        stream.flush()
        return cast(io.BytesIO, stream.buffer).getvalue().decode(stream.encoding)
    return cast(io.StringIO, stream).getvalue()


def screen(state: Scene) -> str:
    return _ANSI.sub("", output(state))


# -- the run's progress ----------------------------------------------------------------------------------------------


@given('a run "{run_id}" whose progress is:')
def step_progress(context: Context, run_id: str) -> None:
    state = scene(context)
    values = {row["field"]: _value(row["field"], row["value"]) for row in context.table}
    state.progress = dataclasses.replace(state.progress, run_id=run_id, **values)


@when("the run has done {done:d} of {total:d} items after {elapsed:g} seconds")
def step_done_after(context: Context, done: int, total: int, elapsed: float) -> None:
    state = scene(context)
    state.progress = dataclasses.replace(
        state.progress, items_done=done, items_total=total, succeeded=done, failed=0, elapsed_seconds=elapsed
    )


@when(
    "the batch run has done {done:d} of {total:d} items after {elapsed:g} seconds, {paced} seconds left by its batches"
)
def step_paced(context: Context, done: int, total: int, elapsed: float, paced: str) -> None:
    state = scene(context)
    state.progress = dataclasses.replace(
        state.progress, items_done=done, items_total=total, succeeded=done, failed=0, elapsed_seconds=elapsed,
        paced=True, paced_eta_seconds=None if paced == "None" else float(paced),
    )  # fmt: skip


@when("the run has spent ${spent} of a limit of {limit}")
def step_spent(context: Context, spent: str, limit: str) -> None:
    state = scene(context)
    ceiling = None if limit == "none" else Decimal(limit.removeprefix("$"))
    state.progress = dataclasses.replace(state.progress, cost_usd=Decimal(spent), cost_limit_usd=ceiling)


@then('the progress line is "{line}"')
def step_line_is(context: Context, line: str) -> None:
    actual = scene(context).progress.line()
    assert actual == line, f"the line is:\n{actual}"


@then('the progress line shows "{text}"')
def step_line_shows(context: Context, text: str) -> None:
    actual = scene(context).progress.line()
    assert f" · {text} · " in actual, f"the line is:\n{actual}"


@then('the progress says "{text}", and the seconds left are {seconds}')
def step_eta(context: Context, text: str, seconds: str) -> None:
    progress = scene(context).progress
    assert progress.line().endswith(f" · {text}"), f"the line is:\n{progress.line()}"
    eta = progress.eta_seconds
    if seconds == "None":
        assert eta is None, f"the ETA is {eta}"
    else:
        assert eta is not None, "the ETA is unknown"
        assert math.isclose(eta, float(seconds)), f"the ETA is {eta}"


# -- plain lines -----------------------------------------------------------------------------------------------------


@given("a plain progress reporter that prints at most every {interval:g} seconds, by the manual clock")
def step_plain_reporter(context: Context, interval: float) -> None:
    state = scene(context)
    clock = world(context).clock
    state.stream = io.StringIO()
    state.start = clock.now()
    state.reporter = PlainReporter(state.stream, interval=interval, clock=clock)


@given("a plain progress reporter on a stream encoded as {encoding}")
def step_plain_encoded(context: Context, encoding: str) -> None:
    state = scene(context)
    state.stream = io.TextIOWrapper(io.BytesIO(), encoding=encoding)
    state.start = world(context).clock.now()
    state.reporter = PlainReporter(state.stream, clock=world(context).clock)


@when("a plain progress reporter is made to print every {interval:g} seconds")
def step_plain_negative(context: Context, interval: float) -> None:
    world(context).attempt(lambda: PlainReporter(io.StringIO(), interval=interval))


def _reporter(state: Scene) -> ProgressReporter:
    assert state.reporter is not None, "no reporter was made"
    return state.reporter


def _move_to(context: Context, second: float) -> None:
    state = scene(context)
    clock = world(context).clock
    clock.advance(state.start + second - clock.now())


@when("the run reports its progress at the seconds {seconds}")
def step_report_at(context: Context, seconds: str) -> None:
    state = scene(context)
    for second in seconds_of(seconds):
        _move_to(context, second)
        _reporter(state).update(at_second(state, second))


@when("the run ends at second {second:g}")
def step_end_at(context: Context, second: float) -> None:
    state = scene(context)
    _move_to(context, second)
    _reporter(state).close(at_second(state, second))


@when("the run ends at second {second:g}, with nothing new since second {last:g}")
def step_end_unchanged(context: Context, second: float, last: float) -> None:
    state = scene(context)
    _move_to(context, second)
    _reporter(state).close(dataclasses.replace(at_second(state, last), elapsed_seconds=second))


@then("the reporter printed the lines of the seconds {seconds}")
def step_printed_lines(context: Context, seconds: str) -> None:
    state = scene(context)
    expected = [at_second(state, second).line() for second in seconds_of(seconds)]
    actual = output(state).splitlines()
    assert actual == expected, "the lines printed are:\n" + "\n".join(actual)


@then('the reporter printed "{line}"')
def step_printed(context: Context, line: str) -> None:
    actual = output(scene(context))
    assert actual == line + "\n", f"the reporter printed:\n{actual}"


# -- the rich bar ----------------------------------------------------------------------------------------------------


@given("a rich progress reporter on a terminal {width:d} columns wide")
def step_rich_terminal(context: Context, width: int) -> None:
    state = scene(context)
    state.stream = Console(file=io.StringIO(), force_terminal=True, width=width)
    state.reporter = RichReporter(state.stream)


@given("a rich progress reporter on a console that is not a terminal")
def step_rich_file(context: Context) -> None:
    state = scene(context)
    state.stream = Console(file=io.StringIO(), force_terminal=False, width=160)
    state.reporter = RichReporter(state.stream)


@when("the run reports its progress")
def step_report(context: Context) -> None:
    state = scene(context)
    _reporter(state).update(state.progress)


@when("the run is closed")
def step_close(context: Context) -> None:
    state = scene(context)
    _reporter(state).close(state.progress)


@when("the run is closed twice, then reports its progress again")
def step_close_then_report(context: Context) -> None:
    state = scene(context)
    _reporter(state).close(state.progress)
    _reporter(state).close(dataclasses.replace(state.progress, items_done=2))
    state.closed_output = output(state)
    _reporter(state).update(dataclasses.replace(state.progress, items_done=1))


@then('the terminal shows "{first}", "{second}" and "{third}"')
def step_terminal_shows_three(context: Context, first: str, second: str, third: str) -> None:
    shown = screen(scene(context))
    for text in (first, second, third):
        assert text in shown, f"{text!r} is not on the terminal:\n{shown}"


@then('the terminal shows "{text}"')
@then('the console shows "{text}"')
def step_terminal_shows(context: Context, text: str) -> None:
    shown = screen(scene(context))
    assert text in shown, f"{text!r} is not on the terminal:\n{shown}"


@then('the terminal never showed the count "{count}"')
def step_terminal_never(context: Context, count: str) -> None:
    shown = screen(scene(context))
    assert not re.search(rf"(?<!\d){re.escape(count)}", shown), f"{count!r} was on the terminal:\n{shown}"


@then("the terminal's last frame is the finished run")
def step_last_frame(context: Context) -> None:
    state = scene(context)
    assert output(state) == state.closed_output, "the terminal changed after the run was closed"
    last = screen(state).rsplit("run r1", 1)[-1]
    assert "5000/5000 items · done in 5m00s" in last, f"the last frame is:\n{last}"
    assert "5000 ok, 0 failed, 0 expired, 0 canceled, 0 not run" in last, f"the last frame is:\n{last}"


@then("the console shows nothing")
def step_console_empty(context: Context) -> None:
    shown = output(scene(context))
    assert shown == "", f"the console shows:\n{shown}"


# -- choosing a reporter ---------------------------------------------------------------------------------------------


def _stream(kind: str) -> Any:
    match kind:
        case "a file":
            return io.StringIO()
        case "a terminal":
            return TerminalStream()
        case "a closed stream":
            closed = io.StringIO()
            closed.close()
            return closed
        case "a bare writer":
            return BareWriter()
        case _:
            raise AssertionError(f"no stream {kind!r}")


def _choose(context: Context, mode: str, rest: str, interval: float = 30.0) -> None:
    state = scene(context)
    callback: Callable[[RunProgress], None] | None = None
    if rest.endswith(", with a callback"):
        callback = state.received.append
    elif rest.endswith(", with that callback"):
        callback = state.callback
    state.stream = _stream(rest.split(", with ")[0])
    state.reporter = world(context).attempt(
        lambda: reporter_for(
            cast(Any, mode), cast(TextIO, state.stream), interval, world(context).clock, on_progress=callback
        )
    )


@when('a reporter is chosen for the mode "{mode:Q}" on {rest}')
def step_choose(context: Context, mode: str, rest: str) -> None:
    _choose(context, mode, rest)


@when('a reporter is chosen for the mode "{mode:Q}" every {interval:g} seconds on {rest}')
def step_choose_every(context: Context, mode: str, interval: float, rest: str) -> None:
    _choose(context, mode, rest, interval)


@when('a reporter is chosen for the mode "{mode:Q}" with no stream, and the run reports its progress')
def step_choose_default_stream(context: Context, mode: str) -> None:
    state = scene(context)
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        reporter = reporter_for(cast(Any, mode), clock=world(context).clock)
        reporter.update(state.progress)
    state.stream = err
    assert out.getvalue() == "", f"standard output holds:\n{out.getvalue()}"


@then("the reporter is {kinds}")
def step_reporter_is(context: Context, kinds: str) -> None:
    world(context).succeeded()
    reporter = _reporter(scene(context))
    parts = reporter.reporters if isinstance(reporter, MultiReporter) else (reporter,)
    actual = " and ".join(type(part).__name__ for part in parts)
    assert actual == kinds, f"the reporter is {actual}"


@when("the run reports its progress, then ends")
def step_report_and_end(context: Context) -> None:
    state = scene(context)
    _reporter(state).update(state.progress)
    _reporter(state).close(state.progress)


@when("the run reports its progress {times:d} times, then ends")
def step_report_times(context: Context, times: int) -> None:
    state = scene(context)
    for _ in range(times):
        _reporter(state).update(state.progress)
    _reporter(state).close(state.progress)


@then("the file holds the progress line once, without terminal codes")
def step_file_once(context: Context) -> None:
    state = scene(context)
    text = output(state)
    assert text == state.progress.line() + "\n", f"the file holds:\n{text!r}"


@then("standard error holds the progress line and standard output nothing")
def step_stderr(context: Context) -> None:
    state = scene(context)
    assert output(state) == state.progress.line() + "\n", f"standard error holds:\n{output(state)}"


@then("the file is empty")
def step_file_empty(context: Context) -> None:
    assert output(scene(context)) == "", "the file is not empty"


@then("the file holds {count:d} progress lines")
def step_file_lines(context: Context, count: int) -> None:
    state = scene(context)
    assert output(state).splitlines() == [state.progress.line()] * count, f"the file holds:\n{output(state)}"


# -- callbacks -------------------------------------------------------------------------------------------------------


@given("a callback that raises every time")
def step_raising_callback(context: Context) -> None:
    state = scene(context)

    def callback(progress: RunProgress) -> None:
        state.calls += 1
        raise RuntimeError(f"the dashboard is down (update {state.calls})")

    state.callback = callback
    state.log = world(context).keep_log("lowtide.bulk.progress.reporters", logging.WARNING)


@then('the callback got {count:d} snapshots of the run "{run_id}"')
def step_callback_got(context: Context, count: int, run_id: str) -> None:
    received = scene(context).received
    assert len(received) == count, f"the callback got {len(received)} snapshots"
    assert all(progress.run_id == run_id for progress in received), f"the snapshots are {received}"


@then("the callback was called {calls:d} times and failed {failures:d} times")
def step_callback_failures(context: Context, calls: int, failures: int) -> None:
    state = scene(context)
    reporter = _reporter(state)
    assert isinstance(reporter, MultiReporter), f"the reporter is a {type(reporter).__name__}"
    [callbacks] = [part for part in reporter.reporters if isinstance(part, CallbackReporter)]
    assert (state.calls, callbacks.failures) == (calls, failures), f"{state.calls} calls, {callbacks.failures} failed"


@then("one warning was logged, saying the callback raised and the run goes on")
def step_logged_once(context: Context) -> None:
    log = scene(context).log
    assert log is not None, "nothing was listening to the log"
    assert len(log) == 1, f"{len(log)} warnings were logged"
    [record] = log
    message = record.getMessage()
    assert record.levelno == logging.WARNING, f"the record is at level {record.levelname}"
    assert "The progress callback" in message, f"the warning says {message!r}"
    assert "the run goes on" in message, f"the warning says {message!r}"
    assert record.exc_info is not None, "the warning has no traceback"
    assert "dashboard is down (update 1)" in str(record.exc_info[1]), f"the warning is about {record.exc_info[1]}"
