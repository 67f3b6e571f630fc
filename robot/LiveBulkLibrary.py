"""Keywords for live bulk runs through the command line (`lowtide run --mode live`) against a rate-limited
`lowtide emulator` process: start them, SIGKILL the run midway, resume it, and account for every answer the
emulator gave (its `live_answers`: one count per distinct request body, that is per item)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
from robot.api import logger
from robot.api.deco import keyword, library

from _in_process import lowtide_in_this_process
from _processes import UNMEASURED, Process, emulator_argv, lowtide_command, stop_all, wait_until_listening

API_KEY_ENV = "ANTHROPIC_API_KEY"
# A fake key, distinctive so that a leak would be seen.
API_KEY = "sk-ant-robot-live-bulk-7d41c2e9"


@library(scope="SUITE", auto_keywords=False)
class LiveBulkLibrary:
    def __init__(self) -> None:
        self._scratch: Path | None = None
        self._emulator: Process | None = None
        self._url: str | None = None
        self._processes: list[Process] = []
        self._named: dict[str, Process] = {}
        self._killed: dict[str, int] = {}
        self._in_flight = 0
        """The most calls the actor has in flight: a bound on the answers a killed process can lose."""

    @property
    def _workdir(self) -> Path:
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix="lowtide-live-bulk-"))
        return self._scratch

    def _start(self, argv: Sequence[str], name: str, measured: bool = True) -> Process:
        process = Process(argv, self._workdir, f"{name}-{len(self._processes) + 1}", self._environment(measured))
        self._processes.append(process)
        logger.info(f"Started {process.name} (pid {process.popen.pid}): {' '.join(argv)}")
        return process

    @staticmethod
    def _environment(measured: bool = True) -> dict[str, str]:
        """A `lowtide` run's: this one's without lowtide's or Anthropic's settings, with the suite's key; without
        coverage's, for a run the test kills with SIGKILL (`UNMEASURED`)."""
        leave_out = ("LOWTIDE_", "ANTHROPIC_", *(() if measured else UNMEASURED))
        env = {k: v for k, v in os.environ.items() if not k.startswith(leave_out)}
        env.update({API_KEY_ENV: API_KEY, "PYTHONUNBUFFERED": "1"})
        return env

    # -- the emulator ----------------------------------------------------------------------------------------

    @keyword("Start Rate Limited Emulator")
    def start_rate_limited_emulator(self, *limits: str) -> str:
        """`lowtide emulator` on a free loopback port with these options (`--rpm`, `--input-tpm`, `--latency`)."""
        argv = [*emulator_argv(lowtide_command(), processing_seconds=0), *limits]
        self._emulator = self._start(argv, "emulator")
        self._url = wait_until_listening(self._emulator, 120.0)
        return self._url

    @keyword("Emulator Stats")
    def emulator_stats(self) -> dict[str, Any]:
        assert self._url is not None, "no emulator"
        response = httpx.get(self._url + "/_emulator/stats", timeout=10.0)
        response.raise_for_status()
        return response.json()

    # -- inputs ----------------------------------------------------------------------------------------------

    @keyword("Write Prompts")
    def write_prompts(self, count: int) -> str:
        """A JSONL file of `count` distinct prompts with ids `p00000`...; returns its path."""
        path = self._workdir / "prompts.jsonl"
        with path.open("w", encoding="utf-8") as out:
            for index in range(int(count)):
                out.write(json.dumps({"id": f"p{index:05d}", "prompt": f"Item {index}: name {index} in words."}))
                out.write("\n")
        return str(path)

    @keyword("Write Live Actor File")
    def write_live_actor_file(self, max_concurrency: int, ramp_start: int = 8) -> str:
        """A live actor against the emulator, no rate limit configured: the run learns them from the headers."""
        assert self._url is not None, "start the emulator first"
        path = self._workdir / "actor.yaml"
        self._in_flight = int(max_concurrency)
        path.write_text(
            "name: live-bulk\n"
            "model: claude-haiku-4-5\n"
            "max_tokens: 32\n"
            f"base_url: {self._url}\n"
            f"api_key_env: {API_KEY_ENV}\n"
            f"live: {{max_concurrency: {int(max_concurrency)}, ramp_start: {int(ramp_start)}}}\n",
            encoding="utf-8",
        )
        return str(path)

    @keyword("New Path")
    def new_path(self, name: str) -> str:
        return str(self._workdir / name)

    # -- lowtide ---------------------------------------------------------------------------------------------

    @keyword("Start Lowtide")
    def start_lowtide(self, *args: str, measured: bool = True) -> str:
        """Start `lowtide ARGS...`; `measured=False` for a run the test kills with SIGKILL (`UNMEASURED`)."""
        process = self._start([*lowtide_command(), *args], "lowtide", measured=measured)
        self._named[process.name] = process
        return process.name

    @keyword("Run Lowtide In This Process")
    def run_lowtide_in_this_process(self, *args: str) -> int:
        """`lowtide ARGS...` in this process (the console script's own `main`, the environment a run's process is
        given), to its end; its exit code. For the run that resumes a stopped one: nobody kills or signals it, and
        its own process would cost an interpreter's start-up and lowtide's and the SDK's imports (2-3 s of CPU under
        coverage)."""
        ran = lowtide_in_this_process(args, self._environment())
        logger.info(
            f"lowtide (in this process) exited {ran.code} after {ran.seconds:.1f} s\nstderr:\n{ran.stderr[-3000:]}"
        )
        return ran.code

    @keyword("Kill Lowtide After Answers")
    def kill_lowtide_after_answers(
        self, name: str, ledger: str, answers: int, timeout: float = 180.0
    ) -> dict[str, int]:
        """SIGKILL `name` once the ledger (read-only) holds at least `answers` stored answers, with calls still to
        make; returns what the ledger and the emulator showed right after the kill: `stored` answers,
        `delivered` (answers the emulator gave to a connected caller), `abandoned` (answers whose caller was gone)."""
        process = self._named[name]
        self._wait_until_stored(name, ledger, int(answers), float(timeout))
        process.popen.send_signal(signal.SIGKILL)
        code = process.wait(30.0)
        if code != -signal.SIGKILL:
            raise AssertionError(f"{name} should have died of SIGKILL; its exit code is {code}")
        time.sleep(1.0)  # the emulator finishes the calls it had in flight (their callers gone)
        seen = self._seen(ledger)
        logger.info(f"Killed {name} after {process.seconds:.1f} s: {seen}", also_console=True)
        self._killed = seen
        return seen

    @keyword("Stop Lowtide After Answers")
    def stop_lowtide_after_answers(
        self, name: str, ledger: str, answers: int, signame: str = "SIGTERM", timeout: float = 180.0
    ) -> dict[str, int]:
        """Send `signame` to `name` once the ledger holds at least `answers` stored answers, as a supervisor or a
        user's Ctrl-C would, and wait for it to exit: it lets its calls in flight finish, stores their answers and
        exits 128 + the signal's number. Returns `stored` answers and `delivered` answers after it exited."""
        process = self._named[name]
        signum = signal.Signals[signame]
        self._wait_until_stored(name, ledger, int(answers), float(timeout))
        process.popen.send_signal(signum)
        code = process.wait(60.0)
        if code != 128 + signum:
            raise AssertionError(f"{name} should have exited {128 + signum} after {signame}; it exited {code}")
        if f"interrupted by {signame}" not in process.stderr:
            raise AssertionError(f"{name} did not say it was interrupted:\n{process.stderr[-3000:]}")
        seen = self._seen(ledger)
        logger.info(f"Stopped {name} by {signame} after {process.seconds:.1f} s: {seen}", also_console=True)
        if seen["stored"] != seen["delivered"] or seen["abandoned"]:
            raise AssertionError(f"{name} lost answers it was given: {seen}")
        self._killed = seen
        return seen

    def _wait_until_stored(self, name: str, ledger: str, answers: int, timeout: float) -> None:
        process = self._named[name]
        deadline = time.monotonic() + timeout
        while (stored := _stored(Path(ledger))) < answers:
            if process.popen.poll() is not None:
                raise AssertionError(f"{name} ended before {answers} answers were stored:\n{process.stderr[-3000:]}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{name} stored only {stored} answers in {timeout} s")
            time.sleep(0.01)

    def _seen(self, ledger: str) -> dict[str, int]:
        """Answers `stored` in the ledger, `delivered` by the emulator to a connected caller, `abandoned` by it."""
        stats = self.emulator_stats()
        return {
            "stored": _stored(Path(ledger)),
            "delivered": sum(int(n) for n in stats["live_answers"].values()),
            "abandoned": int(stats["abandoned_answers"]),
        }

    # -- checks ----------------------------------------------------------------------------------------------

    @keyword("Results Should Hold Every Item Answered")
    def results_should_hold_every_item_answered(self, path: str, count: int) -> None:
        """One line per input, in order, each succeeded, none carrying an error (no 429 among them)."""
        lines = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]
        if len(lines) != int(count):
            raise AssertionError(f"{len(lines)} result lines, expected {count}")
        for index, line in enumerate(lines):
            if line["index"] != index or line["id"] != f"p{index:05d}":
                raise AssertionError(f"line {index} is out of order: {line['index']} {line['id']}")
            if line["status"] != "succeeded" or line["error"] is not None or not line["text"]:
                raise AssertionError(f"line {index} did not succeed: {line}")

    @keyword("Every Item Should Have Been Answered Once")
    def every_item_should_have_been_answered_once(self, count: int) -> dict[str, Any]:
        """The emulator answered every item, each once, except the answers it gave the killed process that the
        process never stored (counted right after the kill: delivered - stored, at most the calls in flight); those,
        and only those, twice: nothing stored was asked for again.

        A live API has no idempotency key: an answer sent to a process that dies before writing it to its ledger
        is lost with it, and paid again. The emulator counts an answer when it is ready for a connected caller;
        one ready after the caller died is `abandoned_answers`, never counted here."""
        stats = self.emulator_stats()
        answers: dict[str, int] = {str(k): int(v) for k, v in stats["live_answers"].items()}
        if len(answers) != int(count):
            raise AssertionError(f"The emulator answered {len(answers)} distinct items, expected {count}")
        twice = sum(1 for n in answers.values() if n == 2)
        more = [n for n in answers.values() if n > 2]
        lost = self._killed.get("delivered", 0) - self._killed.get("stored", 0)
        if more or twice != lost or lost > self._in_flight:
            raise AssertionError(
                f"{twice} item(s) answered twice and {len(more)} more often; the killed process had lost {lost}"
                f" answer(s) (delivered {self._killed.get('delivered')}, stored {self._killed.get('stored')})"
            )
        logger.info(
            f"{count} items answered; {twice} twice (answers delivered to the killed process it never stored);"
            f" {stats['abandoned_answers']} answers abandoned by it; {stats['rate_limited']} 429(s) sent",
            also_console=True,
        )
        return stats

    @keyword("Every Item Should Have Been Answered Exactly Once")
    def every_item_should_have_been_answered_exactly_once(self, count: int) -> dict[str, Any]:
        """The emulator answered every item exactly once, over both processes: nothing was paid for twice."""
        stats = self.emulator_stats()
        answers: dict[str, int] = {str(k): int(v) for k, v in stats["live_answers"].items()}
        if len(answers) != int(count):
            raise AssertionError(f"The emulator answered {len(answers)} distinct items, expected {count}")
        again = {k: n for k, n in answers.items() if n != 1}
        if again:
            raise AssertionError(f"{len(again)} item(s) answered more than once: {sorted(again.items())[:5]}")
        logger.info(
            f"{count} items answered, each once; {stats['abandoned_answers']} answers abandoned;"
            f" {stats['rate_limited']} 429(s) sent",
            also_console=True,
        )
        return stats

    @keyword("Clean Up")
    def clean_up(self) -> None:
        try:
            stop_all(self._processes, with_stderr=True)
        finally:
            self._processes = []
            if self._scratch is not None:
                shutil.rmtree(self._scratch, ignore_errors=True)
                self._scratch = None


def _stored(ledger: Path) -> int:
    """Stored live answers in the ledger, read-only (0 while it has no schema yet)."""
    if not ledger.exists():
        return 0
    try:
        db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True, timeout=5.0)
        try:
            (count,) = db.execute("SELECT COUNT(*) FROM request_view WHERE state = 'succeeded'").fetchone()
        finally:
            db.close()
    except sqlite3.OperationalError:
        return 0
    return int(count)
