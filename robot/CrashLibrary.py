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

import shutil
import signal
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import httpx
from robot.api import logger
from robot.api.deco import keyword, library

from _crash_checks import CrashChecks
from _crash_providers import _PROVIDERS, API_KEY, API_KEY_ENV
from _crash_state import CLIENT, CRASHPOINT_ENV, _Client, _crash_client, _RanHere, _tail
from _in_process import in_this_process
from _processes import UNMEASURED, emulator_argv, wait_until_listening
from lowtide.ledger.sqlite import Ledger
from lowtide.ledger.sqlite.schema import MIGRATIONS


@library(scope="SUITE", auto_keywords=False)
class CrashLibrary(CrashChecks):
    """Crash a batch-mode client at a chosen stage, run it again, and check what the API and the ledger hold."""

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

    @keyword("Emulator Batches Take")
    def emulator_batches_take(self, seconds: float) -> None:
        """Batches the suite's emulator creates from now on take `seconds` (those out keep theirs): a test waits on
        the one batch it needs running, not on every batch it makes."""
        response = httpx.post(
            self._require_base_url() + "/_emulator/processing", json={"seconds": float(seconds)}, timeout=10.0
        )
        response.raise_for_status()
        self._processing = float(seconds)

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

        A client still running after `timeout` seconds (counted as a free core's: `Process.wait_unless_stuck`) is a
        hang: its stacks are logged (SIGUSR1 makes it print them), it is stopped and the keyword fails.
        """
        client = self._process_client(name)
        code = client.wait_unless_stuck(timeout)
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
                f"{name} was still running after {timeout:g} s of a free core ({client.seconds:.0f} s of wall; a hang);"
                f" stopped it.\n"
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
