"""The ledger in this process's memory, for tests and throwaway programs: `MemoryLedger` (`ledger.py`), what it holds
(`tables.py`), its bulk runs (`runs.py`) and a copy's rows (`copy.py`); `kind.py` plugs it in, for `memory:`."""

from lowtide.ledger.memory.ledger import MemoryLedger

__all__ = ["MemoryLedger"]
