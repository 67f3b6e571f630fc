"""`lowtide dashboard`: a read-only web page over a ledger, on loopback unless told otherwise (then with a token)."""

from __future__ import annotations

import ipaddress
import logging
import os
import secrets
import threading
from typing import TYPE_CHECKING

import click

from lowtide.cli.params import HOST, PORT, SECONDS, json_option, ledger_option

if TYPE_CHECKING:
    from lowtide.dashboard.data import DashboardData

__all__ = ["COMMANDS", "TOKEN_ENV"]

TOKEN_ENV = "LOWTIDE_DASHBOARD_TOKEN"
SHORTEST_TOKEN = 16
"""The fewest characters a token given for a page listening beyond loopback may have: a shorter one is guessed by
trying (the one lowtide makes has 32)."""


@click.command(
    short_help="A read-only web page over the ledger: runs, batches, money, failures.",
    epilog="""\b
Examples:
  lowtide dashboard
  lowtide dashboard --ledger runs.sqlite3 --port 0
  LOWTIDE_DASHBOARD_TOKEN=... lowtide dashboard --host 0.0.0.0""",
)
@ledger_option
@click.option("--host", type=HOST, default="127.0.0.1", show_default=True, help="The interface to listen on.")
@click.option("--port", type=PORT, default=8790, show_default=True, help="The port to listen on; 0 picks a free one.")
@click.option(
    "--token",
    default=None,
    metavar="TOKEN",
    help=f"The token a browser must bring (the address printed carries it). Default: ${TOKEN_ENV}; beyond loopback"
    f" one is made and printed when none is given, and one given must have {SHORTEST_TOKEN} characters or more.",
)
@click.option(
    "--refresh",
    type=SECONDS,
    default=2.0,
    show_default=True,
    help="Seconds between the page's updates.",
)
@json_option
def dashboard(ledger: str | None, host: str, port: int, token: str | None, refresh: float, json_output: bool) -> int:
    """Serve a web page over the ledger: each run's progress, ETA, spend, worst case still out and cost limit; the
    batches, those waiting longest first, each one's cost beside the live price; spend and savings over time, by
    actor, model and provider; failures grouped by error, with the command that retries them; and any request's
    history, by key or custom id. The page updates itself while work goes on.

    It only reads: the ledger is never written (a read-only file will do), and no API key is ever shown (the ledger
    holds none). It listens on loopback; given another --host, it requires a token, printed in the address.
    """
    import json

    from lowtide.cli.ledger_commands import existing_ledger
    from lowtide.dashboard.app import build_app
    from lowtide.dashboard.data import DashboardData
    from lowtide.errors import ConfigurationError
    from lowtide.http.server import run_app

    if not refresh > 0:
        raise ConfigurationError("--refresh must be more than 0 seconds.", field="refresh")
    given = "--token" if token else f"${TOKEN_ENV}"
    token = token or os.environ.get(TOKEN_ENV) or None
    if token is None and not _loopback(host):
        token = secrets.token_urlsafe(24)
    elif token is not None and len(token) < SHORTEST_TOKEN and not _loopback(host):
        raise ConfigurationError(
            f"{given} has {len(token)} character(s): a dashboard listening beyond loopback ({host}) needs a token of at"
            f" least {SHORTEST_TOKEN}, or none (one is then made and printed).",
            field="token",
        )
    store = existing_ledger(ledger, read_only=True, never_write=True)
    # Counts are made in the background on a connection (or pool) of their own, so that pages are read meanwhile:
    # the process's one store for the ledger would serve both, one query at a time.
    counting = existing_ledger(ledger, read_only=True, never_write=True, own=True)
    try:
        data = DashboardData(store, counting=counting)
        app = build_app(data, token=token, refresh_seconds=refresh)
        threading.Thread(target=_warm, args=(data,), name="lowtide-dashboard-warm", daemon=True).start()
        suffix = f"/?token={token}" if token else "/"
        if json_output:
            click.echo(json.dumps({"event": "ledger", "location": store.location, "token_required": token is not None}))
        else:
            click.echo(f"lowtide dashboard over {store.location} (read-only)")
        return run_app(app, "lowtide dashboard", host=host, port=port, json_line=json_output, path=suffix)
    finally:
        counting.close()


def _warm(data: DashboardData) -> None:
    """Count the first pages while the server starts; a failure here is the first reader's to see, not a crash."""
    try:
        data.warm()
    except Exception as error:  # the page that asks next computes again and shows it
        logging.getLogger("lowtide.dashboard").warning("Could not count the ledger yet: %s", error)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


COMMANDS = [dashboard]
