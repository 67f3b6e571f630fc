"""The values the `lowtide` command takes, checked as it parses them (a clear line and exit 2, never a traceback),
and the options several commands share."""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any, TypeVar

import click

__all__ = ["COUNT", "HOST", "LEDGER", "PORT", "SECONDS", "USD", "api_key_env_option", "json_option", "ledger_option"]

F = TypeVar("F", bound=Callable[..., Any])


class _Count(click.ParamType[int]):
    name = "count"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            count = int(str(value))
        except ValueError:
            self.fail(f"not a whole number: {value!r}", param, ctx)
        if count < 0:
            self.fail(f"must be 0 or more, not {count}", param, ctx)
        return count


class _Port(click.ParamType[int]):
    name = "port"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            port = int(str(value))
        except ValueError:
            self.fail(f"not a port number: {value!r}", param, ctx)
        if not 0 <= port <= 65535:
            self.fail(f"a port is from 0 to 65535 (0 picks a free one), not {port}", param, ctx)
        return port


class _Host(click.ParamType[str]):
    """An interface to listen on: an address or a host name, not blank (uvicorn took "" as every interface, and the
    address printed for it, `http://:8790/`, led nowhere)."""

    name = "host"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        host = str(value).strip()
        if not host or any(c.isspace() for c in host) or "/" in host:
            self.fail(
                f"not an interface to listen on: {value!r} (127.0.0.1 for this machine alone, 0.0.0.0 for every"
                " interface)",
                param,
                ctx,
            )
        return host


class _Seconds(click.ParamType[float]):
    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, float):
            return value
        try:
            seconds = float(str(value))
        except ValueError:
            self.fail(f"not a number of seconds: {value!r}", param, ctx)
        if not math.isfinite(seconds) or seconds < 0:
            self.fail(f"must be 0 seconds or more, not {value}", param, ctx)
        return seconds


class _Usd(click.ParamType[Decimal]):
    name = "usd"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Decimal:
        if isinstance(value, Decimal):
            return value
        try:
            amount = Decimal(str(value))
        except InvalidOperation:
            self.fail(f"not an amount of dollars: {value!r}", param, ctx)
        if not amount.is_finite() or amount <= 0:
            self.fail(f"must be more than 0: {value!r}", param, ctx)
        return amount


class _Ledger(click.ParamType[str]):
    """A ledger location, read as every ledger setting is (`ledger.location.ledger_location`)."""

    name = "ledger"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from lowtide.ledger.location import ledger_problem, redacted

        problem = ledger_problem(str(value))
        if problem is not None:
            self.fail(f"{redacted(str(value))!r} {problem}", param, ctx)
        return str(value)


COUNT = _Count()
HOST = _Host()
LEDGER = _Ledger()
PORT = _Port()
SECONDS = _Seconds()
USD = _Usd()


def ledger_option(function: F) -> F:
    return click.option(
        "--ledger",
        type=LEDGER,
        default=None,
        help="The ledger: a SQLite file (a path, or sqlite:///absolute/path, sqlite:relative/path), or a PostgreSQL"
        " database's postgresql:// URL. Default: $LOWTIDE_LEDGER, else ~/.local/state/lowtide/ledger.sqlite3.",
    )(function)


def json_option(function: F) -> F:
    return click.option("--json", "json_output", is_flag=True, help="Print JSON instead of text.")(function)


def api_key_env_option(function: F) -> F:
    return click.option(
        "--api-key-env",
        metavar="NAME",
        default=None,
        help="The environment variable holding the API key. Default: the provider's own variable.",
    )(function)
