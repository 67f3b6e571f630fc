"""Robot keywords that kill `lowtide` clients mid-batch and prove that nothing is lost or paid twice.

Every process is real: `lowtide emulator` on a loopback socket, and `resources/crash_client.py`, which runs N keyed
batch-mode calls through one ledger file and is killed with SIGKILL by `LOWTIDE_CRASHPOINT` at a chosen stage. A client
nobody kills may run in this process instead (`Run Client In This Process`), against the same socket. What
the suites check afterwards comes from outside the client: its output file, the emulator's own record of the batches
it created (`GET /_emulator/stats`), and `lowtide status --json` over the ledger.

One instance per suite. `Stop Processes` (a test teardown) stops every process the test started, emulator included;
`Clean Up` (the suite teardown) does the same and removes the scratch files.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
from robot.api import logger
from robot.api.deco import keyword, library

from _custom_ids import key_of, keys_created
from _in_process import in_this_process
from _processes import UNMEASURED, Process, emulator_argv, stop_all, wait_until_listening
from lowtide.batching.engine.collecting import RESULTS_PER_TRANSACTION
from lowtide.calls.parking import status
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.records import COPIED, BatchState
from lowtide.ledger.sqlite import Ledger
from lowtide.ledger.sqlite.schema import MIGRATIONS

API_KEY_ENV = "LOWTIDE_CRASH_API_KEY"
API_KEY = "crash-suite-key"
CLIENT = Path(__file__).resolve().parent / "resources" / "crash_client.py"
CRASHPOINT_ENV = "LOWTIDE_CRASHPOINT"
REPLY = 'Emulated reply to "question {index}"'


@dataclass(frozen=True)
class _Provider:
    """Where the emulator keeps one provider's batches, and what they look like."""

    list_path: str
    headers: dict[str, str]
    cursor: str
    size: Callable[[Mapping[str, Any]], int] | None
    """The number of requests a listed batch holds; None when the API does not say (Together's jobs)."""
    batches_stat: str
    created_stat: str
    batch_prefix: str
    fault_prefix: str
    """What the emulator's routes of this API are named with (`openai.batches.create`)."""
    results_route: str
    """The route a client reads a batch's results through."""
    items: str = "data"
    """Where a page of the list holds its batches."""
    next_page: Callable[[Mapping[str, Any]], str | None] = lambda page: (
        page["last_id"] if page.get("has_more") else None
    )
    """The cursor of the page after `page`, None on the last."""
    page_size: str = "limit"
    query: tuple[tuple[str, str], ...] = ()
    """What every call of the API names in its query (Azure's `api-version`)."""
    label: Callable[[Mapping[str, Any]], str] = lambda batch: (
        f"{batch['id']} ({batch.get('processing_status') or batch.get('status')}"
    )
    """A listed batch's id and status, for messages."""
    numbered: bool = False
    """Pages are asked for by number (`cursor` 0, 1, ...) until one comes back short (Mistral's)."""


# The batch states `lowtide status` shows for a batch still outstanding.
_OUTSTANDING = {state.value for state in BatchState if state.outstanding}
_PROVIDERS = {
    "anthropic": _Provider(
        list_path="/v1/messages/batches",
        headers={"x-api-key": API_KEY, "anthropic-version": "2023-06-01"},
        cursor="after_id",
        size=lambda batch: sum(int(v) for v in batch["request_counts"].values()),
        batches_stat="batches",
        created_stat="created_custom_ids",
        batch_prefix="msgbatch_",
        fault_prefix="",
        results_route="batches.results",
    ),
    "openai": _Provider(
        list_path="/v1/batches",
        headers={"authorization": f"Bearer {API_KEY}"},
        cursor="after",
        size=lambda batch: int(batch["request_counts"]["total"]),
        batches_stat="openai_batches",
        created_stat="openai_created_custom_ids",
        batch_prefix="batch_",
        fault_prefix="openai.",
        results_route="openai.files.content",
    ),
    # Azure OpenAI's batches are OpenAI's, at Azure's paths; every call names its API version.
    "azure_openai": _Provider(
        list_path="/openai/batches",
        query=(("api-version", "2024-10-21"),),
        headers={"api-key": API_KEY},
        cursor="after",
        size=lambda batch: int(batch["request_counts"]["total"]),
        batches_stat="azure_openai_batches",
        created_stat="azure_openai_created_custom_ids",
        batch_prefix="batch_",
        fault_prefix="azure_openai.",
        results_route="azure_openai.files.content",
    ),
    # Groq's Batch API is OpenAI's under /openai/v1, its listing one page of every batch.
    "groq": _Provider(
        list_path="/openai/v1/batches",
        headers={"authorization": f"Bearer {API_KEY}"},
        cursor="after",
        size=lambda batch: int(batch["request_counts"]["total"]),
        batches_stat="groq_batches",
        created_stat="groq_created_custom_ids",
        batch_prefix="batch_",
        fault_prefix="groq.",
        results_route="groq.files.content",
        next_page=lambda page: None,
    ),
    # Together's jobs are listed as a bare list, and report no request counts (the created custom ids prove it).
    "together": _Provider(
        list_path="/v1/batches",
        headers={"authorization": f"Bearer {API_KEY}", "user-agent": "Together/Python lowtide-crash-suite"},
        cursor="after",
        size=None,
        batches_stat="together_batches",
        created_stat="together_created_custom_ids",
        batch_prefix="batch_",
        fault_prefix="together.",
        results_route="together.files.content",
        next_page=lambda page: None,
    ),
    # Gemini's batch jobs are long-running operations: `batchStats` counts their requests (an int64, as a string).
    "gemini": _Provider(
        list_path="/v1beta/batches",
        headers={"x-goog-api-key": API_KEY},
        cursor="pageToken",
        size=lambda job: int(job["metadata"]["batchStats"]["requestCount"]),
        batches_stat="gemini_batches",
        created_stat="gemini_created_custom_ids",
        batch_prefix="batches/",
        fault_prefix="gemini.",
        # A job of inline requests answers inline, in the job itself.
        results_route="gemini.batches.get",
        items="operations",
        next_page=lambda page: page.get("nextPageToken"),
        page_size="pageSize",
        label=lambda job: f"{job['name']} ({job['metadata']['state']}",
    ),
    # Bedrock's batch inference jobs, listed by the control plane: boto3 signs its calls, the emulator reads only the
    # service named in the signature's scope.
    "bedrock": _Provider(
        list_path="/model-invocation-jobs",
        headers={
            "authorization": "AWS4-HMAC-SHA256 Credential=AKIDCRASH/20260101/us-east-1/bedrock/aws4_request, "
            "SignedHeaders=host, Signature=0"
        },
        cursor="nextToken",
        size=lambda job: int(job["totalRecordCount"]),
        batches_stat="bedrock_batches",
        created_stat="bedrock_created_custom_ids",
        batch_prefix="arn:aws:bedrock:",
        fault_prefix="bedrock.",
        results_route="bedrock.s3.get_object",
        items="invocationJobSummaries",
        next_page=lambda page: page.get("nextToken"),
        page_size="maxResults",
        label=lambda job: f"{job['jobArn']} ({job['status']}",
    ),
    # Mistral's batch jobs: `total_requests` counts them; its list is paged by number.
    "mistral": _Provider(
        list_path="/v1/batch/jobs",
        headers={"authorization": f"Bearer {API_KEY}"},
        cursor="page",
        size=lambda job: int(job["total_requests"]),
        batches_stat="mistral_batches",
        created_stat="mistral_created_custom_ids",
        batch_prefix="",
        fault_prefix="mistral.",
        results_route="mistral.files.content",
        page_size="page_size",
        numbered=True,
    ),
}


class _Client(Process):
    def __init__(self, argv: Sequence[str], workdir: Path, name: str, env: Mapping[str, str], out: Path) -> None:
        super().__init__(argv, workdir, name, env)
        self.out = out

    @property
    def code(self) -> int | None:
        """The exit code (negative: killed by that signal), None while it runs."""
        return self.popen.poll()


@dataclass(frozen=True)
class _RanHere:
    """A client run in this process (`Run Client In This Process`): what the checks read of a client process."""

    name: str
    out: Path
    code: int
    stdout: str
    stderr: str
    seconds: float


_CLIENT_MODULE: list[ModuleType] = []


def _crash_client() -> ModuleType:
    """`resources/crash_client.py` as a module, loaded once."""
    if not _CLIENT_MODULE:
        spec = importlib.util.spec_from_file_location("crash_client", CLIENT)
        if spec is None or spec.loader is None:
            raise AssertionError(f"Cannot load {CLIENT}.")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _CLIENT_MODULE.append(module)
    return _CLIENT_MODULE[0]


@library(scope="SUITE", auto_keywords=False)
class CrashLibrary:
    """Crash a batch-mode client at a chosen stage, run it again, and check what the API and the ledger hold."""

    def __init__(self) -> None:
        self._scratch: Path | None = None
        self._emulator: Process | None = None
        self._base_url: str | None = None
        self._provider = "anthropic"
        self._clients: dict[str, _Client | _RanHere] = {}
        self._ran_here: list[str] = []
        """The clients run in this process since the last `Stop Clients`: `Log Diagnostics` shows their logs."""
        self._processes: list[Process] = []
        self._ledgers: list[Path] = []
        self._started = 0
        self._creating: sqlite3.Connection | None = None
        self._processing: float | None = None

    # ---------------------------------------------------------------------------------------------- processes

    @keyword("Start Emulator")
    def start_emulator(self, processing_seconds: float = 1.5, timeout: float = 120.0) -> str:
        """Start a fresh `lowtide emulator` on a free loopback port; returns its base URL (read from its stdout)."""
        if self._emulator is not None and self._emulator.popen.poll() is None:
            raise AssertionError("An emulator is already running; stop it first.")
        argv = emulator_argv(self._lowtide(), processing_seconds=processing_seconds)
        # Bedrock's account takes jobs of any size here (AWS's minimum is 100 records): the suites send a few.
        process = self._start(argv, "emulator", {"PYTHONUNBUFFERED": "1", "LOWTIDE_EMULATOR_BEDROCK_MIN_RECORDS": "1"})
        self._emulator = process
        self._base_url = wait_until_listening(process, timeout)
        self._processing = float(processing_seconds)
        return self._base_url

    @keyword("Fresh Emulator")
    def fresh_emulator(self, processing_seconds: float = 1.5, timeout: float = 120.0) -> str:
        """The suite's `lowtide emulator`, as freshly started: started on first use (or when the one running keeps
        batches in progress for another time, or has died), else reset (`Reset Emulator`: every batch, file, call
        count and fault forgotten). Returns its base URL.

        An emulator's start-up is most of a crash test's CPU (it imports every API it serves); a reset gives the
        test the same empty account. A test that failed stops the emulator with its clients (`Stop Processes`), so
        the next test starts a new one."""
        emulator = self._emulator
        if emulator is not None and emulator.popen.poll() is None and self._processing == float(processing_seconds):
            self.reset_emulator()
            return self._require_base_url()
        if emulator is not None:
            self.stop_processes()
        return self.start_emulator(processing_seconds, timeout)

    @keyword("New Ledger")
    def new_ledger(self, initialized: bool = False) -> str:
        """The path of a ledger file in a fresh directory: not there yet, or, `initialized`, created empty (its
        schema in place, as any earlier run of lowtide would have left it)."""
        directory = Path(tempfile.mkdtemp(dir=self._workdir, prefix="ledger-"))
        path = directory / "ledger.sqlite3"
        self._ledgers.append(path)
        if initialized:
            Ledger(path).close()
        return str(path)

    @keyword("Begin Creating Ledger")
    def begin_creating_ledger(self, ledger: str) -> None:
        """Be another process in the middle of creating `ledger`: its file in WAL mode, the schema being written
        in a transaction that stays open (holding the write lock) until `Finish Creating Ledger`."""
        if self._creating is not None:
            raise AssertionError("A ledger is already being created; finish it first.")
        db = sqlite3.connect(ledger, isolation_level=None, timeout=10.0)
        db.execute("PRAGMA journal_mode=WAL")
        # lowtide's own migration, as its `migrate` runs it, without the COMMIT.
        db.executescript(f"BEGIN IMMEDIATE; {MIGRATIONS[0]}; PRAGMA user_version = 1;")
        self._creating = db

    @keyword("Finish Creating Ledger")
    def finish_creating_ledger(self) -> None:
        """Commit the schema `Begin Creating Ledger` wrote, releasing the write lock."""
        db, self._creating = self._creating, None
        if db is None:
            raise AssertionError("No ledger is being created.")
        db.execute("COMMIT")
        db.close()

    @keyword("Wait For Barrier")
    def wait_for_barrier(self, barrier: str, parties: int = 1, timeout: float = 120.0) -> None:
        """Wait until `parties` clients have reached `barrier` (their interpreter started, their calls about to)."""
        deadline = time.monotonic() + timeout
        while len(list(Path(barrier).glob("ready-*"))) < parties:
            if time.monotonic() > deadline:
                raise AssertionError(f"Fewer than {parties} client(s) reached {barrier} within {timeout:g} s.")
            time.sleep(0.01)

    @keyword("Use Provider")
    def use_provider(self, provider: str) -> None:
        """Whose batch API the clients use from now on (`anthropic` unless said; each test of `crash_recovery/`
        says it), and so which of the emulator's routes, counters and batch ids the checks read."""
        if provider not in _PROVIDERS:
            raise AssertionError(f"No crash client for provider {provider!r}; use one of {sorted(_PROVIDERS)}.")
        self._provider = provider

    @keyword("New Barrier")
    def new_barrier(self) -> str:
        """A fresh directory for `Start Client    barrier=...`: the clients given it start their calls together."""
        return tempfile.mkdtemp(dir=self._workdir, prefix="barrier-")

    @keyword("Start Client")
    def start_client(
        self,
        prefix: str,
        requests: int,
        ledger: str,
        crashpoint: str | None = None,
        name: str | None = None,
        barrier: str | None = None,
        parties: int = 2,
        max_batch_requests: int | None = None,
        reconcile_grace: float | None = None,
        host_id: str | None = None,
        lease_seconds: float | None = None,
        shared_prefix: str | None = None,
        shared: int = 0,
        coalesce_window: float | None = None,
        provider_options: str | None = None,
        providers: str | None = None,
        measured: bool = True,
    ) -> str:
        """Start `crash_client.py` for keys `PREFIX-1` .. `PREFIX-N` on `ledger`; returns the client's name.

        With `crashpoint`, `LOWTIDE_CRASHPOINT` is set to it: the client kills itself at that stage. With `barrier`
        (from `New Barrier`), the client waits until `parties` clients have started before it makes its calls, so
        that they make them at the same moment rather than one interpreter start-up apart. With `providers`
        (`anthropic,mistral`), the client runs an actor of each, at the emulator's one address with one key, each
        asking keys of its own (`PREFIX-PROVIDER-i`), instead of the suite's provider's.

        A client that will die of SIGKILL (its `crashpoint`, or `measured=False`: the test kills it) runs without
        coverage, when the suite runs under it (`UNMEASURED`: SIGKILL leaves no coverage data to write).
        """
        name, out = self._new_client(name)
        argv = [sys.executable, str(CLIENT), *self._client_args(prefix, requests, ledger, out, providers)]
        if barrier is not None:
            argv += ["--barrier", barrier, "--parties", str(parties)]
        if max_batch_requests is not None:
            argv += ["--max-batch-requests", str(max_batch_requests)]
        if reconcile_grace is not None:
            argv += ["--reconcile-grace", str(reconcile_grace)]
        if lease_seconds is not None:
            argv += ["--lease-seconds", str(lease_seconds)]
        if shared_prefix is not None:
            argv += ["--shared-prefix", shared_prefix, "--shared", str(shared)]
        if coalesce_window is not None:
            argv += ["--coalesce-window", str(coalesce_window)]
        if provider_options:
            argv += ["--provider-options", provider_options]
        env = {API_KEY_ENV: API_KEY, "PYTHONUNBUFFERED": "1"}
        if host_id is not None:
            env["LOWTIDE_HOST_ID"] = host_id  # a host of its own: known to the others by its lease alone
        if crashpoint:
            env[CRASHPOINT_ENV] = crashpoint
        environment = self._environment(env)
        if crashpoint or not measured:
            for variable in UNMEASURED:
                environment.pop(variable, None)
        process = _Client(argv, self._workdir, name, environment, out)
        self._processes.append(process)
        self._clients[name] = process
        logger.info(
            f"Started {name} (pid {process.popen.pid}): {requests} request(s) {prefix}-*, "
            f"{CRASHPOINT_ENV}={crashpoint or '(unset)'}"
        )
        return name

    def _new_client(self, name: str | None) -> tuple[str, Path]:
        """A new client's name (given, or the next free one) and its output file."""
        self._started += 1
        name = name or f"client-{self._started}"
        if name in self._clients:
            raise AssertionError(f"A client named {name!r} was already started in this suite.")
        return name, self._workdir / f"{name}.jsonl"

    def _client_args(self, prefix: str, requests: int, ledger: str, out: Path, providers: str | None) -> list[str]:
        """`crash_client.py`'s arguments every client is given."""
        return [
            "--base-url",
            self._require_base_url(),
            "--ledger",
            ledger,
            "--requests",
            str(requests),
            "--prefix",
            prefix,
            "--out",
            str(out),
            "--api-key-env",
            API_KEY_ENV,
            "--provider",
            providers or self._provider,
        ]

    @keyword("Run Client In This Process")
    def run_client_in_this_process(
        self,
        prefix: str,
        requests: int,
        ledger: str,
        name: str | None = None,
        provider_options: str | None = None,
        shared_prefix: str | None = None,
        shared: int = 0,
    ) -> str:
        """What `Run Client` does, in this process (`crash_client.run_here`, with the environment a client process
        is given, no crash point): for the run that finishes a killed client's work, or a client nobody kills. A
        process of its own costs an interpreter's start-up and lowtide and the provider's SDK imported again
        (2-3 s of CPU under coverage), and proves nothing more: the client is killed in its own process, and what
        the next one does with that client's ledger is the same code here. Returns the client's name."""
        name, out = self._new_client(name)
        args = self._client_args(prefix, requests, ledger, out, None)
        if provider_options:
            args += ["--provider-options", provider_options]
        if shared_prefix is not None:
            args += ["--shared-prefix", shared_prefix, "--shared", str(shared)]
        client = _crash_client()
        ran = in_this_process(
            lambda: client.run_here(client.parse_args(args)),
            name,
            self._environment({API_KEY_ENV: API_KEY}),
            loggers=("lowtide", "crash_client"),
        )
        self._clients[name] = _RanHere(name, out, ran.code, ran.stdout, ran.stderr, ran.seconds)
        self._ran_here.append(name)
        logger.info(
            f"{name} ran in this process: {requests} request(s) {prefix}-*, exit code {ran.code} after "
            f"{ran.seconds:.2f} s ({ran.cpu:.1f} s of CPU).\nstdout:\n{ran.stdout}\nstderr:\n{_tail(ran.stderr)}"
        )
        return name

    @keyword("Wait For Client")
    def wait_for_client(self, name: str, timeout: float = 180.0) -> int:
        """Wait for the client to exit and return its exit code (negative: killed by that signal).

        A client still running after `timeout` seconds is a hang: its stacks are logged (SIGUSR1 makes it print
        them), it is stopped and the keyword fails.
        """
        client = self._process_client(name)
        code = client.wait(timeout)
        if code is None:
            # Every client still running prints its stacks: a hang is often one client waiting on another.
            running = [c for c in self._clients.values() if isinstance(c, _Client) and c.code is None]
            for other in running:
                other.popen.send_signal(signal.SIGUSR1)  # every thread's stack (faulthandler)
                other.popen.send_signal(signal.SIGUSR2)  # every asyncio task's stack (the client's own handler)
            time.sleep(1.0)
            for other in running:
                if other is not client:
                    logger.info(f"{other.name}, still running too:\nstderr:\n{_tail(other.stderr, 80)}")
            client.stop()
            raise AssertionError(
                f"{name} was still running after {timeout:g} s (a hang); stopped it.\n"
                f"stdout:\n{client.stdout}\nstderr:\n{_tail(client.stderr, 80)}"
            )
        logger.info(
            f"{name} exited with code {code} after {client.seconds:.2f} s.\n"
            f"stdout:\n{client.stdout}\nstderr:\n{_tail(client.stderr)}"
        )
        return code

    @keyword("Run Client")
    def run_client(
        self,
        prefix: str,
        requests: int,
        ledger: str,
        crashpoint: str | None = None,
        name: str | None = None,
        timeout: float = 180.0,
        provider_options: str | None = None,
    ) -> str:
        """`Start Client` and `Wait For Client`; returns the client's name (its exit code: `Client Exit Code`)."""
        name = self.start_client(
            prefix, requests, ledger, crashpoint=crashpoint, name=name, provider_options=provider_options
        )
        self.wait_for_client(name, timeout=timeout)
        return name

    @keyword("Kill Client")
    def kill_client(self, name: str, timeout: float = 60.0) -> None:
        """SIGKILL the client now (a crash at a moment the test chose from outside: its create seen by the
        emulator, say) and wait until it is gone."""
        client = self._process_client(name)
        client.popen.send_signal(signal.SIGKILL)
        client.wait(timeout)

    @keyword("Client Exit Code")
    def client_exit_code(self, name: str) -> int | None:
        return self._client(name).code

    @keyword("Client Should Have Been Killed")
    def client_should_have_been_killed(self, name: str) -> None:
        """The client died of SIGKILL (exit code -9, what its crash point does) and wrote no answers."""
        client = self._client(name)
        code = client.code
        if code != -signal.SIGKILL:
            raise AssertionError(
                f"{name} should have been killed by its crash point (exit code {-signal.SIGKILL}), "
                f"but its exit code is {code}.\nstdout:\n{client.stdout}\nstderr:\n{_tail(client.stderr)}"
            )
        if client.out.exists():
            raise AssertionError(f"{name} was killed, yet it wrote {client.out}.")

    @keyword("Client Should Have Succeeded")
    def client_should_have_succeeded(self, name: str) -> None:
        client = self._client(name)
        code = client.code
        if code != 0:
            raise AssertionError(
                f"{name} should have exited with 0, but its exit code is {code}.\n"
                f"stdout:\n{client.stdout}\nstderr:\n{_tail(client.stderr)}"
            )

    @keyword("Client Log Should Contain")
    def client_log_should_contain(self, name: str, text: str) -> None:
        client = self._client(name)
        if text not in client.stderr:
            raise AssertionError(f"{name}'s log does not contain {text!r}:\n{_tail(client.stderr)}")

    @keyword("Stop Processes")
    def stop_processes(self) -> None:
        """Stop every process started since the last call (clients and emulator), even if a test failed midway."""
        processes, self._processes = self._processes, []
        self._emulator, self._base_url, self._ledgers, self._ran_here = None, None, [], []
        self._stop(processes)
        self._abandon_ledger_creation()

    @keyword("Stop Clients")
    def stop_clients(self) -> None:
        """Stop every client still running, leaving the emulator up (for suites that share one)."""
        clients = [p for p in self._processes if isinstance(p, _Client)]
        self._processes = [p for p in self._processes if not isinstance(p, _Client)]
        self._ledgers, self._ran_here = [], []
        self._stop(clients)
        self._abandon_ledger_creation()

    @keyword("Clean Up")
    def clean_up(self) -> None:
        """Stop every process and remove the scratch files."""
        try:
            self.stop_processes()
        finally:
            if self._scratch is not None:
                shutil.rmtree(self._scratch, ignore_errors=True)
                self._scratch = None

    # ------------------------------------------------------------------------------------------ the emulator

    @keyword("Arm Fault")
    def arm_fault(
        self, route: str, kind: str, seconds: float | None = None, times: int = 1, status: int | None = None
    ) -> None:
        """`POST /_emulator/faults {"route", "kind", "seconds", "times"}`: e.g. `batches.create`
        `delay_after_commit` (commit, then answer `seconds` later) or `drop_after_commit` (commit, then drop the
        connection without an answer)."""
        body: dict[str, Any] = {"route": route, "kind": kind, "times": times}
        if seconds is not None:
            body["seconds"] = seconds
        if status is not None:
            body["status"] = status
        response = httpx.post(self._require_base_url() + "/_emulator/faults", json=body, timeout=10.0)
        if response.status_code >= 400:
            raise AssertionError(
                f"The emulator refused the fault {body}: {response.status_code} {response.text}\n"
                f"(Does this emulator have the `{kind}` fault kind yet?)"
            )
        logger.info(f"Armed fault {body}: {response.text}")

    @keyword("Reset Emulator")
    def reset_emulator(self) -> None:
        """Forget every batch, call count and fault: the emulator as freshly started."""
        httpx.post(self._require_base_url() + "/_emulator/reset", timeout=10.0).raise_for_status()

    @keyword("Emulator Stats")
    def emulator_stats(self) -> dict[str, Any]:
        response = httpx.get(self._require_base_url() + "/_emulator/stats", timeout=10.0)
        response.raise_for_status()
        stats: dict[str, Any] = response.json()
        logger.info(f"Emulator stats: {_short(stats)}")
        return stats

    @keyword("Emulator Call Count Should Be")
    def emulator_call_count_should_be(self, route: str, expected: int) -> None:
        """How many calls of `route` (`batches.create`, ...) the emulator served, failed or refused ones included."""
        calls = int(self.emulator_stats().get("calls", {}).get(route, 0))
        if calls != expected:
            raise AssertionError(f"The emulator served {calls} call(s) of {route}, expected {expected}.")

    @keyword("Wait Until The Emulator Holds Batches")
    def wait_until_the_emulator_holds_batches(self, count: int, timeout: float = 120.0) -> None:
        """Wait until the emulator has committed `count` batches (a client's create went through)."""
        stat = _PROVIDERS[self._provider].batches_stat
        deadline = time.monotonic() + timeout
        while int(self.emulator_stats().get(stat, 0)) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"The emulator held fewer than {count} batch(es) after {timeout:g} s.")
            time.sleep(0.1)

    @keyword("Emulator Should Hold Batches")
    def emulator_should_hold_batches(self, expected: int) -> None:
        """How many batches the emulator has committed, whether or not their creator heard back."""
        batches = int(self.emulator_stats().get(_PROVIDERS[self._provider].batches_stat, -1))
        if batches != expected:
            raise AssertionError(f"The emulator holds {batches} batch(es), expected {expected}.")

    @keyword("Every Request Should Have Been Created Once")
    def every_request_should_have_been_created_once(self, prefix: str, requests: int, *more: str) -> None:
        """No request paid twice: the emulator's batches hold `PREFIX-1` .. `PREFIX-N` exactly once each.

        First from the API's own list of batches (their request counts add up to N), then from the emulator's
        `created_custom_ids` (how many committed batches held each custom id), which must be 1 for every one.
        """
        expected = _keys(prefix, requests, more)
        requests = len(expected)
        listed = self._list_batches()
        size = _PROVIDERS[self._provider].size
        total = sum(size(batch) for batch in listed) if size is not None else requests
        label = _PROVIDERS[self._provider].label
        summary = ", ".join(f"{label(b)}, {size(b) if size is not None else '?'})" for b in listed)
        logger.info(f"The API lists {len(listed)} batch(es): {summary}")
        if total != requests:
            raise AssertionError(
                f"The API's batches hold {total} request(s) in all, expected {requests} (each request once): {summary}"
            )
        stats = self.emulator_stats()
        created = stats.get(_PROVIDERS[self._provider].created_stat)
        if not isinstance(created, dict):
            raise AssertionError(
                "The emulator's stats have no `created_custom_ids`, so exactly one create per request cannot be "
                f"proven from it (the API's list of batches does hold {total} request(s) for {requests}). "
                f"Stats: {_short(stats)}"
            )
        counts = dict(keys_created(created))  # by key: each custom id is its key and the ledger's identity
        missing = sorted(expected - set(counts), key=_natural)
        twice = {k: v for k, v in sorted(counts.items(), key=lambda kv: _natural(kv[0])) if v != 1}
        strangers = sorted(set(counts) - expected, key=_natural)
        problems = []
        if missing:
            problems.append(f"{len(missing)} never created: {_few(missing)}")
        if twice:
            problems.append(f"{len(twice)} not created exactly once: {_few([f'{k}={v}' for k, v in twice.items()])}")
        if strangers:
            problems.append(f"{len(strangers)} unexpected custom ids: {_few(strangers)}")
        if problems:
            raise AssertionError("created_custom_ids: " + "; ".join(problems))

    # ---------------------------------------------------------------------------------------- answers, ledger

    @keyword("Answers Should Be Complete")
    def answers_should_be_complete(
        self, name: str, prefix: str, requests: int, *more: str
    ) -> dict[str, dict[str, Any]]:
        """The client's output answers `PREFIX-1` .. `PREFIX-N` once each, each with the emulator's reply to its
        own question, its own custom id and a batch id; returns the lines by key."""
        client = self._client(name)
        lines = _answers(client)
        keys = Counter(str(line.get("key")) for line in lines)
        expected = sorted(_keys(prefix, requests, more), key=_natural)
        problems: list[str] = []
        repeated = sorted((k for k, n in keys.items() if n > 1), key=_natural)
        if repeated:
            problems.append(f"answered more than once: {_few(repeated)}")
        missing = [k for k in expected if k not in keys]
        if missing:
            problems.append(f"{len(missing)} not answered: {_few(missing)}")
        unexpected = sorted(set(keys) - set(expected), key=_natural)
        if unexpected:
            problems.append(f"unexpected keys: {_few(unexpected)}")
        by_key = {str(line.get("key")): line for line in lines}
        wrong: list[str] = []
        for key in expected:
            index = int(key.rsplit("-", 1)[1])
            line = by_key.get(key)
            if line is None:
                continue
            text, batch_id = str(line.get("text", "")), str(line.get("batch_id") or "")
            if "error" in line:
                wrong.append(f"{key}: {line['error']}: {line.get('message')}")
            elif not text.startswith(REPLY.format(index=index) + ":"):
                wrong.append(f"{key}: text {text!r}")
            elif key_of(str(line.get("custom_id"))) != key or not batch_id.startswith(
                _PROVIDERS[self._provider].batch_prefix
            ):
                wrong.append(f"{key}: custom id {line.get('custom_id')!r}, batch id {batch_id!r}")
        if wrong:
            problems.append(f"{len(wrong)} wrong answer(s): {_few(wrong)}")
        if problems:
            raise AssertionError(f"The answers of {name} are not complete: " + "; ".join(problems))
        batches = Counter(str(line["batch_id"]) for line in lines)
        logger.info(f"{name}: {len(lines)} answers from {len(batches)} batch(es): {dict(batches)}")
        return by_key

    @keyword("Answers Should Be The Same")
    def answers_should_be_the_same(self, first: str, second: str) -> None:
        """Both clients' outputs give every key the same text, custom id and batch id."""
        answers = []
        for name in (first, second):
            lines = _answers(self._client(name))
            fields = ("text", "custom_id", "batch_id")
            answers.append({line["key"]: tuple(line.get(f) for f in fields) for line in lines})
        if answers[0] != answers[1]:
            differ = sorted(
                (k for k in set(answers[0]) | set(answers[1]) if answers[0].get(k) != answers[1].get(k)), key=_natural
            )
            raise AssertionError(
                f"{first} and {second} differ on {len(differ)} key(s): "
                + _few([f"{k}: {answers[0].get(k)} vs {answers[1].get(k)}" for k in differ])
            )

    @keyword("Ledger Status")
    def ledger_status(self, ledger: str) -> dict[str, Any]:
        """`lowtide status --ledger LEDGER --json`, parsed."""
        result = subprocess.run(
            [*self._lowtide(), "status", "--ledger", ledger, "--json"],
            capture_output=True,
            text=True,
            timeout=60,
            env=self._environment({}),
            check=False,
        )
        if result.returncode != 0:
            raise AssertionError(f"lowtide status exited with {result.returncode}:\n{result.stderr}")
        report: dict[str, Any] = json.loads(result.stdout)
        tickets = Counter(t["state"] for t in report["tickets"])
        batches = [(b["id"], b["batch_id"], b["state"], b["requests"]) for b in report["batches"]]
        logger.info(f"Ledger {ledger}: tickets {dict(tickets)}; batches (id, API id, state, requests) {batches}")
        return report

    @keyword("Every Ticket Should Be Collected")
    def every_ticket_should_be_collected(self, ledger: str, prefix: str, requests: int) -> None:
        """`lowtide status --json`'s report lists exactly `PREFIX-1` .. `PREFIX-N`, every one `collected`.

        The report is made in this process (`_status_report`), as `Ledger Should Show A Crash At` makes it: the
        command's start-up would cost a test more than the check."""
        report = _status_report(ledger)
        states = {t["key"]: t["state"] for t in report["tickets"]}
        expected = {f"{prefix}-{i}" for i in range(1, requests + 1)}
        problems = []
        if set(states) != expected:
            problems.append(
                f"keys missing {_few(sorted(expected - set(states), key=_natural))}, "
                f"unexpected {_few(sorted(set(states) - expected, key=_natural))}"
            )
        other = {k: s for k, s in states.items() if s != "collected"}
        if other:
            problems.append(f"{len(other)} not collected: {_few([f'{k}={s}' for k, s in sorted(other.items())])}")
        if problems:
            raise AssertionError(f"Ledger {ledger}: " + "; ".join(problems))

    @keyword("Every Batch Should Be Collected")
    def every_batch_should_be_collected(self, ledger: str) -> None:
        """`lowtide status --json`'s report lists no batch still outstanding: one whose results were all stored
        before a crash was closed by the next program's calls, without being collected again."""
        report = _status_report(ledger)
        open_batches = [(b["id"], b["state"]) for b in report["batches"] if b["state"] in _OUTSTANDING]
        if open_batches:
            raise AssertionError(f"Ledger {ledger}: batches not collected: {open_batches}")

    @keyword("Every Result Should Be Stored Once")
    def every_result_should_be_stored_once(self, ledger: str) -> None:
        """No request has two results stored from one batch: a batch collected again after a crash (part of its
        results stored before it) stores only the results the ledger lacked."""
        opened = _opened(ledger)
        try:
            columns = COPIED["results"]
            batch, key = columns.index("batch_id"), columns.index("key")
            stored = Counter((row[batch], row[key]) for rows in opened.export_rows("results") for row in rows)
        finally:
            opened.close()
        twice = sorted(f"{k} in {b}: {n}" for (b, k), n in stored.items() if n > 1)
        logger.info(f"Ledger {ledger}: {sum(stored.values())} results, of {len(stored)} requests and batches")
        if twice:
            raise AssertionError(f"Ledger {ledger}: {len(twice)} result(s) stored more than once: {_few(twice)}")

    @keyword("Ledger Should Show A Crash At")
    def ledger_should_show_a_crash_at(self, ledger: str, stage: str, requests: int) -> None:
        """What the ledger holds right after a client died at `stage`: proof that it died where it was meant to.

        `after-intent`, `during-create`, `after-create`, `after-step-<step>` (a create step such as the uploaded input
        file recorded): one batch intent without the API's id, every request submitting. `while-polling`: the API's
        batch id recorded, every request waiting on it. `while-streaming`: the first chunk of results
        (`RESULTS_PER_TRANSACTION`, or all when fewer) stored, the batch not marked collected. `after-results`:
        every result stored, the batch not marked collected.
        """
        report = _status_report(ledger)
        states = Counter(t["state"] for t in report["tickets"])
        batches = report["batches"]
        logger.info(f"Ledger after the crash: tickets {dict(states)}; batches {batches}")
        stage = stage.partition(":")[0]
        problems: list[str] = []
        if sum(states.values()) != requests:
            problems.append(f"{sum(states.values())} tickets, expected {requests}")
        if len(batches) != 1:
            problems.append(f"{len(batches)} batches, expected 1")
        batch = batches[0] if batches else {}
        if stage in ("after-intent", "during-create", "after-create") or stage.startswith("after-step-"):
            if batch.get("state") != "intent" or batch.get("batch_id") is not None:
                problems.append(f"batch {batch}, expected an intent without the API's id")
            if states != Counter({"submitting": requests}):
                problems.append(f"ticket states {dict(states)}, expected all submitting")
        elif stage == "while-polling":
            prefix = _PROVIDERS[self._provider].batch_prefix
            if batch.get("state") != "waiting-on-batch" or not str(batch.get("batch_id")).startswith(prefix):
                problems.append(f"batch {batch}, expected waiting-on-batch with the API's id")
            if states != Counter({"waiting-on-batch": requests}):
                problems.append(f"ticket states {dict(states)}, expected all waiting-on-batch")
        elif stage == "after-results":
            if batch.get("state") != "ended":
                problems.append(f"batch {batch}, expected ended (every result stored, not said collected)")
            if states != Counter({"collected": requests}):
                problems.append(f"ticket states {dict(states)}, expected all collected")
        elif stage == "while-streaming":
            stored = min(RESULTS_PER_TRANSACTION, requests)
            if batch.get("state") != "ended":
                problems.append(f"batch {batch}, expected ended (results not all collected)")
            if states["collected"] != stored:
                problems.append(f"ticket states {dict(states)}, expected {stored} collected (one chunk)")
        else:
            raise AssertionError(f"Unknown crash stage {stage!r}.")
        if problems:
            raise AssertionError(f"After a crash at {stage}: " + "; ".join(problems))

    @keyword("Log Diagnostics")
    def log_diagnostics(self) -> None:
        """For a failed test: the emulator's stats, every client's exit code and log, and every ledger's rows."""
        if self._base_url is not None:
            try:
                stats = self.emulator_stats()
                logger.info(f"Emulator stats (full): {json.dumps(stats, sort_keys=True)}")
            except Exception as exc:
                logger.info(f"No emulator stats: {exc!r}")
        clients = [p for p in self._processes if isinstance(p, _Client)]
        for client in [*clients, *(self._clients[name] for name in self._ran_here)]:
            logger.info(
                f"{client.name} exit code {client.code} after {client.seconds:.2f} s\n"
                f"stdout:\n{client.stdout}\nstderr:\n{_tail(client.stderr, 60)}"
            )
        for ledger in self._ledgers:
            if not ledger.exists():
                continue
            with sqlite3.connect(ledger, timeout=10.0) as db:
                batches = db.execute(
                    "SELECT id, provider_batch_id, state, request_count, owner, note FROM batches ORDER BY intent_at"
                ).fetchall()
                requests = db.execute(
                    "SELECT state, batch_id, owner IS NOT NULL, attempts, COUNT(*) FROM request_view"
                    " GROUP BY state, batch_id, owner IS NOT NULL, attempts"
                ).fetchall()
            logger.info(
                f"Ledger {ledger}\nbatches (id, API id, state, requests, owner, note):\n"
                + "\n".join(map(str, batches))
                + "\nrequests (state, batch, owned, attempts, count):\n"
                + "\n".join(map(str, requests))
            )

    # -------------------------------------------------------------------------------------------- internals

    @property
    def _workdir(self) -> Path:
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix="lowtide-crash-"))
        return self._scratch

    def _lowtide(self) -> list[str]:
        script = Path(sys.executable).parent / "lowtide"
        if script.is_file() and os.access(script, os.X_OK):
            return [str(script)]
        return [sys.executable, "-m", "lowtide.cli"]

    def _environment(self, extra: Mapping[str, str]) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != CRASHPOINT_ENV}
        env.update(extra)
        return env

    def _start(self, argv: Sequence[str], name: str, extra_env: Mapping[str, str]) -> Process:
        self._started += 1
        process = Process(argv, self._workdir, f"{name}-{self._started}", self._environment(extra_env))
        self._processes.append(process)
        logger.info(f"Started {' '.join(argv)} (pid {process.popen.pid})")
        return process

    def _stop(self, processes: Sequence[Process]) -> None:
        stop_all(processes)

    def _abandon_ledger_creation(self) -> None:
        db, self._creating = self._creating, None
        if db is not None:
            db.close()

    def _client(self, name: str) -> _Client | _RanHere:
        client = self._clients.get(name)
        if client is None:
            raise AssertionError(f"No client named {name!r} was started in this suite.")
        return client

    def _process_client(self, name: str) -> _Client:
        client = self._client(name)
        if not isinstance(client, _Client):
            raise AssertionError(f"{name} ran in this process: it has no process to wait for or kill.")
        return client

    def _require_base_url(self) -> str:
        if self._base_url is None:
            raise AssertionError("Start the emulator first.")
        return self._base_url

    def _list_batches(self) -> list[dict[str, Any]]:
        """Every batch the API lists (newest first), through the API itself rather than the admin routes."""
        provider = _PROVIDERS[self._provider]
        found: list[dict[str, Any]] = []
        params: dict[str, Any] = {**dict(provider.query), provider.page_size: 100}
        while True:
            response = httpx.get(
                self._require_base_url() + provider.list_path, params=params, headers=provider.headers, timeout=10.0
            )
            response.raise_for_status()
            page = response.json()
            if isinstance(page, list):  # a bare list (Together's), one page of every job
                found.extend(page)
                return found
            items = page.get(provider.items, [])
            found.extend(items)
            if provider.numbered:
                cursor = str(int(params.get(provider.cursor, 0)) + 1) if len(items) == 100 else None
            else:
                cursor = provider.next_page(page)
            if not cursor:
                return found
            params[provider.cursor] = cursor


def _opened(ledger: str) -> LedgerStore:
    if ledger.startswith("postgresql://"):
        from lowtide.ledger.postgres.ledger import PostgresLedger  # the `postgres` extra: its suites alone

        return PostgresLedger(ledger)
    return Ledger(ledger)


def _status_report(ledger: str) -> dict[str, Any]:
    """What `lowtide status --ledger LEDGER --json` prints, made in this process (the command costs an interpreter
    start-up): the same report, as JSON."""
    opened = _opened(ledger)
    try:
        report: dict[str, Any] = status(opened).as_json()
    finally:
        opened.close()
    tickets = Counter(t["state"] for t in report["tickets"])
    batches = [(b["id"], b["batch_id"], b["state"], b["requests"]) for b in report["batches"]]
    logger.info(f"Ledger {ledger}: tickets {dict(tickets)}; batches (id, API id, state, requests) {batches}")
    return report


def _answers(client: _Client | _RanHere) -> list[dict[str, Any]]:
    """The client's output lines; a client that wrote none fails the keyword."""
    if not client.out.exists():
        raise AssertionError(f"{client.name} wrote no output ({client.out}).\nstderr:\n{_tail(client.stderr)}")
    return [json.loads(line) for line in client.out.read_text(encoding="utf-8").splitlines() if line.strip()]


def _keys(prefix: str, requests: int, more: Sequence[str]) -> set[str]:
    """`PREFIX-1` .. `PREFIX-N`, and those of each further `PREFIX N` pair given as two words in `more`."""
    pairs = [(prefix, int(requests)), *((more[i], int(more[i + 1])) for i in range(0, len(more), 2))]
    return {f"{p}-{i}" for p, n in pairs for i in range(1, n + 1)}


def _natural(key: str) -> tuple[str, int]:
    head, _, tail = key.rpartition("-")
    return (head, int(tail)) if tail.isdigit() else (key, -1)


def _few(items: Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" (and {len(items) - limit} more)" if len(items) > limit else "")


def _tail(text: str, lines: int = 30) -> str:
    return "\n".join(text.splitlines()[-lines:])


def _short(stats: Mapping[str, Any]) -> str:
    """Stats with `created_custom_ids` summarized: it has one entry per request."""
    created = stats.get("created_custom_ids")
    if not isinstance(created, dict):
        return json.dumps(stats, sort_keys=True)
    histogram = Counter(int(v) for v in created.values())
    rest = {k: v for k, v in stats.items() if k != "created_custom_ids"}
    return f"{json.dumps(rest, sort_keys=True)} created_custom_ids: {len(created)} ids, times created {dict(histogram)}"
