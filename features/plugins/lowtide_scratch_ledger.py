"""A kind of ledger of another package, for the scenarios: `scratch:NAME`, a named ledger in this process's memory,
registered through the `lowtide.ledgers` entry points as a third party's store would be. It imports nothing of
lowtide but the registry's face (`lowtide.ledger.kinds`) and a store to hand out."""

from __future__ import annotations

from lowtide.ledger.kinds import LedgerKind, LedgerRegistry, NotALocation
from lowtide.ledger.memory import MemoryLedger


class ScratchKind(LedgerKind):
    scheme = "scratch"
    example = "scratch:NAME (a named ledger in this process)"
    in_process = True

    def target(self, text: str, rest: str | None) -> str:
        name = (rest or "").strip("/")
        if not name:
            raise NotALocation("names no scratch ledger: write scratch:NAME.")
        return name

    def open(self, target: str, *, read_only: bool) -> MemoryLedger:
        return MemoryLedger()

    def shown(self, target: str) -> str:
        return f"scratch:{target}"


def register(registry: LedgerRegistry) -> None:
    registry.register(ScratchKind())
