"""`lowtide ledger copy`: a ledger moved to another store (a SQLite file into a PostgreSQL database shared by many
hosts, say), everything it holds included."""

from __future__ import annotations

import click

from lowtide.cli.params import json_option

__all__ = ["COMMANDS"]

_SAID = (("requests", "request(s)"), ("batches", "batch(es)"), ("results", "result(s)"), ("runs", "run(s)"))


@click.group(short_help="Work on a ledger as a whole.")
def ledger() -> None:
    """Work on a ledger as a whole: move it to another store, or rebuild a lost or damaged one from the APIs."""


@ledger.command(
    short_help="Copy a ledger, answers included, into a new one.",
    epilog="""\b
Examples:
  lowtide ledger copy ~/.local/state/lowtide/ledger.sqlite3 postgresql://lowtide@db.internal/lowtide
  lowtide ledger copy postgresql://lowtide@db.internal/lowtide backup.sqlite3""",
)
@click.argument("source")
@click.argument("target")
@json_option
def copy(source: str, target: str, json_output: bool) -> int:
    """Copy everything the ledger SOURCE holds (requests, batches, answers, bulk runs, live quotas) into TARGET.

    Each is a SQLite file or a PostgreSQL database's postgresql:// URL. TARGET must hold nothing yet: a copy never
    overwrites a ledger, and never writes to SOURCE (a SQLite file an older lowtide wrote is read through a private
    copy brought up to date). It is written in one transaction, so a copy that fails leaves it empty. Stop the programs
    using SOURCE first: what they write during the copy may be missed, and the copy and SOURCE must not both go on
    with the work in flight. TARGET keeps an identity of its own: the requests copied keep their custom ids, and new
    ones carry TARGET's.
    """
    from lowtide.cli.ledger_commands import existing_ledger
    from lowtide.errors import ConfigurationError
    from lowtide.ledger.copy import copy_ledger
    from lowtide.ledger.store import ledger_location, open_ledger

    location = ledger_location(source, source="SOURCE")
    missing = location.kind.missing(location.target)
    if missing is not None:
        raise ConfigurationError(f"There is no ledger at {missing} to copy.", field="ledger")
    given = existing_ledger(source, unchanged=True, source="SOURCE")
    try:
        into = open_ledger(ledger_location(target, source="TARGET"))
        counts = copy_ledger(given, into)
    finally:
        given.close()
    if json_output:
        from lowtide.bulk.outputs.results import exact_json

        click.echo(exact_json({"source": given.location, "target": into.location, "rows": counts}, indent=True))
    else:
        said = ", ".join(f"{counts.get(table, 0)} {words}" for table, words in _SAID)
        if counts.get("agent_runs"):  # said only where there are any: most ledgers hold none
            said += f", {counts['agent_runs']} agent run(s)"
        if counts.get("spend_entries") or counts.get("spend_caps"):  # likewise spend by owner
            said += f", {counts.get('spend_entries', 0)} spend entr(ies), {counts.get('spend_caps', 0)} cap(s)"
        if counts.get("notice_outbox"):  # `batch.notify`'s notices, delivered or still to send, under their ids
            said += f", {counts['notice_outbox']} notice(s)"
        click.echo(f"Copied {said} from {given.location} to {into.location}.")
    return 0


def _add_rebuild() -> None:
    from lowtide.cli.rebuild_command import rebuild

    ledger.add_command(rebuild)


_add_rebuild()

COMMANDS = [ledger]
