"""Where the ledger lives by default: `$LOWTIDE_LEDGER`, else the user's state directory."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["LEDGER_ENV", "default_ledger_path"]

LEDGER_ENV = "LOWTIDE_LEDGER"


def default_ledger_path() -> Path:
    """`$LOWTIDE_LEDGER`, else `$XDG_STATE_HOME/lowtide/ledger.sqlite3` (`~/.local/state/...` by default)."""
    explicit = os.environ.get(LEDGER_ENV)
    if explicit:
        return Path(explicit).expanduser()
    state_home = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state_home) / "lowtide" / "ledger.sqlite3"
