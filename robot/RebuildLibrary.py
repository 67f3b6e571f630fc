"""Robot keywords for rebuilding a lost ledger as a user would (`robot/ledger_rebuild.robot`): the crash clients'
actor written as an actor file, the ledger's files deleted, and `lowtide ledger rebuild` run (in this process, as the
console script runs it) against the suite's `lowtide emulator` (CrashLibrary's), its output read for the identities it
lists."""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from pathlib import Path

import yaml
from robot.api import logger
from robot.api.deco import keyword, library

from _crash_providers import API_KEY, API_KEY_ENV
from _in_process import lowtide_in_this_process
from resources.crash_client import AWS_ENV, BEDROCK, MODELS

_IDENTITY_LINE = re.compile(r"^    ([0-9a-f]{12})  (\d+) batch\(es\), (\d+) request\(s\), newest ", re.M)


@library(scope="SUITE", auto_keywords=False)
class RebuildLibrary:
    """The rebuild command, run as a user runs it."""

    def __init__(self) -> None:
        self._folder = Path(tempfile.mkdtemp(prefix="lowtide-rebuild-"))
        self.last: subprocess.CompletedProcess[str] | None = None

    @keyword("Write The Crash Clients' Actor File")
    def write_actor_file(self, base_url: str, provider: str) -> str:
        """The actor file of `resources/crash_client.py`'s actor for `provider` at the emulator: what its programs
        would have been configured with."""
        options: dict[str, object] = {"bedrock": dict(BEDROCK)} if provider == "bedrock" else {}
        actor = {
            "name": "crash-client",
            "provider": provider,
            "model": MODELS[provider],
            "max_tokens": 64,
            "batch_processing": "batch",
            "base_url": base_url + ("/v1" if provider == "openai" else ""),
            "api_key_env": API_KEY_ENV,
            "batch": {"poll_interval": 0.2, "max_wait": 120},
            **({"provider_options": options} if options else {}),
        }
        path = self._folder / f"{provider}-actors.yaml"
        path.write_text(yaml.safe_dump({"actors": [actor]}), encoding="utf-8")
        return str(path)

    @keyword("Delete The Ledger's Files")
    def delete_ledger_files(self, ledger: str) -> None:
        """The ledger file gone with its -wal and -shm, as a lost ledger's are."""
        path = Path(ledger)
        for suffix in ("", "-wal", "-shm"):
            there = path.with_name(path.name + suffix)
            if there.exists():
                there.unlink()
        if path.exists():
            raise AssertionError(f"{path} is still there")

    @keyword("Run Lowtide Ledger Rebuild")
    def run_rebuild(self, *arguments: str) -> int:
        """`lowtide ledger rebuild ARGUMENTS...` in this process (`lowtide.cli.main`, with the environment its process
        would be given: the crash clients' key), its output captured; its exit code (its output: `Rebuild Output
        Should Contain`). Its status and output are the point, not its process: one of its own cost 3-4 s of CPU
        under coverage, an interpreter's start and the SDKs' imports."""
        argv = ["ledger", "rebuild", *arguments]
        env = {**os.environ, **AWS_ENV, API_KEY_ENV: API_KEY, "LOWTIDE_EMULATOR_BEDROCK_MIN_RECORDS": "1"}
        ran = lowtide_in_this_process(argv, env)
        self.last = subprocess.CompletedProcess(argv, ran.code, ran.stdout, ran.stderr)
        logger.info(f"lowtide {' '.join(argv)}\nexit {ran.code}\nstdout:\n{ran.stdout}\nstderr:\n{ran.stderr}")
        return ran.code

    @keyword("The Only Identity Listed")
    def only_identity(self, *requests: int) -> str:
        """The one identity the last listing shows, which must count one of `requests` requests (a batch still
        running whose requests its API shows only in its results is not counted until it ends)."""
        found = _IDENTITY_LINE.findall(self._last().stdout)
        if len(found) != 1:
            raise AssertionError(f"expected one identity listed, found {found}:\n{self._last().stdout}")
        identity, _, counted = found[0]
        if int(counted) not in {int(count) for count in requests}:
            raise AssertionError(
                f"{identity} is listed with {counted} request(s), not {' or '.join(map(str, requests))}"
            )
        return str(identity)

    @keyword("Rebuild Output Should Contain")
    def output_should_contain(self, text: str) -> None:
        last = self._last()
        if text not in last.stdout + last.stderr:
            raise AssertionError(f"{text!r} not in:\n{last.stdout}\n{last.stderr}")

    @keyword("Rebuild Should Have Printed No Traceback")
    def no_traceback(self) -> None:
        last = self._last()
        if "Traceback" in last.stdout + last.stderr:
            raise AssertionError(last.stderr)

    def _last(self) -> subprocess.CompletedProcess[str]:
        if self.last is None:
            raise AssertionError("Run Lowtide Ledger Rebuild first.")
        return self.last
