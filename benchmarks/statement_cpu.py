"""The PostgreSQL server's CPU by statement, as the server itself counts it.

With `log_statement_stats = on` the server logs, after each statement, its backend's user and system CPU time for
that statement (`QUERY STATISTICS`, then the statement). Summed by statement, that says where the server's CPU went,
which `pg_stat_statements` does not: its execution time is wall time, and for a statement streaming from its client
(`COPY ... FROM STDIN`) counts the client's time too. The logging itself costs the server a little: a run measured so
is for the table, not for its server CPU figure.

    cluster.sql("ALTER SYSTEM SET log_statement_stats = on"); cluster.sql("SELECT pg_reload_conf()")
    start = log.stat().st_size
    ...                                     # the statements
    print(*statement_table(by_statement(read_from(log, start))), sep="\\n")
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

__all__ = ["StatementCpu", "by_statement", "read_from", "statement_table"]

_ENTRY = re.compile(r"\n(?=\d{4}-\d\d-\d\d )")
"""Where each of the server's log entries starts (its `log_line_prefix` begins with the time)."""
_USAGE = re.compile(r"!\s+([\d.]+) s user, ([\d.]+) s system, [\d.]+ s elapsed")


@dataclass(frozen=True)
class StatementCpu:
    statement: str
    """The statement's text, its white space collapsed, cut to 70 characters."""
    seconds: float
    entries: int
    """How many of its statistics entries were summed (a statement run by the extended protocol may log more than
    one a run)."""


def read_from(log: Path, start: int) -> str:
    """The server log's text from byte `start` on (what the statements since then wrote)."""
    with log.open("rb") as file:
        file.seek(start)
        return file.read().decode("utf-8", "replace")


def by_statement(text: str) -> list[StatementCpu]:
    """Each statement's CPU time summed over its runs, the most first: every `system usage stats` entry is counted
    to the `STATEMENT` entry that follows it."""
    seconds: Counter[str] = Counter()
    entries: Counter[str] = Counter()
    spent: float | None = None
    for entry in _ENTRY.split(text):
        usage = _USAGE.search(entry) if "system usage stats" in entry else None
        if usage is not None:
            spent = float(usage.group(1)) + float(usage.group(2))
        elif "STATEMENT:" in entry and spent is not None:
            statement = " ".join(entry.split("STATEMENT:", 1)[1].split())[:70]
            seconds[statement] += spent
            entries[statement] += 1
            spent = None
    return [StatementCpu(statement, total, entries[statement]) for statement, total in seconds.most_common()]


def statement_table(found: list[StatementCpu], *, top: int = 8) -> list[str]:
    """The `top` statements as a Markdown table, and the sum of all."""
    lines = ["| statement | server CPU | entries |", "|---|---:|---:|"]
    lines += [f"| `{s.statement}` | {s.seconds:.3f} s | {s.entries} |" for s in found[:top]]
    lines.append(f"| every statement | {sum(s.seconds for s in found):.3f} s | {sum(s.entries for s in found)} |")
    return lines
