"""The tidegem plugin (`features/plugins/lowtide_tidegem_plugin.py`: lowtide's fake batch API behind Gemini's wire)
installed the way a plugin package is, and `lowtide serve` started as a process for a batch actor of it, so that
Gemini's SDKs can be clients of `lowtide serve` before the Gemini batch provider is installed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from _processes import Process, lowtide_command

PLUGIN = Path(__file__).resolve().parent.parent / "features" / "plugins" / "lowtide_tidegem_plugin.py"
GEMINI_MODEL = "gemini-2.5-flash"


def start_tidegem_serve(workdir: Path, client_key: str, ledger: Path) -> Process:
    """`lowtide serve --port 0` for a batch actor of the tidegem provider, the plugin on its Python path (a site
    folder under `workdir` holding the module and its `.dist-info`); the caller waits for its listening line."""
    site = workdir / "tidegem-site"
    site.mkdir()
    shutil.copy(PLUGIN, site / PLUGIN.name)
    info = site / "lowtide_tidegem_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lowtide-tidegem-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[lowtide.providers]\ntidegem = lowtide_tidegem_plugin:register\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    actor = workdir / "tidegem.yaml"
    actor.write_text(
        f"name: served-gemini\nprovider: tidegem\nmodel: {GEMINI_MODEL}\nmax_tokens: 256\nbatch_processing: batch\n"
        "batch:\n  poll_interval: 0.1\n  coalesce_window: 1.0\n"
    )
    argv = [*lowtide_command(), "serve", "--actor", str(actor), "--port", "0", "--client-key", client_key]
    return Process([*argv, "--ledger", str(ledger)], workdir, "serve-gemini", env)
