"""The SQLite ledger store: `Ledger` (`ledger.py`), built on its file (`connection.py`, its WAL checkpoints
`checkpoint.py`, its schema `schema.py`), requests (`requests.py`), batches (`batches.py`), bulk runs (`runs.py`) and
the live quota (`quotas.py`); `kind.py` plugs it in, for a path or a `sqlite:` location."""

from lowtide.ledger.sqlite.ledger import Ledger

__all__ = ["Ledger"]
