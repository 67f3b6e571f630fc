"""Robot keywords for what a bulk run must never lose, over real processes: `lowtide run`, `collect`, `runs` and
`status` against `lowtide emulator` on a loopback socket, its faults armed through the admin routes (a results download
cut part way, a result line garbled), and the input files checked byte for byte from outside.

One instance per suite; `Stop Processes` (a test teardown) stops the `lowtide` processes a test started, `Clean Up`
(the suite teardown) the emulator too, and removes the scratch files.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from robot.api import logger
from robot.api.deco import keyword, library

from _custom_ids import key_of, keys_created
from _in_process import lowtide_in_this_process
from _processes import Process, emulator_argv, lowtide_command, stop_all, wait_until_listening

API_KEY_ENV = "LOWTIDE_ROBOT_KEY"
API_KEY = "sk-robot-results-secret-2b7e41c9"
# Where each provider's batch results are downloaded from (the emulator's route names) and counted.
_RESULTS_ROUTE = {"anthropic": "batches.results", "openai": "openai.files.content"}
_CREATED = {"anthropic": "created_custom_ids", "openai": "openai_created_custom_ids"}


@dataclass(frozen=True)
class Finished:
    """A `lowtide` command that has exited: `${result.rc}`, `${result.stdout}`, `${result.stderr}`."""

    rc: int
    stdout: str
    stderr: str


@library(scope="SUITE", auto_keywords=False)
class ResultsLibrary:
    """Inputs, an actor file and faults for `lowtide run`; checks of what it wrote and what the emulator created."""

    def __init__(self) -> None:
        self._scratch: Path | None = None
        self._emulator: Process | None = None
        self._base_url: str | None = None
        self._processes: list[Process] = []
        self._started = 0

    # ------------------------------------------------------------------------------------------- the emulator

    @keyword("Start Emulator")
    def start_emulator(self, processing_seconds: float = 0.5, timeout: float = 120.0) -> str:
        """`lowtide emulator` on a free loopback port; returns its base URL."""
        argv = emulator_argv(lowtide_command(), processing_seconds=processing_seconds)
        self._emulator = self._start(argv, "emulator")
        self._base_url = wait_until_listening(self._emulator, timeout)
        return self._base_url

    @keyword("Reset Emulator")
    def reset_emulator(self) -> None:
        httpx.post(self._url() + "/_emulator/reset", timeout=10.0).raise_for_status()

    @keyword("Cut Results Downloads")
    def cut_results_downloads(self, provider: str, after_lines: int, times: int = 1) -> None:
        """The next `times` downloads of a batch's results break after `after_lines` lines, the connection closed
        mid-body."""
        body = {"route": _RESULTS_ROUTE[provider], "kind": "cut", "after_lines": int(after_lines), "times": int(times)}
        self._admin("/_emulator/faults", body)

    @keyword("Garble Result Line")
    def garble_result_line(self, key: str, how: str, ledger: str) -> None:
        """The result line of the request keyed `key` in `ledger` (made now if need be: a custom id carries its
        ledger's identity) is one no client can read, as `how` says (`bad-json`, `not-utf8`, ...)."""
        from lowtide.ledger.store import close_ledgers, open_ledger

        try:
            custom_id = f"{key}_{open_ledger(ledger).identity()}"
        finally:
            close_ledgers()  # the run is another process: leave the file to it
        self._admin("/_emulator/outcomes", {"custom_id": custom_id, "kind": "garbled", "how": how})

    @keyword("Emulator Should Have Created Each Once")
    def emulator_should_have_created_each_once(self, provider: str, *keys: str) -> None:
        """The emulator's committed batches held the requests of exactly these keys, each once: nothing paid twice."""
        created = dict(keys_created(self._stats().get(_CREATED[provider], {})))
        expected = dict.fromkeys(keys, 1)
        if created != expected:
            raise AssertionError(f"Created {created} (by key), expected each of {sorted(keys)} once.")

    @keyword("Emulator Should Have Seen No Calls")
    def emulator_should_have_seen_no_calls(self) -> None:
        calls = {route: n for route, n in self._stats().get("calls", {}).items() if n}
        if calls:
            raise AssertionError(f"The emulator was called: {calls}")

    @keyword("Results Downloads Should Be")
    def results_downloads_should_be(self, provider: str, expected: int) -> None:
        calls = int(self._stats().get("calls", {}).get(_RESULTS_ROUTE[provider], 0))
        if calls != int(expected):
            raise AssertionError(f"{calls} results download(s), expected {expected}.")

    # ------------------------------------------------------------------------------------------------- inputs

    @keyword("Write Prompts")
    def write_prompts(self, count: int) -> str:
        """A JSONL file of `count` prompts in a folder of its own; returns its path."""
        folder = Path(tempfile.mkdtemp(dir=self._workdir, prefix="input-"))
        path = folder / "prompts.jsonl"
        path.write_text("".join(json.dumps({"prompt": f"Prompt {n}"}) + "\n" for n in range(int(count))), "utf-8")
        return str(path)

    @keyword("Write Actor File")
    def write_actor_file(self, provider: str = "anthropic") -> str:
        """A YAML actor in batch mode against the emulator, polling fast, retrying a results download once."""
        folder = Path(tempfile.mkdtemp(dir=self._workdir, prefix="actor-"))
        model, base_url = (
            ("gpt-5.4-mini", self._url() + "/v1") if provider == "openai" else ("claude-haiku-4-5", self._url())
        )
        (folder / "actor.yaml").write_text(
            f"name: reader\nprovider: {provider}\nmodel: {model}\nmax_tokens: 64\nbatch_processing: batch\n"
            f"base_url: {base_url}\napi_key_env: {API_KEY_ENV}\n"
            "batch: {poll_interval: 0.2, max_attempts: 1, api_retries: 1}\n",
            encoding="utf-8",
        )
        return str(folder / "actor.yaml")

    @keyword("Link File")
    def link_file(self, target: str, name: str, kind: str = "symbolic") -> str:
        """A symbolic or hard link named `name` beside `target`; returns its path."""
        link = Path(target).with_name(name)
        if kind == "hard":
            os.link(target, link)
        else:
            link.symlink_to(target)
        return str(link)

    @keyword("Digest Of File")
    def digest_of_file(self, path: str) -> str:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()

    @keyword("New Directory")
    def new_directory(self, prefix: str = "dir-") -> str:
        return tempfile.mkdtemp(dir=self._workdir, prefix=prefix)

    # ---------------------------------------------------------------------------------------------- `lowtide`

    @keyword("Run Lowtide In This Process")
    def run_lowtide_in_this_process(self, *args: str) -> Finished:
        """`lowtide ARGS...` through the console script's own `main`, in this process, its outputs captured: every
        command of this suite, none of which is killed or signalled. A process of its own would cost an interpreter's
        start-up and the provider's SDK imported again (1-3 s of CPU under coverage) and prove nothing more: the run
        still reaches the emulator's socket, with the key from the environment it is given."""
        ran = lowtide_in_this_process(args, self._environment())
        logger.info(
            f"lowtide {' '.join(args)} (in process) exited {ran.code}\nstdout:\n{ran.stdout}\nstderr:\n{ran.stderr}"
        )
        return Finished(ran.code, ran.stdout, ran.stderr)

    # ----------------------------------------------------------------------------------------------- results

    @keyword("Results Should Be")
    def results_should_be(self, path: str, *statuses: str) -> list[dict[str, Any]]:
        """The results file holds one line per input, in order, with these statuses (`succeeded`, `waiting`, ...);
        a waiting line names its batch, a succeeded one holds the emulated reply to its prompt."""
        lines = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]
        found = [line["status"] for line in lines]
        if found != list(statuses):
            raise AssertionError(f"Statuses {found}, expected {list(statuses)}.")
        for n, line in enumerate(lines):
            if line["index"] != n:
                raise AssertionError(f"Line {n} is item {line['index']}.")
            if line["status"] == "waiting" and not str(line.get("batch_id") or "").startswith(("msgbatch_", "batch_")):
                raise AssertionError(f"A waiting item names no batch: {line}")
            if line["status"] == "succeeded" and not str(line["text"]).startswith(f'Emulated reply to "Prompt {n}"'):
                raise AssertionError(f"Item {n} is not the reply to its prompt: {line['text']!r}")
        return lines

    @keyword("Raw Results Should Hold Each Line Once")
    def raw_results_should_hold_each_line_once(self, directory: str, *keys: str) -> bytes:
        """The results directory's raw results (one batch) hold one line per request key (its custom id the key and
        the ledger's identity), each once, whole; returns the file's bytes."""
        [path] = list((Path(directory) / "raw").iterdir())
        data = path.read_bytes()
        if not data.endswith(b"\n"):
            raise AssertionError(f"{path} ends mid-line.")
        named = sorted(_named_key(line, keys) for line in data.splitlines())
        if named != sorted(keys):
            raise AssertionError(f"{path} holds lines of {named}, expected each of {sorted(keys)} once.")
        return data

    # ------------------------------------------------------------------------------------------- tear down

    @keyword("Stop Processes")
    def stop_processes(self, emulator: bool = False) -> None:
        keep = [] if emulator else [p for p in self._processes if p is self._emulator]
        stopping = [p for p in self._processes if p not in keep]
        self._processes = keep
        stop_all(stopping, with_stderr=True)

    @keyword("Clean Up")
    def clean_up(self) -> None:
        try:
            self.stop_processes(emulator=True)
        finally:
            if self._scratch is not None:
                shutil.rmtree(self._scratch, ignore_errors=True)
                self._scratch = None

    # ------------------------------------------------------------------------------------------------ inside

    @property
    def _workdir(self) -> Path:
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix="lowtide-robot-results-"))
        return self._scratch

    def _url(self) -> str:
        if self._base_url is None:
            raise AssertionError("Start the emulator first.")
        return self._base_url

    def _admin(self, route: str, body: dict[str, Any]) -> None:
        response = httpx.post(self._url() + route, json=body, timeout=10.0)
        if response.status_code >= 400:
            raise AssertionError(f"The emulator refused {body}: {response.text}")

    def _stats(self) -> dict[str, Any]:
        response = httpx.get(self._url() + "/_emulator/stats", timeout=10.0)
        response.raise_for_status()
        stats: dict[str, Any] = response.json()
        return stats

    def _start(self, argv: Sequence[str], name: str) -> Process:
        self._started += 1
        process = Process(argv, self._workdir, f"{name}-{self._started}", self._environment())
        self._processes.append(process)
        return process

    @staticmethod
    def _environment() -> dict[str, str]:
        """A `lowtide` command's environment: this one's without a crash point or a provider's own settings, with the
        suite's key."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LOWTIDE_CRASHPOINT", "ANTHROPIC_", "OPENAI_"))}
        env.update({API_KEY_ENV: API_KEY, "PYTHONUNBUFFERED": "1"})
        return env


def _named_key(line: bytes, keys: Sequence[str]) -> str:
    """The key whose request a raw result line names ("?" for none): read from its custom id, where it is whole
    JSON, else found in its bytes."""
    for key in keys:
        if f'"custom_id":"{key}_'.encode() in line or f'"custom_id":"{key}"'.encode() in line:
            return key
    try:
        return key_of(str(json.loads(line)["custom_id"]))
    except (ValueError, KeyError, TypeError):
        return "?"
