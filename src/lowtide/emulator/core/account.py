"""`AccountEmulation`: an emulation over one backend that keeps the exactly-once evidence (`created_custom_ids`,
`created_batches`), with the stats, reset and state file section every such API names after itself."""

from __future__ import annotations

from abc import abstractmethod
from collections import Counter
from collections.abc import Mapping
from typing import Any, Generic, Protocol, TypeVar

from lowtide.emulator.core.emulation import Emulation

__all__ = ["AccountEmulation", "BatchAccount"]


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
    """An emulation whose account is its `backend`. Its stats are `<name>_batches`, `<name>_created_batches` and
    `<name>_created_custom_ids`, and its state file section is `<name>`: subclasses say how many batches it holds
    (`batch_count`) and how its section is written and read (`encode`, `decode`)."""

    backend: B

    @property
    def created_custom_ids(self) -> Counter[str]:
        return self.backend.created_custom_ids

    @property
    def created_batches(self) -> int:
        return self.backend.created_batches

    @abstractmethod
    def batch_count(self) -> int:
        """The batches (jobs) the account holds now."""

    @abstractmethod
    def encode(self) -> str | None:
        """The account as its state file section's JSON text; None when it holds nothing worth keeping."""

    @abstractmethod
    def decode(self, section: Any) -> None:
        """Take back what `encode` wrote."""

    def stats(self) -> Mapping[str, object]:
        return {
            f"{self.name}_batches": self.batch_count(),
            f"{self.name}_created_batches": self.backend.created_batches,
            f"{self.name}_created_custom_ids": dict(self.backend.created_custom_ids),
        }

    def reset(self) -> None:
        self.backend.reset()

    def saved(self) -> Mapping[str, str]:
        section = self.encode()
        return {self.name: section} if section is not None else {}

    def restore(self, document: Mapping[str, Any]) -> None:
        section = document.get(self.name)
        if section is not None:
            self.decode(section)
