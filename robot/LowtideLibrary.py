"""Robot keywords that run `lowtide` for real: the `lowtide emulator` server as a separate process on a loopback
socket, and lowtide's `Actor` and `ClaudeBatchProvider` talking to it through the official SDK.

One instance per suite. Its async calls share one `asyncio.Runner` (the SDK client's connection pool is bound to
the loop that opened it), closed by `Clean Up`, which also stops every process the suite started.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Coroutine
from decimal import Decimal
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import anthropic
import httpx
from anthropic.types.messages import MessageBatch
from robot.api import logger
from robot.api.deco import keyword, library

from _processes import Process, emulator_argv, wait_until_listening, whom_file_modes_stop
from lowtide import (
    Actor,
    ActorRequest,
    ActorResponse,
    BatchSettings,
    BatchTimeoutError,
    ClaudeBatchProvider,
    Outcome,
    ProviderOptions,
    TimeoutPolicy,
)
from lowtide.core.clock import SystemClock
from lowtide.providers.anthropic.batch import PreparedBatch

T = TypeVar("T")

API_KEY_ENV = "LOWTIDE_ROBOT_API_KEY"
API_KEY = "robot-key"
DEMO_TOTALS = re.compile(
    r"Cost at batch prices: \$(?P<batch>[0-9.]+)\. The same calls live: \$(?P<live>[0-9.]+)\. "
    r"Saved \$(?P<saved>[0-9.]+)"
)


class _RecordingClock(SystemClock):
    """Real time, with every wait lowtide asks of it recorded (in seconds, in order)."""

    def __init__(self) -> None:
        self.sleeps: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        await super().sleep(seconds)


@library(scope="SUITE", auto_keywords=False)
class LowtideLibrary:
    """Real processes, real sockets: the `lowtide` command, the emulator server, and lowtide's batch path."""

    def __init__(self) -> None:
        self._runner = asyncio.Runner()
        self._scratch: Path | None = None
        self._processes: list[Process] = []
        self._emulator: Process | None = None
        self._base_url: str | None = None
        self._actors: list[Actor] = []
        self._actor: Actor | None = None
        self._provider: ClaudeBatchProvider | None = None
        self._sent: dict[str, dict[str, ActorRequest]] = {}
        """The requests of each batch the library sent, keyed by batch id then custom id, for a later `collect`."""
        self._clock = _RecordingClock()
        """The actors' clock: real time, each wait lowtide asks of it recorded."""
        self._sleeps_before = 0

    # ---------------------------------------------------------------------------------------------- processes

    @keyword("Lowtide Command")
    def lowtide_command(self) -> list[str]:
        """The `lowtide` console script beside this Python, or `python -m lowtide.cli` when there is none."""
        script = Path(sys.executable).parent / "lowtide"
        if script.is_file() and os.access(script, os.X_OK):
            return [str(script)]
        return [sys.executable, "-m", "lowtide.cli"]

    @keyword("Python Executable")
    def python_executable(self) -> str:
        return sys.executable

    @keyword("Create Scratch Directory")
    def create_scratch_directory(self) -> str:
        """A fresh directory, removed by `Clean Up`."""
        return tempfile.mkdtemp(dir=self._workdir, prefix="scratch-")

    @keyword("Run Lowtide As A User Whom File Modes Stop")
    def run_lowtide_as_a_user_whom_file_modes_stop(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`lowtide args` as a user for whom a read-only mode counts (`whom_file_modes_stop`: root without its
        capabilities, when this process is root), wherever the checkout is."""
        argv = whom_file_modes_stop([*self.lowtide_command(), *args])
        done = subprocess.run(argv, capture_output=True, text=True, timeout=90, check=False)
        logger.info(f"{' '.join(argv)}: rc {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}")
        return done

    @keyword("A User Whom File Modes Stop Cannot Write In")
    def a_user_whom_file_modes_stop_cannot_write_in(self, folder: str) -> None:
        """Fails unless that user is refused a new file in `folder`: what the tests that run it assume."""
        probe = Path(folder) / ".written"
        argv = whom_file_modes_stop(["sh", "-c", ': > "$1"', "sh", str(probe)])
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
        if done.returncode == 0 or probe.exists():
            probe.unlink(missing_ok=True)
            raise AssertionError(f"{' '.join(argv)} wrote in {folder}: file modes do not stop that user")
        logger.info(f"{' '.join(argv)}: refused, as it should be: {done.stderr.strip()}")

    @keyword("Ask Lowtide Serve In Front Of")
    def ask_lowtide_serve_in_front_of(self, actor_file: str, upstream: str) -> tuple[int, Any]:
        """Start `lowtide serve` for `actor_file` (its ledger beside it), its upstream `ANTHROPIC_BASE_URL` set to
        `upstream`; send it one Messages request; stop it. Returns the answer's status and JSON body."""
        folder = Path(actor_file).parent
        argv = [*self.lowtide_command(), "serve", "--actor", actor_file, "--port", "0", "--client-key", "local-secret"]
        argv += ["--ledger", str(folder / "serve.sqlite3")]
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "ANTHROPIC_BASE_URL": upstream, "ANTHROPIC_API_KEY": API_KEY}
        process = Process(argv, self._workdir, f"serve-{len(self._processes) + 1}", env)
        self._processes.append(process)
        try:
            deadline = time.monotonic() + 60
            while (found := re.search(r"lowtide serve listening on (http://\S+)", process.stdout)) is None:
                if process.popen.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"lowtide serve did not start:\n{process.stdout}\n{process.stderr}")
                time.sleep(0.05)
            body = {"model": "claude-sonnet-5-5", "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}]}
            answer = httpx.post(
                f"{found.group(1)}/v1/messages", json=body, headers={"x-api-key": "local-secret"}, timeout=60
            )
            logger.info(f"lowtide serve answered {answer.status_code}: {answer.text}")
            return answer.status_code, answer.json()
        finally:
            process.stop()

    @keyword("Start Emulator")
    def start_emulator(
        self, processing_seconds: float = 1.0, cancel_seconds: float = 0.5, timeout: float = 120.0, *options: str
    ) -> str:
        """Start `lowtide emulator` on a free loopback port and return its base URL, read from its one stdout line.
        `options` go to the command as they are (`--rpm`, `120`, say)."""
        if self._emulator is not None and self._emulator.popen.poll() is None:
            raise AssertionError("An emulator is already running in this suite; stop it first.")
        argv = emulator_argv(
            self.lowtide_command(), processing_seconds=processing_seconds, cancel_seconds=cancel_seconds
        )
        argv += list(options)
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        process = Process(argv, self._workdir, f"emulator-{len(self._processes) + 1}", env)
        self._processes.append(process)
        self._emulator = process
        logger.info(f"Started {' '.join(argv)} (pid {process.popen.pid})")
        self._base_url = wait_until_listening(process, timeout)
        return self._base_url

    @keyword("Suite Emulator")
    def suite_emulator(self, processing_seconds: float = 0.0) -> str:
        """The emulator the suite's tests share: the one running, else one started now (kept until `Stop Emulator`
        or `Clean Up`). An emulator's start imports every API it serves, seconds of CPU under coverage: tests that
        only need an emulator to talk to share one."""
        if self._emulator is not None and self._emulator.popen.poll() is None:
            return self._require_base_url()
        return self.start_emulator(processing_seconds)

    @keyword("Stop Emulator")
    def stop_emulator(self) -> int | None:
        """Stop the emulator with SIGTERM (SIGKILL only if it ignores that) and return its exit code.

        Safe in a teardown: stopping an emulator that has exited, or was never started, is not an error.
        """
        process = self._emulator
        if process is None:
            logger.info("No emulator to stop.")
            return None
        code = process.stop()
        logger.info(f"Emulator exited with code {code}.\nstderr:\n{process.stderr}")
        return code

    @keyword("Emulator Output")
    def emulator_output(self) -> str:
        """Everything the current emulator wrote so far, stdout then stderr."""
        process = self._require_emulator()
        return process.stdout + process.stderr

    @keyword("Port Should Be Closed")
    def port_should_be_closed(self, url: str) -> None:
        parts = urlsplit(url)
        host, port = parts.hostname or "127.0.0.1", parts.port or 80
        try:
            with socket.create_connection((host, port), timeout=1.0):
                pass
        except OSError:
            return
        raise AssertionError(f"{host}:{port} still accepts connections.")

    @keyword("Clean Up")
    def clean_up(self) -> None:
        """Close actors, the provider and the event loop; stop every process; remove the scratch files."""
        errors: list[str] = []
        try:
            for actor in self._actors:
                self._run(actor.aclose())
            if self._provider is not None:
                self._run(self._provider.aclose())
        except Exception as exc:
            errors.append(f"closing clients: {exc!r}")
        finally:
            self._actors, self._actor, self._provider = [], None, None
            self._runner.close()
        for process in self._processes:
            try:
                code = process.stop()
                logger.info(f"{process.name} exited with code {code}.\nstderr:\n{process.stderr}")
            except Exception as exc:
                errors.append(f"stopping {process.name}: {exc!r}")
        self._processes, self._emulator = [], None
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None
        if errors:
            raise AssertionError("Clean up failed: " + "; ".join(errors))

    # ------------------------------------------------------------------------------------------ admin routes

    @keyword("Reset Emulator")
    def reset_emulator(self) -> None:
        self._admin("POST", "/_emulator/reset")

    @keyword("Emulator Stats")
    def emulator_stats(self) -> dict[str, Any]:
        stats: dict[str, Any] = self._admin("GET", "/_emulator/stats").json()
        logger.info(f"Emulator stats: {stats}")
        return stats

    @keyword("Emulator Call Count")
    def emulator_call_count(self, route: str) -> int:
        """How many calls of `route` (e.g. `batches.retrieve`) the emulator served since its last reset."""
        calls: dict[str, int] = self.emulator_stats().get("calls", {})
        return int(calls.get(route, 0))

    @keyword("Inject Fault")
    def inject_fault(self, route: str, status: int, times: int = 1, retry_after: float | None = None) -> None:
        """Make the next `times` calls of `route` fail with HTTP `status` (and a `retry-after`, when given)."""
        body = {"route": route, "status": status, "times": times, "retry_after": retry_after}
        self._admin("POST", "/_emulator/faults", json=body)

    # ---------------------------------------------------------------------------------------- actor, batches

    @keyword("Create Batch Actor")
    def create_batch_actor(
        self,
        name: str,
        model: str = "claude-sonnet-5-5",
        poll_interval: float = 0.1,
        max_wait: float = 30.0,
        on_timeout: str = "cancel",
        api_retries: int = 3,
        max_attempts: int = 3,
    ) -> Actor:
        """An actor in batch mode against the emulator; its key comes from the environment variable it names.

        Each actor gets a ledger of its own, so no test sees another's keys (or the user's real ledger).
        """
        os.environ[API_KEY_ENV] = API_KEY
        ledger = Path(tempfile.mkdtemp(dir=self._workdir, prefix="ledger-")) / "ledger.sqlite3"
        actor = Actor(
            {
                "name": name,
                "model": model,
                "max_tokens": 256,
                "system_prompt": "You answer briefly.",
                "batch_processing": "batch",
                "base_url": self._require_base_url(),
                "api_key_env": API_KEY_ENV,
                "batch": {
                    "poll_interval": poll_interval,
                    "max_wait": max_wait,
                    "on_timeout": on_timeout,
                    "api_retries": api_retries,
                    "max_attempts": max_attempts,
                    "coalesce_window": 0.05,
                },
            },
            ledger=ledger,
            clock=self._clock,
        )
        self._actors.append(actor)
        self._actor = actor
        return actor

    @keyword("Run Prompts In One Batch")
    def run_prompts_in_one_batch(self, *prompts: str) -> list[Outcome]:
        """`actor.run_many` over the prompts, keyed `request-0`, `request-1`, ...; returns one outcome (response or
        error) per prompt, in order."""
        actor = self._require_actor()
        started = time.monotonic()
        self._sleeps_before = len(self._clock.sleeps)
        keys = [f"request-{index}" for index in range(len(prompts))]
        outcomes = self._run(actor.run_many(list(prompts), keys=keys))
        logger.info(f"run_many took {time.monotonic() - started:.3f} s")
        for prompt, outcome in zip(prompts, outcomes, strict=True):
            logger.info(f"{prompt!r} -> {type(outcome).__name__}: {outcome!r}")
        return outcomes

    @keyword("Lowtide Should Have Waited As The API Asked")
    def lowtide_should_have_waited_as_the_api_asked(self, seconds: float, poll_interval: float) -> None:
        """Among the waits of the last `Run Prompts In One Batch` (the actors' clock records each), one of `seconds`
        (the API's `retry-after`), and none longer than it but the poll interval's: not lowtide's own backoff, which
        starts at 1 s. Waits as lowtide asked for them, whatever a loaded machine made of them."""
        waits = self._clock.sleeps[self._sleeps_before :]
        logger.info(f"waits: {waits}")
        if not any(abs(wait - seconds) < 0.01 for wait in waits):
            raise AssertionError(f"No wait of {seconds:g} s among {waits}.")
        longer = [wait for wait in waits if wait > seconds + 0.01 and abs(wait - poll_interval) > 0.01]
        if longer:
            raise AssertionError(f"Waits other than the API's {seconds:g} s and the poll interval: {longer}.")

    @keyword("Run Prompt")
    def run_prompt(self, prompt: str, mode: str | None = None) -> ActorResponse[Any]:
        """`actor.run` for one prompt, in the configured mode or in `mode`."""
        response = self._run(self._require_actor().run(prompt, mode=mode))
        logger.info(f"{prompt!r} -> {response!r}")
        return response

    @keyword("Run Prompt Expecting Batch Timeout")
    def run_prompt_expecting_batch_timeout(self, prompt: str, custom_id: str = "parked-1") -> BatchTimeoutError:
        """`actor.run` that must raise `BatchTimeoutError`; the request is remembered to collect its batch later."""
        actor = self._require_actor()
        request = actor.request(prompt, custom_id=custom_id)
        started = time.monotonic()
        try:
            response = self._run(actor.run(prompt, custom_id=custom_id))
        except BatchTimeoutError as exc:
            logger.info(f"BatchTimeoutError after {time.monotonic() - started:.2f} s: {exc}")
            self._sent[exc.batch_id] = {self._custom_id(custom_id): request}  # as the ledger sent it
            return exc
        raise AssertionError(f"Expected BatchTimeoutError, got a response: {response!r}")

    @keyword("Outcome Should Be A")
    def outcome_should_be_a(self, outcome: Outcome, kind: str) -> None:
        """`kind` is `ActorResponse` or the exact class name of an error (`BatchRequestExpired`, ...)."""
        ok = isinstance(outcome, ActorResponse) if kind == "ActorResponse" else type(outcome).__name__ == kind
        if not ok:
            raise AssertionError(f"Expected {kind}, got {type(outcome).__name__}: {outcome!r}")

    def _custom_id(self, key: str) -> str:
        """The custom id the current actor's ledger gives a request keyed `key` (the key and its identity)."""
        actor = self._require_actor()
        return actor.batch_codec().custom_id_for(key, actor.ledger.identity())

    @keyword("Outcome Should Name The Request")
    def outcome_should_name_the_request(self, outcome: Outcome, key: str) -> None:
        """A request's own error names its custom id: `key` with the ledger's identity."""
        if getattr(outcome, "custom_id", None) != self._custom_id(key):
            raise AssertionError(f"{outcome!r} names {getattr(outcome, 'custom_id', None)}, not the request {key}")

    @keyword("Response Should Be Well Formed")
    def response_should_be_well_formed(self, response: Outcome, custom_id: str, batch_id: str, model: str) -> None:
        """Text, content, usage, cost at batch prices and every id a batch-mode response carries. `custom_id` is the
        request's own (a batch outside the ledger), or its key in the current actor's ledger."""
        if not isinstance(response, ActorResponse):
            raise AssertionError(f"Expected a response, got {type(response).__name__}: {response!r}")
        problems: list[str] = []
        if not response.text.strip():
            problems.append("empty text")
        if not response.content:
            problems.append("no content blocks")
        if response.stop_reason is None:
            problems.append("no stop_reason")
        if response.usage.input_tokens <= 0 or response.usage.output_tokens <= 0:
            problems.append(f"usage without tokens: {response.usage!r}")
        if response.mode.value != "batch":
            problems.append(f"mode {response.mode.value}")
        if response.provider != "anthropic":
            problems.append(f"provider {response.provider}")
        if not response.model.startswith(model):
            problems.append(f"model {response.model} is not {model}")
        ids = response.ids
        if ids.batch_id != batch_id:
            problems.append(f"batch id {ids.batch_id} is not {batch_id}")
        if ids.custom_id != custom_id and (self._actor is None or ids.custom_id != self._custom_id(custom_id)):
            problems.append(f"custom id {ids.custom_id} is not {custom_id}, nor the ledger's custom id of that key")
        if not (ids.message_id or "").startswith("msg_"):
            problems.append(f"message id {ids.message_id}")
        cost = response.cost
        if cost is None:
            problems.append("no cost")
        elif cost.pricing != "batch" or cost.total_usd <= 0:
            problems.append(f"cost not at batch prices: {cost!r}")
        if problems:
            raise AssertionError(f"Response {custom_id} is not well formed: {'; '.join(problems)}")

    @keyword("Cost Should Be Half The Live Price")
    def cost_should_be_half_the_live_price(self, response: Outcome) -> None:
        if not isinstance(response, ActorResponse) or response.cost is None:
            raise AssertionError(f"Expected a priced response, got {response!r}")
        cost = response.cost
        if cost.total_usd * 2 != cost.live_equivalent_usd or cost.savings_usd != cost.total_usd:
            raise AssertionError(
                f"Batch cost {cost.total_usd} is not half the live price {cost.live_equivalent_usd} ({cost!r})"
            )
        if cost.input_usd + cost.output_usd != cost.total_usd:
            raise AssertionError(f"Cost parts do not add up: {cost!r}")

    @keyword("Open Batch Provider")
    def open_batch_provider(self, poll_interval: float = 0.1, max_wait: float = 30.0) -> ClaudeBatchProvider:
        """A `ClaudeBatchProvider` built directly from options (base URL and key), as a caller parking batches would."""
        if self._provider is not None:
            self._run(self._provider.aclose())
        settings = BatchSettings(
            poll_interval=poll_interval, max_wait=max_wait, on_timeout=TimeoutPolicy.LEAVE, api_retries=3
        )
        options = ProviderOptions(api_key=API_KEY, base_url=self._require_base_url(), batch=settings)
        self._provider = ClaudeBatchProvider(options)
        return self._provider

    @keyword("Submit Batch")
    def submit_batch(self, *prompts: str, model: str = "claude-haiku-4-5", prefix: str = "job") -> str:
        """`provider.submit(PreparedBatch([...]))` with custom ids `PREFIX-1`, `PREFIX-2`, ...; returns the batch id."""
        requests = [
            ActorRequest.model_validate(
                {
                    "model": model,
                    "max_tokens": 128,
                    "messages": [{"role": "user", "content": prompt}],
                    "custom_id": f"{prefix}-{index}",
                }
            )
            for index, prompt in enumerate(prompts, start=1)
        ]
        prepared = PreparedBatch(requests)
        batch = self._run(self._batch_provider().submit(prepared))
        logger.info(f"Submitted {batch.id}: {batch.processing_status}, {batch.request_counts!r}")
        self._sent[batch.id] = prepared.requests
        return batch.id

    @keyword("Cancel Batch")
    def cancel_batch(self, batch_id: str) -> str:
        """`provider.cancel(batch_id)`; returns the processing status the API answered with."""
        batch = self._run(self._batch_provider().cancel(batch_id))
        return batch.processing_status

    @keyword("Wait For Batch")
    def wait_for_batch(self, batch_id: str) -> MessageBatch:
        """`provider.wait(batch_id)`: poll until the batch has ended."""
        batch = self._run(self._batch_provider().wait(batch_id))
        logger.info(f"{batch.id}: {batch.processing_status}, {batch.request_counts!r}")
        return batch

    @keyword("Collect Batch Results")
    def collect_batch_results(self, batch_id: str) -> list[Outcome]:
        """`provider.collect(...)` with the requests sent in that batch; outcomes in the order they were sent."""
        requests = self._sent.get(batch_id)
        if requests is None:
            raise AssertionError(f"This suite sent no batch {batch_id}.")
        outcomes = self._run(self._batch_provider().collect(batch_id, requests))
        for custom_id, outcome in outcomes.items():
            logger.info(f"{custom_id} -> {type(outcome).__name__}: {outcome!r}")
        return [outcomes[custom_id] for custom_id in requests]

    @keyword("Retrieve Batch With SDK")
    def retrieve_batch_with_sdk(self, batch_id: str) -> MessageBatch:
        """The batch as the official SDK sees it over the socket, independently of lowtide."""
        with anthropic.Anthropic(api_key=API_KEY, base_url=self._require_base_url(), max_retries=0) as client:
            batch = client.messages.batches.retrieve(batch_id)
        logger.info(f"SDK sees {batch.id}: {batch.processing_status}, {batch.request_counts!r}")
        return batch

    # ---------------------------------------------------------------------------------------------- the CLI

    @keyword("Demo Report Should Show Half Price")
    def demo_report_should_show_half_price(self, report: str) -> None:
        """The demo's closing totals: batch cost is half the live cost, and the saving is their difference."""
        match = DEMO_TOTALS.search(report)
        if match is None:
            raise AssertionError(f"No cost totals in the demo report:\n{report}")
        batch, live, saved = (Decimal(match.group(name)) for name in ("batch", "live", "saved"))
        if batch <= 0 or live <= 0:
            raise AssertionError(f"Costs should be positive: batch {batch}, live {live}")
        if abs(batch * 2 - live) > Decimal("0.000002") or abs(live - batch - saved) > Decimal("0.000002"):
            raise AssertionError(f"Batch ${batch}, live ${live}, saved ${saved}: not half price")

    # -------------------------------------------------------------------------------------------- internals

    @property
    def _workdir(self) -> Path:
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix="lowtide-robot-"))
        return self._scratch

    def _run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return self._runner.run(coroutine)

    def _admin(self, method: str, path: str, json: Any = None) -> httpx.Response:
        response = httpx.request(method, self._require_base_url() + path, json=json, timeout=10.0)
        if response.status_code >= 400:
            raise AssertionError(f"{method} {path} answered {response.status_code}: {response.text}")
        return response

    def _batch_provider(self) -> ClaudeBatchProvider:
        return self._provider if self._provider is not None else self.open_batch_provider()

    def _require_emulator(self) -> Process:
        if self._emulator is None:
            raise AssertionError("No emulator was started in this suite.")
        return self._emulator

    def _require_base_url(self) -> str:
        if self._base_url is None:
            raise AssertionError("Start the emulator first.")
        return self._base_url

    def _require_actor(self) -> Actor:
        if self._actor is None:
            raise AssertionError("Create an actor first.")
        return self._actor
