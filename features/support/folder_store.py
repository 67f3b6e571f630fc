"""The fourth store installed for a run (`behave -D store=folder`): the scenario plugin
features/plugins/lowtide_folder_ledger.py declared in a distribution's `entry_points.txt` under `lowtide.ledgers`,
in a site folder of the run's own on this process's path and on every new process's (`PYTHONPATH`), so that lowtide
finds it as it finds an installed third party's store, through its entry point, and nothing else."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

PLUGINS = Path(__file__).parent.parent / "plugins"
ENTRY_POINT = "folder = lowtide_folder_ledger:register"


def install_folder_store() -> Path:
    """The site folder made, on `sys.path` and `PYTHONPATH` (before any ledger is opened: the process's registry
    loads the installed kinds once); remove it with `uninstall_folder_store`."""
    site = Path(tempfile.mkdtemp(prefix="lowtide-folder-store-"))
    info = site / "lowtide_folder_ledger-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lowtide-folder-ledger\nVersion: 1.0\n", "utf-8")
    (info / "entry_points.txt").write_text(f"[lowtide.ledgers]\n{ENTRY_POINT}\n", "utf-8")
    for path in (str(PLUGINS), str(site)):
        if path not in sys.path:
            sys.path.insert(0, path)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), str(PLUGINS), os.environ.get("PYTHONPATH")]))
    return site


def uninstall_folder_store(site: Path) -> None:
    shutil.rmtree(site, ignore_errors=True)
