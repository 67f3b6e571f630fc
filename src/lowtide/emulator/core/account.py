"""Emulations over one backend that keeps the exactly-once evidence (`created_custom_ids`, `created_batches`):
`AccountEmulation` gives those counters and the reset; `SectionedEmulation` adds the stats and the state file section
every such API names after itself."""

from __future__ import annotations

from abc import abstractmethod
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any, Generic, Protocol, TypeVar

from lowtide.emulator.core.emulation import Emulation, Shared

__all__ = ["AccountEmulation", "BatchAccount", "SectionedEmulation"]


class BatchAccount(Protocol):
    """What an emulated account's backend keeps: one count per custom id of every batch created, the batches
    created, and a way to forget it all in place."""

    @property
    def created_custom_ids(self) -> Counter[str]: ...

    @property
    def created_batches(self) -> int: ...

    def reset(self) -> None: ...


B = TypeVar("B", bound=BatchAccount)


class AccountEmulation(Emulation, Generic[B]):
    """An emulation whose account is its `backend`: its exactly-once evidence, forgotten with it on reset."""

    def __init__(self, shared: Shared, backend: B) -> None:
        super().__init__(shared)
        self.backend = backend

    @property
    def created_custom_ids(self) -> Counter[str]:
        return self.backend.created_custom_ids

    @property
    def created_batches(self) -> int:
        return self.backend.created_batches

    def reset(self) -> None:
        self.backend.reset()


class SectionedEmulation(AccountEmulation[B]):
    """An account whose stats are `<name>_batches`, `<name>_created_batches` and `<name>_created_custom_ids`, and
    whose state file section is `<name>`, written by `encode` (None: nothing to keep) and read back by `decode`.
    Subclasses say how many batches (jobs) it holds."""

    def __init__(
        self,
        shared: Shared,
        backend: B,
        *,
        encode: Callable[[B], str | None],
        decode: Callable[[B, Any], None],
    ) -> None:
        super().__init__(shared, backend)
        self._encode = encode
        self._decode = decode

    @abstractmethod
    def batch_count(self) -> int:
        """The batches (jobs) the account holds now."""

    def stats(self) -> Mapping[str, object]:
        return {
            f"{self.name}_batches": self.batch_count(),
            f"{self.name}_created_batches": self.backend.created_batches,
            f"{self.name}_created_custom_ids": dict(self.backend.created_custom_ids),
        }

    def saved(self) -> Mapping[str, str]:
        section = self._encode(self.backend)
        return {self.name: section} if section is not None else {}

    def restore(self, document: Mapping[str, Any]) -> None:
        section = document.get(self.name)
        if section is not None:
            self._decode(self.backend, section)
