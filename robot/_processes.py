"""Processes the Robot libraries start: output to files (never a full pipe), stopped for sure, and the emulator's
announcement of its address waited for."""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from robot.api import logger

__all__ = [
    "LISTENING",
    "UNMEASURED",
    "Process",
    "emulator_argv",
    "lowtide_command",
    "wait_until_listening",
    "whom_file_modes_stop",
]

LISTENING = re.compile(r"^lowtide emulator listening on (http://\S+)\s*$", re.MULTILINE)
# What asyncio's default handler prints for an error no one handled: lowtide must hand every one to a caller.
UNMEASURED = ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START")
"""What a child of a process under coverage (`patch = ["subprocess"]`) reads to measure itself: left out of the
environment of a process that will die of SIGKILL, it is not measured. Coverage writes a process's data at its exit,
which SIGKILL never reaches: measuring it would cost 1-1.5 s of CPU (its imports traced) and add nothing."""
UNHANDLED = re.compile(r"Task exception was never retrieved|Exception in callback|Unhandled exception in event loop")


class Process:
    """A started process whose stdout and stderr go to files, so that it can never block on a full pipe."""

    def __init__(self, argv: Sequence[str], workdir: Path, name: str, env: Mapping[str, str]) -> None:
        self.argv = list(argv)
        self.name = name
        self.stdout_path = workdir / f"{name}.stdout"
        self.stderr_path = workdir / f"{name}.stderr"
        self.started = time.monotonic()
        self.ended: float | None = None
        self.cpu: float | None = None
        """The CPU seconds it used (user and system), once it has exited and been waited for here."""
        with self.stdout_path.open("wb") as out, self.stderr_path.open("wb") as err:
            self.popen = subprocess.Popen(self.argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=dict(env))

    @property
    def stdout(self) -> str:
        return self.stdout_path.read_text(encoding="utf-8", errors="replace")

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    @property
    def seconds(self) -> float:
        return (self.ended if self.ended is not None else time.monotonic()) - self.started

    def cpu_text(self) -> str:
        """How much CPU it has used, beside the time it took: on a loaded machine a process waits for a core far
        longer than it computes, and a slow run that computed little was starved, not stuck."""
        cpu = self.cpu if self.cpu is not None else self.cpu_so_far()
        return "" if cpu is None else f" ({cpu:.1f} s of CPU)"

    def cpu_so_far(self) -> float | None:
        """The CPU seconds a process still running has used (Linux: `/proc`), None where that cannot be read."""
        try:
            fields = Path(f"/proc/{self.popen.pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime

    def wait(self, timeout: float) -> int | None:
        """The exit code, or None if it is still running after `timeout` seconds. Fails if the process reported
        an asyncio error nobody handled."""
        reaped, before = self.popen.returncode is not None, _children_cpu()
        try:
            code = self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        if not reaped and self.cpu is None:  # reaped by this wait: the children's CPU grew by its alone
            self.cpu = _children_cpu() - before
        if self.ended is None:
            self.ended = time.monotonic()
        self.check_no_unhandled_errors()
        return code

    def wait_unless_stuck(self, timeout: float) -> int | None:
        """`wait`, with `timeout` counted in the time a core was free for it: each second the machine's load is
        above its cores counts as cores/load of a second. A guard says "stuck, not slow": at a load of 28 on two
        cores a client that takes 4 minutes alone takes 30 (the suite's Test Timeout still ends a real hang)."""
        counted = 0.0
        while True:
            step = min(5.0, max(0.1, timeout - counted))
            code = self.wait(step)
            if code is not None:
                return code
            counted += step * min(1.0, _CORES / max(os.getloadavg()[0], _CORES))
            if counted >= timeout:
                return None

    def check_no_unhandled_errors(self) -> None:
        found = UNHANDLED.search(self.stderr)
        if found:
            start = max(0, found.start() - 200)
            raise AssertionError(f"{self.name} reported an error nobody handled:\n{self.stderr[start : start + 3000]}")

    def stop(self, timeout: float = 10.0) -> int:
        """SIGTERM, then SIGKILL if it has not exited within `timeout` seconds; returns the exit code."""
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                logger.warn(f"{self.name} (pid {self.popen.pid}) ignored SIGTERM for {timeout:g} s; killing it.")
                self.popen.kill()
                self.popen.wait(timeout=timeout)
        if self.ended is None:
            self.ended = time.monotonic()
        self.check_no_unhandled_errors()
        return self.popen.returncode


_CORES = float(os.cpu_count() or 1)


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def lowtide_command() -> list[str]:
    """The `lowtide` console script beside this Python, or `python -m lowtide.cli` when there is none."""
    script = Path(sys.executable).parent / "lowtide"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "lowtide.cli"]


def whom_file_modes_stop(argv: Sequence[str]) -> list[str]:
    """`argv` run by a user whom a read-only file or folder stops: this one, unless it is root, whom no mode stops;
    then root without its capabilities (`setpriv`) but the one to read and search any folder. A read-only mode stops
    it as it stops any user, and it reaches the checkout and the Python it runs wherever they are: `nobody`, used
    before, could not, from a checkout in a folder only its owner may enter (a `mktemp -d` folder, root's home)."""
    if os.geteuid() != 0:
        return list(argv)
    return ["setpriv", "--inh-caps=-all", "--bounding-set=-all,+dac_read_search", *argv]


def emulator_argv(
    lowtide: Sequence[str], *, processing_seconds: float, cancel_seconds: float | None = None
) -> list[str]:
    """`lowtide emulator` on a free loopback port, keeping each batch in progress `processing_seconds`."""
    argv = [
        *lowtide,
        "emulator",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--processing-seconds",
        f"{processing_seconds:g}",
    ]
    if cancel_seconds is not None:
        argv += ["--cancel-seconds", f"{cancel_seconds:g}"]
    return argv


def wait_until_listening(process: Process, timeout: float) -> str:
    """The base URL a started `lowtide emulator` announces; stops it and fails if it dies or stays silent."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        match = LISTENING.search(process.stdout)
        if match:
            logger.info(f"Emulator (pid {process.popen.pid}) listening on {match.group(1)}")
            return match.group(1)
        if process.popen.poll() is not None:
            raise AssertionError(
                f"The emulator exited with code {process.popen.returncode} before listening.\n"
                f"stdout:\n{process.stdout}\nstderr:\n{process.stderr}"
            )
        time.sleep(0.05)
    process.stop()
    raise AssertionError(
        f"The emulator did not print its listening line within {timeout:g} s.\n"
        f"stdout:\n{process.stdout}\nstderr:\n{process.stderr}"
    )


def stop_all(processes: Sequence[Process], *, with_stderr: bool = False) -> None:
    """Stop `processes`, logging each exit code (and the end of stderr, with `with_stderr`); every failure to stop
    is reported together, after trying them all."""
    errors: list[str] = []
    for process in processes:
        try:
            running = process.popen.poll() is None
            code = process.stop()
            if running:
                tail = "\n".join(process.stderr.splitlines()[-40:]) if with_stderr else ""
                logger.info(f"Stopped {process.name} (pid {process.popen.pid}): exit code {code}.\n{tail}".rstrip())
        except Exception as exc:
            errors.append(f"stopping {process.name}: {exc!r}")
    if errors:
        raise AssertionError("Stopping processes failed: " + "; ".join(errors))
