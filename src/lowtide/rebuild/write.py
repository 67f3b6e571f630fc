"""Writing a rebuilt ledger: the ledger it goes into checked (a new one, or one holding nothing; never another
ledger's), then every row in one transaction of the store's, which takes the lost ledger's identity in the same
transaction (`LedgerStore.load(identity=...)`), so that the rerun's claims make the custom ids the lost ledger's made.
The same on every store: each loads a copy's rows already."""

from __future__ import annotations

from collections.abc import Sequence

from lowtide.errors import ConfigurationError
from lowtide.ledger.roles import Copies
from lowtide.rebuild.plan import Plan

__all__ = ["check_target", "held", "record"]

_HELD = ("requests", "batches")


def held(ledger: Copies) -> dict[str, int]:
    """How many requests and batches `ledger` holds (read a chunk at a time)."""
    return {table: sum(len(chunk) for chunk in ledger.export_rows(table)) for table in _HELD}


def check_target(ledger: Copies, identity: str) -> None:
    """A rebuild goes into a ledger that holds no request nor batch: a `ConfigurationError` saying so, and what to do,
    for one that holds any (another ledger's, whose identity differs: said so; or one rebuilt or used already)."""
    counts = held(ledger)
    if not any(counts.values()):
        return
    holds = f"{counts['requests']} request(s) and {counts['batches']} batch(es)"
    own = ledger.identity()
    if own != identity:
        raise ConfigurationError(
            f"The ledger {ledger.location} has identity {own} and holds {holds}, but the batches to rebuild carry"
            f" identity {identity}: it is another ledger, and a ledger has one identity. Rebuild into a new ledger"
            " (--ledger with a new file or an empty database) and point your programs at it; the requests of"
            f" {ledger.location} stay there. Nothing was written.",
            field="ledger",
        )
    raise ConfigurationError(
        f"The ledger {ledger.location} holds {holds} of identity {identity} already (rebuilt before, or in use): a"
        " rebuild writes into a ledger that holds nothing, a new one or the damaged one (which it moves aside)."
        " Nothing was written.",
        field="ledger",
    )


def record(plan: Plan, ledger: Copies) -> dict[str, int]:
    """Write the plan's rows into `ledger` (checked first), which takes the plan's identity; how many rows of each
    table. One transaction of the store's: a rebuild that fails leaves the ledger as it was."""
    check_target(ledger, plan.identity)
    tables = plan.rebuilt.tables
    order: Sequence[str] = ("batches", "requests", "batch_members", "results")
    return ledger.load(((table, [tables[table]]) for table in order), identity=plan.identity)
