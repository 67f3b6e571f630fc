"""The SQLite ledger store: `Ledger` (`ledger.py`), built on its file (`connection.py`), requests (`requests.py`)
and batches (`batches.py`)."""

from lowtide.ledger.sqlite.ledger import Ledger

__all__ = ["Ledger"]
