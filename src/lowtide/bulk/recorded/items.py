"""A run's items as the ledger knows them: each one's request key (`item_key`; `ItemKeys`, a run's keys made when asked
instead of held), and the rows a new run is recorded with (`NewItems`, made a chunk at a time as a store writes them),
so that a run of a million items holds neither a million keys nor a million rows."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import overload

from lowtide.ledger.runs import NewItem

__all__ = ["ItemKeys", "NewItems", "item_key"]


def item_key(run_id: str, index: int, attempt: int) -> str:
    """The request key of item `index`'s `attempt`."""
    return f"{run_id}-{index}" if attempt == 1 else f"{run_id}-{index}-a{attempt}"


class ItemKeys(Sequence[str]):
    """The request key of each of a run's `count` items: its first attempt's (`item_key`), made when asked, but where
    `other` names another (an item on a later attempt: a retry)."""

    __slots__ = ("_other", "_size", "run_id")

    def __init__(self, run_id: str, count: int, other: Mapping[int, str] | None = None) -> None:
        self.run_id = run_id
        self._size = count
        self._other = dict(other or {})

    def __len__(self) -> int:
        return self._size

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[at] for at in range(*index.indices(self._size))]
        if index < 0:
            index += self._size
        if not 0 <= index < self._size:
            raise IndexError(index)
        other = self._other.get(index)
        return other if other is not None else f"{self.run_id}-{index}"


class NewItems(Sequence[NewItem]):
    """The rows a new run's items are recorded with, each made when the store takes it: item `index` is its job's JSON
    (`jobs_json`), its own id (`id_of`) and its first attempt's key."""

    __slots__ = ("_id_of", "_jobs_json", "run_id")

    def __init__(self, run_id: str, jobs_json: Sequence[str], id_of: Callable[[int], str | None]) -> None:
        self.run_id = run_id
        self._jobs_json = jobs_json
        self._id_of = id_of

    def __len__(self) -> int:
        return len(self._jobs_json)

    @overload
    def __getitem__(self, index: int) -> NewItem: ...

    @overload
    def __getitem__(self, index: slice) -> list[NewItem]: ...

    def __getitem__(self, index: int | slice) -> NewItem | list[NewItem]:
        if isinstance(index, slice):
            return [self[at] for at in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        return NewItem(index, self._id_of(index), self._jobs_json[index], item_key(self.run_id, index, 1))
