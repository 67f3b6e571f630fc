"""Robot keywords for `lowtide run|retry|status` over real processes: a bulk run of thousands of CSV rows against
`lowtide emulator` on a loopback socket, killed with SIGKILL midway, resumed, retried, and checked from outside.

What the keywords check comes from outside the `lowtide` process: its exit code and output, the files it wrote,
the emulator's own record of what it created (`GET /_emulator/stats`: how many committed batches held each
custom_id) and its list of batches, and the ledger read through a read-only SQLite connection.

The library remembers the data it wrote (rows, which rows carry an `[[emulator:errored]]` marker) and the outcomes
it armed for first attempts, so that the checks know what every one of the run's items must have ended as.

One instance per suite. `Stop Processes` (a test teardown) stops the `lowtide` processes a test started;
`Clean Up` (the suite teardown) stops the emulator too and removes the scratch files.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import signal
import sqlite3
import tempfile
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from robot.api import logger
from robot.api.deco import keyword, library

from _custom_ids import keys_created
from _in_process import lowtide_in_this_process
from _processes import UNMEASURED, Process, emulator_argv, lowtide_command, stop_all, wait_until_listening
from lowtide.bulk.outputs.spool import spool_path

API_KEY_ENV = "ANTHROPIC_API_KEY"
# Fake, and distinctive enough that finding it in any file or log means lowtide wrote it there.
API_KEY = "sk-ant-robot-secret-5f3c9a17e2d84b06"
REPLY_PREFIX = 'Emulated reply to "{prompt}": '
MARKER = "[[emulator:errored]]"
FLAKY_ERROR = "overloaded_error"
# Batch states of the ledger (lowtide.ledger.store.BatchState) whose results are all stored.
_SETTLED = ("collected", "canceled", "expired")


@dataclass(frozen=True)
class Finished:
    """A `lowtide` command that has exited: `${result.rc}`, `${result.stdout}`, `${result.stderr}`."""

    rc: int
    stdout: str
    stderr: str
    seconds: float


@dataclass(frozen=True)
class _Row:
    id: str
    review: str


# A batch id that is a UUID (Mistral's batch jobs).
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
# Where the emulator's stats count each provider's batches.
_STAT_PREFIX = {
    "anthropic": "",
    "openai": "openai_",
    "gemini": "gemini_",
    "bedrock": "bedrock_",
    "mistral": "mistral_",
    "azure_openai": "azure_openai_",
    "groq": "groq_",
    "together": "together_",
}
_BEDROCK_OPTIONS = (
    "provider_options: {bedrock: {s3_bucket: lowtide-batch, role_arn: 'arn:aws:iam::123456789012:role/bulk-run'}}\n"
)
"""A Bedrock actor's bucket (the emulator's own) and role (any: the emulator checks none)."""
_AWS_ENV = {"AWS_ACCESS_KEY_ID": "AKIDBULK", "AWS_SECRET_ACCESS_KEY": "bulk-run", "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_EC2_METADATA_DISABLED": "true"}  # fmt: skip
"""Credentials of no meaning for boto3's usual chain (a Bedrock actor's): the emulator checks no signature."""


@library(scope="SUITE", auto_keywords=False)
class BulkLibrary:
    """Write a CSV and an actor file, run `lowtide run` on them against the emulator, kill it, resume, retry, check."""

    def __init__(self) -> None:
        self._scratch: Path | None = None
        self._emulator: Process | None = None
        self._base_url: str | None = None
        self._processes: list[Process] = []
        self._named: dict[str, Process] = {}
        self._started = 0
        self._rows: list[_Row] = []
        self._marked: set[int] = set()
        self._first_attempt: dict[int, str] = {}
        """Index -> what its first attempt ends as (`errored` with FLAKY_ERROR, or `expired`), armed by custom_id."""

    # ------------------------------------------------------------------------------------------- the emulator

    @keyword("Start Emulator")
    def start_emulator(self, processing_seconds: float = 2.0, timeout: float = 120.0) -> str:
        """Start `lowtide emulator` on a free loopback port, each batch in progress `processing_seconds`; returns
        its base URL."""
        if self._emulator is not None and self._emulator.popen.poll() is None:
            raise AssertionError("An emulator is already running; stop it first.")
        argv = emulator_argv(lowtide_command(), processing_seconds=processing_seconds)
        self._emulator = self._start(argv, "emulator")
        self._base_url = wait_until_listening(self._emulator, timeout)
        return self._base_url

    @keyword("Reset Emulator")
    def reset_emulator(self) -> None:
        """Forget every batch, call count and armed outcome: the emulator as freshly started."""
        httpx.post(self._url() + "/_emulator/reset", timeout=10.0).raise_for_status()

    @keyword("Arm First Attempt Outcomes")
    def arm_first_attempt_outcomes(
        self, run_id: str, ledger: str, errored: Sequence[int] = (), expired: Sequence[int] = ()
    ) -> None:
        """Make the first attempt of these items end badly: `errored` ones with an `overloaded_error`, `expired`
        ones expired. Armed by custom_id (`<run id>-<index>` and the identity of the run's `ledger`, made now if it
        is not there yet), so a retry (`<run id>-<index>-a2`) succeeds."""
        from lowtide.ledger.sqlite import Ledger

        made = Ledger(ledger)
        identity = made.identity()
        made.close()
        for kinds, kind in ((errored, "errored"), (expired, "expired")):
            for index in (int(i) for i in kinds):
                body = {"custom_id": f"{run_id}-{index}_{identity}", "kind": kind, "error_type": FLAKY_ERROR}
                response = httpx.post(self._url() + "/_emulator/outcomes", json=body, timeout=10.0)
                if response.status_code >= 400:
                    raise AssertionError(f"The emulator refused the outcome {body}: {response.text}")
                self._first_attempt[index] = kind
        logger.info(f"First attempts armed: {dict(sorted(self._first_attempt.items()))}")

    @keyword("Emulator Should Have Seen No Calls")
    def emulator_should_have_seen_no_calls(self) -> None:
        """Not one API call of any kind (the admin routes are not counted), and no batch."""
        stats = self._stats()
        calls = {route: n for route, n in stats.get("calls", {}).items() if n}
        if calls or stats.get("batches") or stats.get("created_custom_ids"):
            raise AssertionError(f"The emulator was called: {calls}; it holds {stats.get('batches')} batch(es).")

    @keyword("Emulator Should Have Created Each Custom Id Once")
    def emulator_should_have_created_each_custom_id_once(
        self, run_id: str, items: int, retried: Sequence[int] = (), partial: bool = False, provider: str = "anthropic"
    ) -> dict[str, Any]:
        """Nothing paid twice: the emulator's committed batches held the custom ids of `<run id>-0` ..
        `<run id>-<items - 1>` and `<run id>-<i>-a2` for each `retried` index (each key with the ledger's identity),
        each exactly once, and no other custom id.

        With `partial`, custom ids not created (yet) are allowed, but none twice and none unexpected. `provider`
        names whose API's batches are counted (`anthropic`, `openai`, `gemini` or `azure_openai`). Returns the stats."""
        stats = self._stats()
        counted = stats.get(_STAT_PREFIX[provider] + "created_custom_ids", {})
        created = dict(keys_created(counted))
        expected = {f"{run_id}-{i}" for i in range(items)} | {f"{run_id}-{int(i)}-a2" for i in retried}
        problems: list[str] = []
        twice = sorted(f"{k}={v}" for k, v in created.items() if v != 1)
        if twice:
            problems.append(f"{len(twice)} created more than once: {_few(twice)}")
        strangers = sorted(set(created) - expected)
        if strangers:
            problems.append(f"{len(strangers)} unexpected custom ids: {_few(strangers)}")
        missing = sorted(expected - set(created))
        if missing and not partial:
            problems.append(f"{len(missing)} never created: {_few(missing)}")
        if problems:
            raise AssertionError("The emulator's created_custom_ids: " + "; ".join(problems))
        logger.info(f"{len(created)} custom id(s) created once each in {stats.get('created_batches')} batch(es).")
        return stats

    @keyword("Emulator Should Have Answered Live Calls")
    def emulator_should_have_answered_live_calls(self, expected: int) -> None:
        """The emulator's Messages API answered `expected` live calls (`messages.create`), no more, no fewer."""
        answered = int(self._stats().get("calls", {}).get("messages.create", 0))
        if answered != int(expected):
            raise AssertionError(f"The emulator answered {answered} live call(s), expected {expected}.")

    @keyword("Emulator Should Have Created Batches")
    def emulator_should_have_created_batches(self, expected: int, provider: str = "anthropic") -> None:
        created = int(self._stats().get(_STAT_PREFIX[provider] + "created_batches", -1))
        if created != expected:
            raise AssertionError(f"The emulator created {created} batch(es), expected {expected}.")

    # ------------------------------------------------------------------------------------------------- inputs

    @keyword("Write Reviews")
    def write_reviews(self, rows: int, marked: Sequence[int] = ()) -> str:
        """A CSV with columns `id` and `review`, `rows` rows; the rows at `marked` indexes end with the
        `[[emulator:errored]]` marker, which makes every attempt of them fail. Returns its path."""
        self._marked = {int(i) for i in marked}
        self._first_attempt = {}
        moods = ("crisp", "soggy", "bright", "bland", "warm", "salty", "sweet")
        self._rows = []
        for index in range(int(rows)):
            review = f"the {moods[index % len(moods)]} soup number {index} was fine"
            if index in self._marked:
                review += f" {MARKER}"
            self._rows.append(_Row(f"r{index:05d}", review))
        path = Path(tempfile.mkdtemp(dir=self._workdir, prefix="input-")) / "reviews.csv"
        with path.open("w", encoding="utf-8", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(["id", "review"])
            writer.writerows([row.id, row.review] for row in self._rows)
        logger.info(f"Wrote {rows} rows to {path}; marked errored: {sorted(self._marked)}")
        return str(path)

    @keyword("Write Actor File")
    def write_actor_file(
        self,
        name: str = "reviewer",
        poll_interval: float = 0.2,
        provider: str = "anthropic",
        lease_seconds: float | None = None,
    ) -> str:
        """A YAML actor in batch mode against the emulator: `max_attempts: 1` (what fails stays failed until
        `lowtide retry`), a short poll interval, and a short `reconcile_grace`, since a create cut off by the kill
        cannot still arrive at this emulator seconds later. The key is named (ANTHROPIC_API_KEY), never written.
        `lease_seconds`: how long other processes leave the actor's claims to it (a test that must tell a run that
        waited for a dead process's lease from a slow one makes it far longer than any slowness).
        `provider: openai` makes it an OpenAI actor, through the emulator's OpenAI API; `provider: gemini` a Gemini
        actor, through its Gemini API (google-genai adds the API version to the base URL itself); `provider: mistral` a
        Mistral actor, through its Mistral API; `provider: azure_openai` an Azure OpenAI actor at the emulator's Azure
        API, its `model` a deployment; `provider: bedrock` a Bedrock actor, through the emulator's AWS account."""
        path = Path(tempfile.mkdtemp(dir=self._workdir, prefix="actor-")) / "actor.yaml"
        model, base_url = {
            "openai": ("gpt-5.4-mini", self._url() + "/v1"),
            "gemini": ("gemini-2.5-flash", self._url()),
            "bedrock": ("amazon.nova-micro-v1:0", self._url()),
            "mistral": ("mistral-small-latest", self._url()),
            # A deployment named after its model (the emulator has one per model); the SDK adds `/openai`.
            "azure_openai": ("gpt-4o-mini", self._url()),
            "groq": ("llama-3.1-8b-instant", self._url()),  # the groq SDK adds /openai/v1 itself
            "together": ("meta-llama/Llama-3.3-70B-Instruct-Turbo", self._url()),
        }.get(provider, ("claude-haiku-4-5", self._url()))
        path.write_text(
            f"name: {name}\n"
            f"provider: {provider}\n"
            f"model: {model}\n"
            "max_tokens: 64\n"
            "system_prompt: You review soups in one line.\n"
            "batch_processing: batch\n"
            f"base_url: {base_url}\n"
            f"api_key_env: {API_KEY_ENV}\n"
            f"batch: {{poll_interval: {poll_interval:g}, max_attempts: 1, reconcile_grace: 3"
            + ("" if lease_seconds is None else f", lease_seconds: {float(lease_seconds):g}")
            + "}\n"
            + (_BEDROCK_OPTIONS if provider == "bedrock" else ""),
            encoding="utf-8",
        )
        return str(path)

    @keyword("New Directory")
    def new_directory(self, prefix: str = "dir-") -> str:
        """A fresh empty directory in the scratch space (for a ledger, results, ...)."""
        return tempfile.mkdtemp(dir=self._workdir, prefix=prefix)

    # ---------------------------------------------------------------------------------------------- `lowtide`

    @keyword("Start Lowtide")
    def start_lowtide(
        self, *args: str, name: str | None = None, measured: bool = True, crashpoint: str | None = None
    ) -> str:
        """Start `lowtide ARGS...` with the fake API key in its environment; returns the process's name.
        `measured=False`, for a run the test kills with SIGKILL: not under coverage, which writes a process's data at
        its exit, which SIGKILL never reaches (measuring it would cost 1-1.5 s of CPU and add nothing). `crashpoint`:
        the process dies there (`LOWTIDE_CRASHPOINT`, `lowtide.batching.crashpoints`)."""
        process = self._start(
            [*lowtide_command(), *args],
            name or "lowtide",
            measured=measured and crashpoint is None,
            crashpoint=crashpoint,
        )
        self._named[process.name] = process
        return process.name

    @keyword("Wait For Lowtide")
    def wait_for_lowtide(self, name: str, timeout: float = 180.0) -> Finished:
        """Wait for the process to exit; one still running after `timeout` seconds is stopped and fails."""
        process = self._process(name)
        code = process.wait(timeout)
        if code is None:
            stuck = (
                _unfinished(Path(process.argv[process.argv.index("--ledger") + 1]))
                if "--ledger" in process.argv
                else ""
            )
            used = process.cpu_text()
            process.stop()
            raise AssertionError(
                f"{name} was still running after {timeout:g} s{used}; stopped it.{stuck}\n"
                f"stdout:\n{_tail(process.stdout)}\nstderr:\n{_tail(process.stderr)}"
            )
        finished = Finished(code, process.stdout, process.stderr, process.seconds)
        logger.info(
            f"{' '.join(process.argv[1:])}\nexited with {code} after {finished.seconds:.2f} s{process.cpu_text()}\n"
            f"stdout:\n{_tail(finished.stdout)}\nstderr:\n{_tail(finished.stderr)}"
        )
        return finished

    @keyword("Run Lowtide")
    def run_lowtide(self, *args: str, timeout: float = 180.0) -> Finished:
        """`lowtide ARGS...` to its end: `${result.rc}`, `${result.stdout}`, `${result.stderr}`."""
        return self.wait_for_lowtide(self.start_lowtide(*args), timeout=timeout)

    @keyword("Run Lowtide In This Process")
    def run_lowtide_in_this_process(self, *args: str) -> Finished:
        """`lowtide ARGS...` through the console script's own `main` in this process, with the environment a process
        of its own is given: for the runs that are not killed or signalled, whose point is the command's, not its
        process's (a process costs 2-5 s of CPU under coverage, importing lowtide and the provider's SDK again)."""
        ran = lowtide_in_this_process(args, self._environment())
        finished = Finished(ran.code, ran.stdout, ran.stderr, ran.seconds)
        # Kept as a process's are, so that `No File Should Contain The API Key` reads what this run printed too.
        self._started += 1
        for stream, text in (("stdout", ran.stdout), ("stderr", ran.stderr)):
            (self._workdir / f"lowtide-{self._started}-in-process.{stream}").write_text(text, encoding="utf-8")
        logger.info(
            f"lowtide {' '.join(args)} (in this process)\nexited with {ran.code} after {ran.seconds:.2f} s "
            f"({ran.cpu:.1f} s of CPU)\nstdout:\n{_tail(ran.stdout)}\nstderr:\n{_tail(ran.stderr)}"
        )
        return finished

    @keyword("Lowtide Should Die Midway")
    def lowtide_should_die_midway(self, name: str, ledger: str, batches: int, timeout: float = 180.0) -> dict[str, int]:
        """Wait for the run `name`, started with a crash point before a batch's intent (`before-intent#N`), to die
        there of SIGKILL, and check the ledger (read-only) shows it midway: at least one batch with its results
        stored, not all, and a group of requests claimed (`pending`) but not yet in a batch. Returns the ledger's
        batch states.

        The claimed group is the work only a take-over can finish: the run started again must take those
        requests from the dead process at once (its pid is gone) and send them. The process dies at that point
        itself, however loaded the machine: a watcher polling the ledger for the moment can miss it."""
        process = self._process(name)
        code = process.wait_unless_stuck(timeout)
        if code is None:
            process.stop()
            raise AssertionError(
                f"{name} did not reach its crash point within {timeout:g} s: {_ledger_view(Path(ledger))}"
            )
        if code != -signal.SIGKILL:
            raise AssertionError(
                f"{name} should have died of SIGKILL at its crash point, but its exit code is {code}; ledger: "
                f"{_ledger_view(Path(ledger))}\nstderr:\n{_tail(process.stderr)}"
            )
        after = _ledger_view(Path(ledger))
        logger.info(f"{name} died at its crash point after {process.seconds:.2f} s; ledger: {after}")
        if not 1 <= after.settled < int(batches) or after.unbatched == 0:
            raise AssertionError(
                f"{name} died, but not midway: {after.settled} of {batches} batch(es) settled, {after.unbatched}"
                f" request(s) claimed in no batch: {after}"
            )
        return dict(after.batches)

    @keyword("Interrupt Lowtide Once A Batch Is Out")
    def interrupt_lowtide_once_a_batch_is_out(
        self, name: str, ledger: str, timeout: float = 180.0, signal_name: str = "SIGINT", after: int = 0
    ) -> Finished:
        """Ctrl-C (SIGINT, or the signal named) the run `name` once the ledger shows a batch created at the API and
        not yet settled, as a user would press it while a run waits; returns how it ended. With `after`, once the
        ledger holds more than that many batches: a run resumed after an interrupt waits for a batch of its own, not
        the one it attaches to at its start."""
        process = self._process(name)
        deadline = time.monotonic() + timeout
        seen = _LedgerView()
        while sum(seen.batches.values()) <= int(after) or not any(
            seen.batches.get(state, 0) for state in ("waiting-on-batch", "ended")
        ):
            if process.popen.poll() is not None:
                raise AssertionError(f"{name} ended before a batch was out; ledger: {seen}")
            if time.monotonic() > deadline:
                process.stop()
                raise AssertionError(f"{name} had no batch out within {timeout:g} s: {seen}")
            time.sleep(0.01)
            seen = _ledger_view(Path(ledger))
        process.popen.send_signal(signal.Signals[signal_name])
        logger.info(f"Interrupted {name} ({signal_name}); ledger: {seen}")
        return self.wait_for_lowtide(name, timeout=90.0)

    @keyword("Ledger Should Be Closed")
    def ledger_should_be_closed(self, ledger: str) -> None:
        """Beside the ledger no `-wal` or `-shm` file is left: the process that used it closed it on its way out."""
        path = Path(ledger)
        left = sorted(p.name for p in path.parent.iterdir() if p.name.startswith(path.name))
        if left != [path.name]:
            raise AssertionError(f"the ledger was left open: {left}")

    # ------------------------------------------------------------------------------------------------ results

    @keyword("Results Should Be Complete")
    def results_should_be_complete(self, path: str, run_id: str, template: str, retried: bool = False) -> None:
        """The results file has one line per row of the CSV, indexes 0.. in order, each once, with the row's id.

        Rows with the marker: `failed`, BatchRequestErrored, `invalid_request_error`. Rows whose first attempt
        was armed to fail: before `retried`, `failed` (`overloaded_error`) or `expired`; after, `succeeded` under
        the key `<run id>-<index>-a2`. Every other row: `succeeded` with the emulated reply to its own prompt,
        usage, a cost and a batch id. Marked rows are retried too (`lowtide retry` sends every failed item)."""
        lines = _read_jsonl(Path(path))
        problems: list[str] = []
        if len(lines) != len(self._rows):
            problems.append(f"{len(lines)} line(s), expected {len(self._rows)}")
        indexes = [str(line.get("index")) for line in lines]
        if indexes != [str(i) for i in range(len(lines))]:
            twice = sorted(i for i, n in Counter(indexes).items() if n > 1)
            problems.append(f"indexes not 0.. in order (repeated: {_few(twice)})")
        wrong: list[str] = []
        for line, row_index in zip(lines, range(len(self._rows)), strict=False):
            why = self._wrong(line, row_index, run_id, template, retried=retried)
            if why:
                wrong.append(f"{row_index}: {why}")
        if wrong:
            problems.append(f"{len(wrong)} wrong line(s): {_few(wrong)}")
        if problems:
            raise AssertionError(f"{path}: " + "; ".join(problems))
        statuses = Counter(str(line["status"]) for line in lines)
        batches = len({line["batch_id"] for line in lines})
        logger.info(f"{path}: {len(lines)} lines, {dict(statuses)}, from {batches} batch(es)")

    @keyword("Results Should Equal But For Batches")
    def results_should_equal_but_for_batches(self, path: str, other: str) -> None:
        """Both results files hold the same lines in the same order, each the same but for the batch that carried it
        (a run killed and resumed splits its items into other batches than a run never stopped) and a failed item's
        error message, which names the request's custom id (each ledger's own: `<key>_<ledger identity>`)."""
        ours, theirs = _read_jsonl(Path(path)), _read_jsonl(Path(other))
        if len(ours) != len(theirs):
            raise AssertionError(f"{path} holds {len(ours)} line(s), {other} {len(theirs)}.")
        differ = [
            str(mine.get("index"))
            for mine, whole in zip(ours, theirs, strict=True)
            if _but_for_batch(mine) != _but_for_batch(whole)
        ]
        if differ:
            raise AssertionError(f"{len(differ)} line(s) of {path} differ from {other}'s: {_few(differ)}")
        logger.info(f"{path}: {len(ours)} lines, each as in {other} but for its batch")

    @keyword("Tear The Last Line Of The Spool Beside")
    def tear_the_last_line_of_the_spool_beside(self, out: str, run_id: str) -> int:
        """Cut the last record of the run's spool (kept beside its `--out` file) in the middle, as a process killed
        while writing it leaves it; the spool must hold more than that record. Returns its size before."""
        target = Path(out)
        path = spool_path(target.parent, target.name, run_id)
        if not path.exists():
            raise AssertionError(f"The run {run_id} kept no spool beside {out} ({path.name}).")
        size = path.stat().st_size
        if size < 4096:
            raise AssertionError(f"The spool {path} holds {size} bytes: too few lines to tear one.")
        with path.open("r+b") as spool:
            spool.truncate(size - 40)
        logger.info(f"Tore the last line of {path.name} ({size} bytes before)")
        return size

    @keyword("No Spool Should Be Left Beside")
    def no_spool_should_be_left_beside(self, out: str, run_id: str) -> None:
        target = Path(out)
        path = spool_path(target.parent, target.name, run_id)
        if path.exists():
            raise AssertionError(f"The run {run_id} is complete, but its spool {path} is left.")

    @keyword("Results Directory Should Match")
    def results_directory_should_match(self, directory: str, out: str) -> None:
        """`results.jsonl` is byte for byte the `--out` file; `raw/` holds one file per batch the API lists,
        named by its id, each with that batch's result lines, every custom id the API created exactly once."""
        folder = Path(directory)
        processed, expected = folder / "results.jsonl", Path(out)
        if processed.read_bytes() != expected.read_bytes():
            raise AssertionError(f"{processed} differs from {expected}.")
        listed = {batch["id"]: batch for batch in self._list_batches()}
        files = {p.name: p for p in (folder / "raw").iterdir()}
        problems: list[str] = []
        wanted = {f"{batch_id}.jsonl" for batch_id in listed}
        if set(files) != wanted:
            problems.append(
                f"raw files missing {_few(sorted(wanted - set(files)))}, unexpected {_few(sorted(set(files) - wanted))}"
            )
        seen: Counter[str] = Counter()
        for batch_id, batch in listed.items():
            raw = files.get(f"{batch_id}.jsonl")
            if raw is None:
                continue
            lines = _read_jsonl(raw)
            total = sum(int(n) for n in batch["request_counts"].values())
            ids = Counter(str(line.get("custom_id")) for line in lines)
            if len(lines) != total or len(ids) != total:
                problems.append(f"{raw.name}: {len(lines)} line(s), {len(ids)} custom id(s), the batch holds {total}")
            seen.update(ids)
        created = {str(k) for k in self._stats().get("created_custom_ids", {})}
        twice = sorted(k for k, n in seen.items() if n > 1)
        if twice:
            problems.append(f"{len(twice)} custom id(s) in more than one raw line: {_few(twice)}")
        if set(seen) != created:
            problems.append(
                f"raw custom ids missing {_few(sorted(created - set(seen)))}, "
                f"unexpected {_few(sorted(set(seen) - created))}"
            )
        if problems:
            raise AssertionError(f"{folder}: " + "; ".join(problems))
        logger.info(
            f"{folder}: results.jsonl equals {out}; raw/ holds {len(files)} file(s), {sum(seen.values())} lines"
        )

    @keyword("Every Batch Should Be Collected")
    def every_batch_should_be_collected(self, ledger: str, batches: int) -> int:
        """The ledger (read-only) holds the API's `batches` batches, every one settled (`collected`, or `expired` /
        `canceled`): none is left `ended` or `waiting-on-batch` for a later `lowtide collect` to download again.

        A kill between an intent and its create leaves an intent the API never saw; reconciled, it is `failed`
        (nothing was sent or paid). Returns how many batches the ledger holds in all, as `lowtide status` counts.
        """
        rows = _read_only(
            Path(ledger),
            "SELECT b.provider_batch_id, b.state, b.request_count, COUNT(r.key) FROM batches b"
            " LEFT JOIN batch_members m ON m.batch_id = b.id LEFT JOIN request_view r ON r.key = m.key"
            " AND r.state IN ('succeeded', 'failed', 'canceled', 'expired') GROUP BY b.id ORDER BY b.intent_at",
        )
        sent = [row for row in rows if row[0] is not None]
        never_sent = [row for row in rows if row[0] is None]
        open_ = [
            f"{batch_id} is {state!r} though {final} of its {count} requests are final"
            for batch_id, state, count, final in sent
            if state not in _SETTLED
        ]
        open_ += [f"an intent never sent is {s!r}, not 'failed'" for _, s, _, _ in never_sent if s != "failed"]
        problems = [f"{len(sent)} batch(es) of the API's, expected {batches}"] if len(sent) != int(batches) else []
        if open_:
            problems.append(f"{len(open_)} not settled: {_few(open_)}")
        if problems:
            raise AssertionError(f"The ledger {ledger}: " + "; ".join(problems))
        if never_sent:
            logger.info(f"{len(never_sent)} intent(s) never reached the API (the kill came before the create).")
        return len(rows)

    @keyword("No File Should Contain The API Key")
    def no_file_should_contain_the_api_key(self) -> int:
        """No file of the suite's scratch space (inputs, results, raw lines, ledgers and their WAL, every process's
        stdout and stderr, the emulator's included) holds the API key; returns how many files were read."""
        files = [p for p in self._workdir.rglob("*") if p.is_file()]
        leaking = [str(p) for p in files if API_KEY.encode() in p.read_bytes()]
        if leaking:
            raise AssertionError(f"The API key was written to: {', '.join(leaking)}")
        logger.info(f"The API key is in none of {len(files)} file(s).")
        return len(files)

    # ------------------------------------------------------------------------------------------- tear down

    @keyword("Stop Processes")
    def stop_processes(self, emulator: bool = False) -> None:
        """Stop every `lowtide` process still running (the emulator too with `emulator`), logging its output."""
        keep = [] if emulator else [p for p in self._processes if p is self._emulator]
        stopping = [p for p in self._processes if p not in keep]
        self._processes = keep
        if emulator:
            self._emulator, self._base_url = None, None
        stop_all(stopping, with_stderr=True)

    @keyword("Clean Up")
    def clean_up(self) -> None:
        """Stop every process, emulator included, and remove the scratch files."""
        try:
            self.stop_processes(emulator=True)
        finally:
            if self._scratch is not None:
                shutil.rmtree(self._scratch, ignore_errors=True)
                self._scratch = None

    # ------------------------------------------------------------------------------------------------ inside

    def _wrong(self, line: Mapping[str, Any], index: int, run_id: str, template: str, *, retried: bool) -> str | None:
        """Why the results line of item `index` is not what it must be, or None."""
        row = self._rows[index]
        first = self._first_attempt.get(index)
        marked = index in self._marked
        again = retried and (marked or first is not None)
        key = f"{run_id}-{index}-a2" if again else f"{run_id}-{index}"
        if line.get("index") != index or line.get("id") != row.id or line.get("key") != key:
            found = f"index {line.get('index')}, id {line.get('id')!r}, key {line.get('key')!r}"
            return f"{found}; expected id {row.id!r}, key {key!r}"
        batch_id = str(line.get("batch_id") or "")
        if not (
            batch_id.startswith(("msgbatch_", "batch_", "batches/", "arn:aws:bedrock:")) or _UUID.fullmatch(batch_id)
        ):
            return f"batch id {line.get('batch_id')!r}"
        status = line.get("status")
        error: Mapping[str, Any] = line.get("error") or {}
        message = str(error.get("message", ""))
        if marked:
            if (
                status != "failed"
                or error.get("type") != "BatchRequestErrored"
                or "invalid_request_error" not in message
            ):
                return f"a marked row should fail with invalid_request_error: {status} {error}"
            return None
        if first is not None and not retried:
            if first == "expired":
                return (
                    None if status == "expired" and error.get("type") == "BatchRequestExpired" else f"{status} {error}"
                )
            ok = status == "failed" and error.get("type") == "BatchRequestErrored" and FLAKY_ERROR in message
            return None if ok else f"should have failed with {FLAKY_ERROR}: {status} {error}"
        prompt = template.format(id=row.id, review=row.review)
        text = str(line.get("text") or "")
        if status != "succeeded" or line.get("error") is not None:
            return f"{status} {error}"
        if not text.startswith(REPLY_PREFIX.format(prompt=prompt)):
            return f"text {text!r} is not the reply to {prompt!r}"
        if not line.get("usage") or not line.get("cost_usd"):
            return f"usage {line.get('usage')!r}, cost {line.get('cost_usd')!r}"
        return None

    @property
    def _workdir(self) -> Path:
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix="lowtide-robot-bulk-"))
        return self._scratch

    def _url(self) -> str:
        if self._base_url is None:
            raise AssertionError("Start the emulator first.")
        return self._base_url

    def _stats(self) -> dict[str, Any]:
        response = httpx.get(self._url() + "/_emulator/stats", timeout=10.0)
        response.raise_for_status()
        stats: dict[str, Any] = response.json()
        return stats

    def _list_batches(self) -> list[dict[str, Any]]:
        """Every batch the API lists, through the API itself rather than the admin routes."""
        headers = {"x-api-key": API_KEY, "anthropic-version": "2023-06-01"}
        found: list[dict[str, Any]] = []
        params: dict[str, Any] = {"limit": 1000}
        while True:
            response = httpx.get(self._url() + "/v1/messages/batches", params=params, headers=headers, timeout=10.0)
            response.raise_for_status()
            page = response.json()
            found.extend(page["data"])
            if not page.get("has_more"):
                return found
            params["after_id"] = page["last_id"]

    @staticmethod
    def _environment() -> dict[str, str]:
        """A `lowtide` command's environment: this one's without a crash point or Anthropic's own settings, with the
        suite's key and Bedrock's credentials."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LOWTIDE_CRASHPOINT", "ANTHROPIC_"))}
        env.update({API_KEY_ENV: API_KEY, "PYTHONUNBUFFERED": "1", **_AWS_ENV})
        return env

    def _process(self, name: str) -> Process:
        process = self._named.get(name)
        if process is None:
            raise AssertionError(f"No process named {name!r} was started.")
        return process

    def _start(self, argv: Sequence[str], name: str, measured: bool = True, crashpoint: str | None = None) -> Process:
        self._started += 1
        env = self._environment()
        if crashpoint is not None:
            env["LOWTIDE_CRASHPOINT"] = crashpoint
        if not measured:
            for variable in UNMEASURED:
                env.pop(variable, None)
        process = Process(argv, self._workdir, f"{name}-{self._started}", env)
        self._processes.append(process)
        logger.info(f"Started {process.name} (pid {process.popen.pid}): {' '.join(argv)}")
        return process


@dataclass(frozen=True)
class _LedgerView:
    """What a run's ledger shows from outside: its batches by state, and requests claimed but in no batch yet."""

    batches: Mapping[str, int] = field(default_factory=dict[str, int])
    unbatched: int = 0

    @property
    def settled(self) -> int:
        return sum(self.batches.get(state, 0) for state in _SETTLED)

    def __str__(self) -> str:
        return f"batches by state {dict(self.batches)}, {self.unbatched} request(s) claimed but in no batch"


def _ledger_view(ledger: Path) -> _LedgerView:
    """The ledger as `_LedgerView`, read without writing (and without creating the file)."""
    rows = _read_only(
        ledger,
        "SELECT 'batch', state, COUNT(*) FROM batches GROUP BY state"
        " UNION ALL SELECT 'request', state, COUNT(*) FROM request_view WHERE batch_id IS NULL AND state = 'pending'",
    )
    batches = {str(state): int(n) for kind, state, n in rows if kind == "batch"}
    unbatched = sum(int(n) for kind, _, n in rows if kind == "request")
    return _LedgerView(batches, unbatched)


def _unfinished(ledger: Path) -> str:
    """For a run that hangs: its unfinished requests by state and owner, and whether each owner's pid lives."""
    rows = _read_only(
        ledger,
        "SELECT state, owner, COUNT(*), MIN(key), MAX(owner_until) FROM request_view"
        " WHERE state NOT IN ('succeeded', 'failed', 'canceled', 'expired') GROUP BY state, owner",
    )
    lines: list[str] = []
    for state, owner, count, first, until in rows:
        pid = str(owner or "").split("/")[1] if str(owner or "").count("/") >= 2 else ""
        alive = "no owner" if not owner else "owner alive" if pid.isdigit() and _alive(int(pid)) else "owner dead"
        left = f", lease for {until - time.time():.0f} s more" if until else ""
        lines.append(f"  {count} {state} (from {first}), {owner} ({alive}{left})")
    return "\nUnfinished requests in the ledger:\n" + "\n".join(lines) if lines else ""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read_only(ledger: Path, query: str) -> list[tuple[Any, ...]]:
    """The rows of `query` on the ledger opened read-only; none while the file or its schema is not there yet."""
    if not ledger.exists():
        return []
    try:
        db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True, timeout=5.0)
        try:
            return db.execute(query).fetchall()
        finally:
            db.close()
    except sqlite3.OperationalError:
        return []  # The schema is written in the run's first transaction.


def _but_for_batch(line: Mapping[str, Any]) -> dict[str, Any]:
    """A results line without what differs between two runs of the same rows on two ledgers: its batch, and its
    error's message (which names the custom id)."""
    error: Mapping[str, Any] | None = line.get("error")
    return {**line, "batch_id": None, "error": None if error is None else {**error, "message": None}}


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        raise AssertionError(f"{path} was not written.")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _few(items: Sequence[str], limit: int = 8) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "") if items else "none"


def _tail(text: str, lines: int = 40) -> str:
    kept = text.splitlines()[-lines:]
    return "\n".join(kept)
