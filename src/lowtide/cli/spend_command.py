"""`lowtide spend`: the ledger's spend by day, team, project, actor and model (text, `--json` or `--csv`), and the
caps on teams and projects set or shown (`--set-cap team:NAME:day:USD`)."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation

import click

from lowtide.cli.ledger_commands import existing_ledger
from lowtide.cli.params import json_option, ledger_option
from lowtide.errors import ConfigurationError
from lowtide.ledger.spend_records import AuditRecord, CapPeriod, CapScope, SpendCap, SpendLine

__all__ = ["COMMANDS"]

_COLUMNS = ("day", "team", "project", "actor", "model", "requests", "spent_usd", "reserved_usd")


@click.command(
    short_help="Show spend by team, project, actor, model and day; set caps.",
    epilog="""\b
Examples:
  lowtide spend
  lowtide spend --since 2026-11-01 --csv > november.csv
  lowtide spend --set-cap team:research:day:50""",
)
@ledger_option
@click.option("--since", help="Only requests admitted on or after this day (YYYY-MM-DD, UTC).")
@click.option("--csv", "csv_output", is_flag=True, help="Print CSV, a line per day, team, project, actor and model.")
@click.option("--audit", "with_audit", is_flag=True, help="Show the audit too: each create, refusal, release, cancel.")
@click.option("--set-cap", "set_cap", help="Set a cap first: SCOPE:NAME:PERIOD:USD (team or project; day, month, all).")
@json_option
def spend(
    ledger: str | None, since: str | None, csv_output: bool, with_audit: bool, set_cap: str | None, json_output: bool
) -> int:
    """Spend by day, team, project, actor and model: what answers cost, and the worst cases still reserved for
    requests not answered yet; then the caps (and, with --audit, who created, was refused, released or cancelled
    what, oldest first)."""
    if with_audit and csv_output:
        raise ConfigurationError("--audit prints as text or --json; --csv is the spend lines alone.", field="audit")
    store = existing_ledger(ledger, read_only=set_cap is None)
    if set_cap is not None:
        store.spending.set_cap(_cap(set_cap))
    lines = store.spending.spend_lines(_since(since))
    caps = store.spending.caps()
    audit = store.spending.audit(_since(since)) if with_audit else []
    if json_output:
        from lowtide.bulk.outputs.results import exact_json

        shown: dict[str, object] = {
            "ledger": store.location,
            "spend": [_row(line) for line in lines],
            "caps": [
                {"scope": c.scope.value, "name": c.name, "period": c.period.value, "limit_usd": c.limit_usd}
                for c in caps
            ],
        }
        if with_audit:
            shown["audit"] = [_audit_row(record) for record in audit]
        click.echo(exact_json(shown, indent=True))
        return 0
    if csv_output:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(_COLUMNS)
        for line in lines:
            row = _row(line)
            writer.writerow([_cell(row[column]) for column in _COLUMNS])
        click.echo(out.getvalue(), nl=False)
        return 0
    click.echo(f"ledger {store.location}: {len(lines)} line(s)")
    for line in lines:
        click.echo(
            f"  {line.day}  team {line.team or '-'}  project {line.project or '-'}  {line.actor}  {line.model}:"
            f" {line.requests} request(s), ${line.spent_usd:.6f} spent, ${line.reserved_usd:.6f} reserved"
        )
    for cap in caps:
        click.echo(f"  cap: {cap.describe()}")
    for record in audit:
        row = _audit_row(record)
        worst = "" if record.worst_case_usd is None else f", worst case ${record.worst_case_usd:.6f}"
        click.echo(
            f"  audit {row['at']}  {record.action.value} {record.subject}  team {record.owner.team or '-'}"
            f"  project {record.owner.project or '-'}  {record.actor}{worst}  on {record.host}"
        )
    return 0


def _audit_row(record: AuditRecord) -> dict[str, object]:
    return {
        "at": datetime.fromtimestamp(record.at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "action": record.action.value,
        "subject": record.subject,
        "team": record.owner.team,
        "project": record.owner.project,
        "actor": record.actor,
        "worst_case_usd": record.worst_case_usd,
        "cap_left_usd": record.cap_left_usd,
        "host": record.host,
    }


def _row(line: SpendLine) -> dict[str, object]:
    return {
        "day": line.day,
        "team": line.team,
        "project": line.project,
        "actor": line.actor,
        "model": line.model,
        "requests": line.requests,
        "spent_usd": line.spent_usd,
        "reserved_usd": line.reserved_usd,
    }


def _cell(value: object) -> str:
    if value is None:
        return ""
    return f"{value:.6f}" if isinstance(value, Decimal) else str(value)


def _since(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC).timestamp()
    except ValueError:
        raise ConfigurationError(f"--since {text!r} is not a day: write YYYY-MM-DD.", field="since") from None


def _cap(text: str) -> SpendCap:
    parts = text.split(":")
    try:
        scope, name, period, usd = parts
        limit = Decimal(usd)
        cap = SpendCap(CapScope(scope), name, CapPeriod(period), limit)
    except (ValueError, InvalidOperation):
        raise ConfigurationError(
            f"--set-cap {text!r} is not SCOPE:NAME:PERIOD:USD (team or project; day, month or all; dollars).",
            field="set_cap",
        ) from None
    if not name or not limit.is_finite() or limit < 0:
        raise ConfigurationError(f"--set-cap {text!r}: a cap needs a name and a limit of 0 or more.", field="set_cap")
    return cap


COMMANDS = [spend]
