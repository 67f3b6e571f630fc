"""A run found in the ledger, sorted out a chunk of items at a time (`sort_items`): which items are final, out in a
batch or still to send, the keys of those on a later attempt, and what the run has spent.

The ledger's rows are read ten thousand items at a time, and only those a go needs afterwards are kept: an item
answered with nothing decided for it by the run (a plain success: most of a resumed run's) is kept as its index alone
when the go does not hold its results, since it is only counted, its line copied from the spool or made from the
ledger at the end; the store then gives such items as their indexes and costs alone (`RunLedger.items_apart`), no row
made for them. A resumed run of 300,000 items held a row for each, and the store's 300,000 rows at once besides.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from lowtide.bulk.planning.checks import STAND_IN_ID
from lowtide.bulk.recorded.items import ItemKeys, item_key
from lowtide.ledger.run_ledger import RunLedger
from lowtide.ledger.runs import ItemRow
from lowtide.ledger.store import RequestState

__all__ = ["SortedItems", "among", "sized_for", "sort_items", "stored_success"]

_CHUNK = 10_000


@dataclass
class SortedItems:
    """A run's items as the ledger has them (`Prepared` holds the same)."""

    keys: ItemKeys
    rows: list[ItemRow]
    """The rows kept: every row read, but the plain successes' when they are kept as `stored`."""
    finished: list[int]
    """Final items whose rows are kept."""
    stored: array[int]
    """Final items answered with nothing decided by the run, kept as their index alone (ascending)."""
    attach: list[int]
    to_send: array[int]
    """In input order (ascending)."""
    spent: Decimal


def sort_items(store: RunLedger, run_id: str, count: int, *, read: bool, rows_of_successes: bool) -> SortedItems:
    """Sort the `count` items of run `run_id` (`read` False: a run recorded just now, nothing of it final or out);
    `rows_of_successes`: keep the plain successes' rows too (a go that holds its results, a live run)."""
    retried: dict[int, str] = {}
    rows: list[ItemRow] = []
    finished: list[int] = []
    stored = array("q")
    attach: list[int] = []
    placed = bytearray(count)
    """1 for each item final or out: not to send."""
    spent = Decimal(0)
    for start in range(0, count if read else 0, _CHUNK):
        stop, answered = start + _CHUNK, list[int]()
        if rows_of_successes:
            chunk = store.items(run_id, with_jobs=False, start=start, stop=stop)
        else:  # the plain successes counted and placed, no row made for them: most of a resumed run's items
            apart = store.items_apart(run_id, start=start, stop=stop)
            spent += apart.answered_cost
            for index in apart.answered:
                placed[index] = 1
            answered, chunk = apart.answered, apart.rows
        later: list[int] = []
        for row in chunk:
            index, state = row.index, row.request_state
            if row.key != item_key(run_id, index, 1):
                retried[index] = row.key
            if row.cost_usd is not None:
                spent += row.cost_usd
            if state is not None and state.final:
                placed[index] = 1
                if not rows_of_successes and state is RequestState.SUCCEEDED and row.status is None:
                    later.append(index)  # (a plain success on a later attempt: its key is kept)
                    continue
                finished.append(index)
            elif state is not None and state is not RequestState.PENDING:
                # Pending: claimed, never in a batch (a run stopped in between). Sent again in the run's own groups.
                placed[index] = 1
                attach.append(index)
            rows.append(row)
        stored.extend(sorted(answered + later) if later else answered)
    # Kept as arrays of machine integers for the run's length: a million items are 8 MB, not 36.
    to_send = array("q", (index for index in range(count) if not placed[index]))
    keys = ItemKeys(run_id, count, retried)  # made when asked: only the keys of a later attempt (a retry) are kept
    return SortedItems(keys, rows, finished, stored, attach, to_send, spent)


def sized_for(
    sizes: Sequence[int], keys: Sequence[str], indexes: Sequence[int], custom_id: Callable[[str], str]
) -> array[int]:
    """Each job's size as a batch request, those of `indexes` (the jobs to send: no other size is asked for) with
    their own custom id in place of the stand-in they were measured with."""
    sized = array("q", sizes)
    stand_in = len(STAND_IN_ID)
    for index in indexes:
        sized[index] += len(custom_id(keys[index])) - stand_in
    return sized


def stored_success(row: ItemRow | None) -> bool:
    """Whether the ledger holds the item's answer, and the run decided nothing else for it: its line is the answer's,
    spooled (by this go or an earlier one) or made from the ledger."""
    return row is not None and row.request_state is RequestState.SUCCEEDED and row.status is None


def among(ascending: Sequence[int], index: int) -> bool:
    at = bisect_left(ascending, index)
    return at < len(ascending) and ascending[at] == index
