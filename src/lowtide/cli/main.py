"""The `lowtide` command: the root group, its shared options, and `main`, which turns every error a user can
cause into one line on stderr and an exit status.

Exit status: 0 when everything asked for was done; 1 when the command ran but not everything succeeded (items
failed, expired, were canceled or not run; a batch to cancel had already ended); 2 for a usage, configuration or
environment error, said at once (nothing was sent: a malformed base URL, an API key holding whitespace, an unknown
ledger scheme or log level); 3 when the provider's API refused or failed a call (a bad key, a connection that could
not be made after a few seconds of retries, a server error: what was sent is in the ledger, and the same command
resumes it); 130 when interrupted (Ctrl-C: likewise), 143 when terminated (SIGTERM), likewise.

SIGTERM is turned into an exception, as Ctrl-C is, so that the program ends through its ordinary exit: the ledger is
closed (`atexit`), its WAL checkpointed and its `-wal` and `-shm` files removed. A live run's own handlers, installed
while it goes, drain it first (`bulk.interrupts`).
"""

from __future__ import annotations

import difflib
import functools
import shlex
import signal
import sys
import threading
from collections.abc import Generator, Sequence
from contextlib import contextmanager
from types import FrameType
from typing import Any

import click

from lowtide._version import __version__
from lowtide.cli.logs import LEVELS, LOG_LEVEL_ENV, Verbosity
from lowtide.core.spelling import command_line
from lowtide.errors import ActorError, APIError

__all__ = ["EXIT_CODES", "cli", "main", "verbosity_options"]

EXIT_CODES = """\b
Exit status:
  0    everything asked for was done
  1    not everything succeeded: items failed, expired, were canceled or not run; nothing left to cancel
  2    a usage, configuration or environment error (a malformed base URL, a key holding whitespace, ...):
       said at once, nothing was sent
  3    the provider's API refused or failed a call (key, connection, server): what was sent is in the
       ledger; run the same command again to resume
  130  interrupted (143: terminated): what was sent is in the ledger; run the same command again to resume"""

_CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 110}


def _verbosity(ctx: click.Context) -> Verbosity:
    found = ctx.find_object(Verbosity)
    if found is None:  # the command's group was invoked without `main` (click's own test runner, say)
        found = ctx.ensure_object(Verbosity)
    return found


def _louder(ctx: click.Context, param: click.Parameter, value: int) -> None:
    if value:
        verbosity = _verbosity(ctx)
        verbosity.louder(value)
        verbosity.apply()


def _quieter(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        verbosity = _verbosity(ctx)
        verbosity.quieter()
        verbosity.apply()


def _level(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value:
        verbosity = _verbosity(ctx)
        verbosity.level = LEVELS[value.lower()]
        verbosity.apply()


def _debug(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        _level(ctx, param, "debug")


def verbosity_options(function: Any) -> Any:
    """`-v`, `-q`, `--log-level` and `--debug`, taken before or after the command's name alike."""
    options = [
        click.option(
            "-v", "--verbose", count=True, expose_value=False, callback=_louder, help="Say more (-vv: everything)."
        ),
        click.option(
            "-q", "--quiet", is_flag=True, expose_value=False, callback=_quieter, help="Only errors: no warnings."
        ),
        click.option(
            "--log-level",
            type=click.Choice(list(LEVELS), case_sensitive=False),
            expose_value=False,
            callback=_level,
            help=f"The log level on stderr (default: ${LOG_LEVEL_ENV}, else warning).",
        ),
        click.option(
            "--debug", is_flag=True, expose_value=False, callback=_debug, help="Log everything; tracebacks for errors."
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return function


class _Commands(click.Group):
    """lowtide's commands, with the name most likely meant when one is misspelt."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as exc:
            close = difflib.get_close_matches(args[0], self.list_commands(ctx), n=1) if args else []
            if close and "No such command" in exc.message:
                raise click.UsageError(f"{exc.message.rstrip('.')}. Did you mean {close[0]!r}?", ctx) from None
            raise


@click.group(cls=_Commands, context_settings=_CONTEXT, epilog=EXIT_CODES)
@click.version_option(__version__, "-V", "--version", prog_name="lowtide", message="%(prog)s %(version)s")
@verbosity_options
def cli() -> None:
    """Run model calls through provider batch APIs: half the price, durable, resumable.

    \b
    Start here:
      lowtide demo                         the main job on the built-in emulator (no key, no network)
      lowtide run inputs.jsonl --actor actor.yaml --out results.jsonl
      lowtide status                       what the ledger holds

    Every command takes -h for its own help and examples.
    """


def _register() -> None:
    from lowtide.cli import (
        agents_command,
        bulk_commands,
        copy_command,
        dashboard_command,
        ledger_commands,
        other_commands,
        serve_command,
        spend_command,
    )

    for group in (
        other_commands,
        ledger_commands,
        copy_command,
        bulk_commands,
        serve_command,
        dashboard_command,
        agents_command,
        spend_command,
    ):
        for command in group.COMMANDS:
            cli.add_command(verbosity_options(command))


_register()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `lowtide` command with `argv` (default: the process's arguments) and return its exit status."""
    given = list(sys.argv[1:] if argv is None else argv)
    try:
        verbosity = Verbosity.from_environment()
    except ActorError as exc:
        return _say(str(exc), 2)
    with command_line(), verbosity.applied(), _terminate_as_exception() as terminated:
        try:
            status = cli.main(given, prog_name="lowtide", standalone_mode=False, obj=verbosity)
        except click.exceptions.NoArgsIsHelpError as exc:
            exc.show()
            return exc.exit_code
        except click.ClickException as exc:
            return _usage_error(exc)
        except click.exceptions.Abort:  # click's word for Ctrl-C (or SIGTERM in a loop), once it has ended the line
            return _interrupted(given, first="", status=128 + signal.SIGTERM if terminated else 130)
        except KeyboardInterrupt:  # Ctrl-C, or SIGTERM inside an event loop (`_terminate_as_exception`)
            return _interrupted(given, first="\n", status=128 + signal.SIGTERM if terminated else 130)
        except Terminated:
            return _interrupted(given, first="\n", status=128 + signal.SIGTERM)
        except APIError as exc:
            verbosity.uncaught(exc)
            return _say(str(exc), 3)
        except ActorError as exc:
            verbosity.uncaught(exc)
            return _say(str(exc), 2)
        except OSError as exc:
            verbosity.uncaught(exc)
            where = f" {exc.filename}" if exc.filename else ""
            return _say(f"cannot use{where}: {exc.strerror or exc}.", 2)
        except Exception as exc:
            # An error of a ledger store's own that its kind can say (a SQLite file whose pages are damaged), else a
            # crash, shown as one.
            from lowtide.ledger.kinds import ledger_registry

            said = ledger_registry().failure(exc)
            if said is None:
                raise
            verbosity.uncaught(exc)
            return _say(said, 2)
    return int(status or 0)


def _say(message: str, status: int) -> int:
    print(f"lowtide: {message}", file=sys.stderr)
    return status


def _usage_error(exc: click.ClickException) -> int:
    ctx = getattr(exc, "ctx", None)
    where = f" (see '{ctx.command_path} --help')" if isinstance(ctx, click.Context) else ""
    return _say(f"{exc.format_message()}{where}", exc.exit_code)


class Terminated(SystemExit):
    """SIGTERM arrived: raised where the program is, so that it ends through its ordinary exit (a `SystemExit`,
    which asyncio lets through from any task, as it does KeyboardInterrupt)."""


@contextmanager
def _terminate_as_exception() -> Generator[list[int]]:
    """While the command runs, SIGTERM ends it through its ordinary exit (the default handler would end the process
    at once, skipping `atexit`: the ledger would stay open, its `-wal` and `-shm` files behind). Yields the signals
    that came.

    Inside `asyncio.run`, SIGTERM does what Ctrl-C does there: the runner cancels its main task, which unwinds
    through every `finally` and ends as `KeyboardInterrupt`. Raised from the handler instead, in the middle of
    whatever task runs (an HTTP request half sent), the exception could leave coroutines to be collected
    mid-flight, and their errors printed. Elsewhere it raises `Terminated`."""
    terminated: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield terminated
        return

    def terminate(signum: int, frame: FrameType | None) -> None:
        terminated.append(signum)
        interrupt = signal.getsignal(signal.SIGINT)
        if isinstance(interrupt, functools.partial) and getattr(interrupt.func, "__name__", "") == "_on_sigint":
            interrupt(signal.SIGINT, frame)  # asyncio's runner: cancels its main task (a second time, raises)
            return
        raise Terminated(128 + signum)

    # Whatever handled SIGTERM before (the default, or a tool's such as coverage's, which saves its data and dies)
    # is put back after: ending through the ordinary exit runs every `atexit` hook, theirs included.
    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield terminated
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def _interrupted(given: list[str], *, first: str, status: int = 130) -> int:
    again = shlex.join(["lowtide", *given])
    print(
        f"{first}lowtide: interrupted. Nothing is lost: what was sent is recorded in the ledger, and batches already"
        f" created keep running at the API. Run the same command again to resume without paying twice:\n  {again}",
        file=sys.stderr,
    )
    return status
