"""Robot keywords that install a third API's emulation the way a plugin package is installed (its module and a
`.dist-info` whose `entry_points.txt` names it in the `lowtide.emulators` group, on the Python path) and run
`lowtide emulator` over it as a separate process: the plugin's routes served over a real socket beside the built-in
APIs, which the official SDKs still reach, with no line of lowtide changed. The plugin is the scenarios' own
(`features/plugins/lowtide_tidepool_emulation.py`)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
from robot.api.deco import keyword, library

from _processes import Process, emulator_argv, lowtide_command, stop_all, wait_until_listening

PLUGIN = Path(__file__).resolve().parent.parent / "features" / "plugins" / "lowtide_tidepool_emulation.py"
CALLERS: dict[str, dict[str, str]] = {
    "tidepool": {"x-tidepool-key": "tide-key"},
    "nobody": {},
}


@library(scope="SUITE", auto_keywords=False)
class EmulatorPluginLibrary:
    """One plugin install per test (a folder on the Python path), one emulator process at a time."""

    def __init__(self) -> None:
        self._workdir = Path(tempfile.mkdtemp(prefix="lowtide-emulator-plugin-robot-"))
        self._site: Path | None = None
        self._process: Process | None = None
        self._url: str | None = None

    @keyword("Install The Tidepool Emulation As A Plugin")
    def install_plugin(self, entry_point: str = "lowtide_tidepool_emulation:TidepoolEmulation") -> str:
        """A fresh site folder holding the plugin's module and its distribution's metadata, whose only entry point is
        `tidepool = <entry_point>` in the `lowtide.emulators` group. Returns the folder."""
        site = Path(tempfile.mkdtemp(prefix="site-", dir=self._workdir))
        shutil.copy(PLUGIN, site / PLUGIN.name)
        info = site / "lowtide_tidepool_emulation-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            "Metadata-Version: 2.1\nName: lowtide-tidepool-emulation\nVersion: 0.1\n", encoding="utf-8"
        )
        (info / "entry_points.txt").write_text(f"[lowtide.emulators]\ntidepool = {entry_point}\n", encoding="utf-8")
        self._site = site
        return str(site)

    def _env(self) -> dict[str, str]:
        assert self._site is not None, "install the plugin first"
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(self._site), env.get("PYTHONPATH")]))
        return env

    @keyword("Start The Emulator With The Plugin Installed")
    def start(self, timeout: float = 120.0) -> str:
        """`lowtide emulator --port 0` with the plugin on its Python path; returns its base URL."""
        argv = emulator_argv(lowtide_command(), processing_seconds=0)
        self._process = Process(argv, self._workdir, "emulator", self._env())
        self._url = wait_until_listening(self._process, timeout)
        return self._url

    @keyword("Lowtide Should Refuse To Start")
    def refuses_to_start(self, command: str, timeout: float = 60.0) -> str:
        """Run `lowtide emulator` (or `lowtide demo`) with the plugin installed and expect it to exit with status 2
        before it serves or sends anything, having said why on one line of stderr and nothing on stdout. Returns that
        line."""
        lowtide = lowtide_command()
        argv = emulator_argv(lowtide, processing_seconds=0) if command == "emulator" else [*lowtide, command]
        process = Process(argv, self._workdir, f"refused-{command}", self._env())
        code = process.wait(timeout)
        if code is None:
            stop_all([process])
            raise AssertionError(f"lowtide {command} kept running with a broken plugin:\n{process.stdout}")
        assert code == 2, (code, process.stdout, process.stderr)
        assert process.stdout == "", process.stdout
        lines = process.stderr.splitlines()
        assert len(lines) == 1, process.stderr
        return lines[0]

    @keyword("Stop The Emulator")
    def stop(self) -> None:
        """Stop the emulator, if one runs. Safe in a teardown."""
        if self._process is not None:
            stop_all([self._process], with_stderr=True)
            self._process = None
            self._url = None

    @keyword("Call The Emulator As")
    def call(self, caller: str, method: str, path: str, name: str | None = None) -> dict[str, Any]:
        """One HTTP call as `caller` (`tidepool`: with its key; `nobody`: with no key of any API), with the body
        `{"name": name}` when a name is given. Returns `{"status": int, "body": parsed JSON}`."""
        assert self._url is not None, "start the emulator first"
        body = {"name": name} if name is not None else None
        with httpx.Client(base_url=self._url, timeout=30) as client:
            reply = client.request(method, path, headers=CALLERS[caller], json=body)
        return {"status": reply.status_code, "body": reply.json()}

    @keyword("Arm A Fault On The Emulator")
    def arm_fault(self, route: str, status: int) -> None:
        """`POST /_emulator/faults`: the next call to `route` fails with `status`."""
        assert self._url is not None, "start the emulator first"
        reply = httpx.post(f"{self._url}/_emulator/faults", json={"route": route, "status": int(status)}, timeout=30)
        assert reply.status_code == 200, (reply.status_code, reply.text)

    @keyword("Read The Emulator's Stats")
    def stats(self) -> dict[str, Any]:
        assert self._url is not None, "start the emulator first"
        reply = httpx.get(f"{self._url}/_emulator/stats", timeout=30)
        assert reply.status_code == 200, (reply.status_code, reply.text)
        return reply.json()

    @keyword("List Models With The Official SDK")
    def sdk_models(self, sdk: str) -> list[str]:
        """The model ids `anthropic` or `openai`'s own client lists from the emulator, as any program would."""
        assert self._url is not None, "start the emulator first"
        if sdk == "anthropic":
            with anthropic.Anthropic(api_key="robot-key", base_url=self._url, max_retries=0) as client:
                return [model.id for model in client.models.list()]
        with openai.OpenAI(api_key="sk-robot", base_url=f"{self._url}/v1", max_retries=0) as client:
            return [model.id for model in client.models.list()]

    @keyword("Clean Up The Plugin")
    def clean_up(self) -> None:
        self.stop()
        shutil.rmtree(self._workdir, ignore_errors=True)
