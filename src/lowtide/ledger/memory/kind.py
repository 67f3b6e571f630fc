"""The memory store as a kind of ledger: `memory:`, one `MemoryLedger` per process (what `open_ledger("memory:")`
gives); registered through the `lowtide.ledgers` entry points."""

from __future__ import annotations

from lowtide.ledger.kinds import LedgerKind, LedgerRegistry, NotALocation
from lowtide.ledger.memory.ledger import MemoryLedger

__all__ = ["MemoryKind", "register"]


class MemoryKind(LedgerKind):
    """A ledger in this process's memory, gone when it ends."""

    scheme = "memory"
    example = "memory: (this process only)"
    in_process = True

    def target(self, text: str, rest: str | None) -> str:
        if rest is not None and rest.strip("/"):
            raise NotALocation("takes no name: write memory:")
        return ""

    def open(self, target: str, *, read_only: bool) -> MemoryLedger:
        return MemoryLedger()

    def shown(self, target: str) -> str:
        return "memory:"


def register(registry: LedgerRegistry) -> None:
    registry.register(MemoryKind())
