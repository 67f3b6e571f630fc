"""What the `lowtide` command says besides its output: log lines and warnings on stderr, one line each, at the
level `-v`, `-q`, `--log-level` or `$LOWTIDE_LOG_LEVEL` set; tracebacks only at debug level."""

from __future__ import annotations

import logging
import os
import sys
import warnings
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from types import TracebackType
from typing import TextIO

from lowtide.errors import ConfigurationError, ModelDeprecationWarning

__all__ = ["LEVELS", "LOG_LEVEL_ENV", "Verbosity"]

LOG_LEVEL_ENV = "LOWTIDE_LOG_LEVEL"
LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


class _OneLine(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        text = f"lowtide: {record.levelname.lower()}: {record.getMessage()}"
        if record.levelno <= logging.DEBUG:
            text = f"lowtide: {record.levelname.lower()} [{record.name}]: {record.getMessage()}"
            if record.exc_info:
                text += "\n" + self.formatException(record.exc_info)
        return text


class _CommandHandler(logging.StreamHandler[TextIO]):
    """The handler the command puts on lowtide's logger (and replaces, when run again in one process)."""


@dataclass
class Verbosity:
    """The command's level: warnings and errors by default; `-v` adds progress of the machinery (info), `-vv` or
    `--debug` everything, with tracebacks; `-q` only errors (no warnings, no progress display)."""

    level: int = logging.WARNING
    quiet: bool = False

    @classmethod
    def from_environment(cls) -> Verbosity:
        """The level `$LOWTIDE_LOG_LEVEL` names (warning when it is unset or empty); a name that is no level is a
        `ConfigurationError` listing those there are."""
        named = os.environ.get(LOG_LEVEL_ENV, "").strip().lower()
        if named and named not in LEVELS:
            raise ConfigurationError(
                f"${LOG_LEVEL_ENV} is {named!r}, which is not a log level; use one of {', '.join(LEVELS)}.",
                field="log_level",
            )
        return cls(level=LEVELS.get(named, logging.WARNING))

    @property
    def tracebacks(self) -> bool:
        return self.level <= logging.DEBUG

    def louder(self, steps: int) -> None:
        if steps:
            self.level = min(self.level, logging.INFO if steps == 1 else logging.DEBUG)

    def quieter(self) -> None:
        self.quiet = True
        self.level = max(self.level, logging.ERROR)

    def apply(self) -> None:
        """Set lowtide's logger to this level (inside `applied`, when an option changes it)."""
        logging.getLogger("lowtide").setLevel(self.level)
        if self.quiet:
            warnings.simplefilter("ignore")

    @contextmanager
    def applied(self, stream: TextIO | None = None) -> Generator[None]:
        """While the command runs: lowtide's log records at this level on stderr, one line each, Python warnings the
        same way; everything as it was afterwards (the command may run inside another program, or a test)."""
        logger = logging.getLogger("lowtide")
        handler = _CommandHandler(stream or sys.stderr)
        handler.setFormatter(_OneLine())
        level, propagate = logger.level, logger.propagate
        with warnings.catch_warnings():
            warnings.showwarning = _one_line_warning
            # Said once already, as a log record at warning level (which -q hides like any other).
            warnings.filterwarnings("ignore", category=ModelDeprecationWarning)
            logger.addHandler(handler)
            logger.propagate = False
            try:
                self.apply()
                yield
            finally:
                logger.removeHandler(handler)
                logger.setLevel(level)
                logger.propagate = propagate

    def uncaught(self, error: BaseException) -> None:
        """At debug level, the traceback of an error the command is about to report in one line."""
        if self.tracebacks:
            tb: TracebackType | None = error.__traceback__
            logging.getLogger("lowtide.cli").debug("traceback", exc_info=(type(error), error, tb))


def _one_line_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    print(f"lowtide: warning: {message}", file=file or sys.stderr)
