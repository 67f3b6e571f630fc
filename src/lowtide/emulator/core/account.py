"""Emulations over one backend that keeps the exactly-once evidence (`created_custom_ids`, `created_batches`):
`AccountEmulation` gives those counters and the reset; `SectionedEmulation` adds the stats and the state file section
every such API names after itself. `AccountBackend` is such a backend's start: the shared state, the counters, the
largest file."""

from __future__ import annotations

from abc import abstractmethod
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from lowtide.emulator.core.emulation import Emulation, Shared

__all__ = ["AccountBackend", "AccountEmulation", "BatchAccount", "SectionedEmulation"]


class BatchAccount(Protocol):
    """What an emulated account's backend keeps: one count per custom id of every batch created, the batches
    created, and a way to forget it all in place."""

    @property
    def created_custom_ids(self) -> Counter[str]: ...

    @property
    def created_batches(self) -> int: ...

    def reset(self) -> None: ...


B = TypeVar("B", bound=BatchAccount)


class AccountBackend:
    """A backend on the emulator's `Shared` state (its clock, settings, faults) keeping the exactly-once evidence:
    `created_custom_ids` (one per custom id of every batch created) and `created_batches`."""

    largest_file: ClassVar[int]
    """The API's largest file in bytes, unless the settings' `max_file_bytes` lowers it."""

    def __init__(self, shared: Shared) -> None:
        self._shared = shared
        self.created_custom_ids: Counter[str] = Counter()
        self.created_batches = 0

    @property
    def max_file_bytes(self) -> int:
        return self._shared.settings.max_file_bytes or self.largest_file

    def now(self) -> float:
        return self._shared.clock.now()

    def reset(self) -> None:
        # In place, so that tests holding `created_custom_ids` keep seeing the live object.
        self.created_custom_ids.clear()
        self.created_batches = 0


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
