"""What the benchmarks share: the prompts and keys every contender sends, the measures a contender takes of itself
(CPU, peak memory), the `lowtide emulator` subprocess, the machine's description and the report's file.

Imported by the benchmark scripts beside it (run as `python benchmarks/NAME.py`, this folder is on `sys.path`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import platform
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import datetime
from importlib import metadata
from pathlib import Path
from typing import Any

MAX_TOKENS = 256
API_KEY = "sk-ant-benchmark-not-a-real-key"
"""The key every contender sends (the emulator takes any)."""
RESULTS_START = "<!-- benchmark-results:start -->"
RESULTS_END = "<!-- benchmark-results:end -->"
_EMULATOR_START_SECONDS = 60.0


def prompt(i: int) -> str:
    return f"question {i}"


def key(i: int) -> str:
    return f"q-{i}"


def checksum(texts: dict[str, str], n: int) -> str:
    """A digest of the answer texts in request order: equal digests mean both contenders got the same answers."""
    digest = hashlib.sha256()
    for i in range(n):
        digest.update(texts.get(key(i), "<missing>").encode())
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def peak_rss_kib() -> int:
    """This process's peak resident set size so far, in KiB: its own since it began (`VmHWM` on Linux).

    Not `getrusage(...).ru_maxrss` on Linux: a process started by another counts that one's peak in its own
    (the kernel records the memory it leaves at `exec`, which a vfork'd child shares with its parent), so a contender
    spawned by a benchmark that once held 400 MiB reads 400 MiB at its start, and its peak is never below it."""
    own = high_water_kib(os.getpid())
    if own is not None:
        return own
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak // 1024 if sys.platform == "darwin" else peak


def high_water_kib(pid: int) -> int | None:
    """Process `pid`'s peak resident set size since its `exec` (`VmHWM`, Linux), in KiB; None where it cannot be
    read (another system, or the process gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class Emulator:
    """A `lowtide emulator` subprocess on a free port, stopped (SIGTERM to its own pid) on exit."""

    def __init__(
        self,
        processing_seconds: float,
        environment: dict[str, str],
        models: tuple[str, ...] = (),
        options: Sequence[str] = (),
    ) -> None:
        self.processing_seconds = processing_seconds
        self.models = models
        self.options = tuple(options)
        """Further `lowtide emulator` options (rate limits, latency)."""
        self._environment = environment
        self._resources = ExitStack()
        self._process: subprocess.Popen[str] | None = None
        self.url = ""

    def __enter__(self) -> Emulator:
        command = [*lowtide_command(), "emulator", "--port", "0", "--processing-seconds", str(self.processing_seconds)]
        if self.models:  # names beyond the emulator's catalogue of current models
            command += ["--models", ",".join(self.models)]
        command += self.options
        errors = self._resources.enter_context(tempfile.TemporaryFile(mode="w+"))
        self._process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=errors, text=True, env=self._environment
        )
        assert self._process.stdout is not None
        deadline = time.monotonic() + _EMULATOR_START_SECONDS
        while time.monotonic() < deadline:
            line = self._process.stdout.readline()
            if not line:
                break
            found = re.search(r"listening on (http://\S+)", line)
            if found:
                self.url = found.group(1)
                return self
        self._stop()
        errors.seek(0)
        message = f"lowtide emulator did not start:\n{errors.read()}"
        self._resources.close()
        raise RuntimeError(message)

    def __exit__(self, *_: object) -> None:
        self._stop()
        self._resources.close()

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stdout is not None:
            process.stdout.close()

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.url}/_emulator/stats", timeout=300) as answer:
            stats: dict[str, Any] = json.load(answer)
        return stats

    def get_json(self, path: str, headers: dict[str, str]) -> dict[str, Any]:
        """GET one of the emulator's API routes (`path` from the root) with `headers`, its JSON body."""
        request = urllib.request.Request(f"{self.url}{path}", headers=headers)
        with urllib.request.urlopen(request, timeout=60) as answer:
            body: dict[str, Any] = json.load(answer)
        return body


def epoch(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def subprocess_environment(bytecode: str) -> dict[str, str]:
    """The environment of the emulator and the contenders.

    `cached` (the default) lets Python cache bytecode, in a directory of the benchmark's own, as it does for packages
    pip installs: without it every run compiles what it imports, and a large module (genai-prices' 1.6 MB price
    table) costs tens of MiB of peak memory while it compiles. `as-is` keeps this environment's setting.
    """
    environment = dict(os.environ)
    if bytecode == "cached":
        environment.pop("PYTHONDONTWRITEBYTECODE", None)
        environment["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "lowtide-benchmark-pycache")
    return environment


def lowtide_command() -> list[str]:
    """The `lowtide` command of this interpreter's environment."""
    beside = Path(sys.executable).parent / "lowtide"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("lowtide")
    if found is None:
        raise SystemExit("lowtide is not installed in this environment (pip install -e .)")
    return [found]


def machine() -> list[str]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = ", ".join(f"{name} {metadata.version(name)}" for name in ("lowtide", "anthropic", "httpx2", "pydantic"))
    return [
        f"- machine: {os.cpu_count()} CPU(s) ({cpu}), {platform.system()} {platform.release()}",
        f"- Python {platform.python_version()} ({platform.python_implementation()}); {versions}",
        f"- SQLite {__import__('sqlite3').sqlite_version}",
    ]


def source_revision() -> tuple[str, str]:
    """Which lowtide source is measured: the last commit that changed `src/`, and any uncommitted changes there; or,
    when the lowtide the measured processes import is not this checkout's (a snapshot put first on `PYTHONPATH`, as
    `git archive <commit> src | tar -x -C DIR` makes), that snapshot: the commit whose `src/` it is, when one of this
    checkout's is.

    Returns the description and a fingerprint that changes whenever the source does (to notice edits mid-run).
    """
    root = Path(__file__).resolve().parent.parent

    def git(*arguments: str) -> str:
        return subprocess.run(["git", "-C", str(root), *arguments], capture_output=True, text=True, check=True).stdout

    imported = imported_source()
    try:
        if imported is not None and imported != root / "src":
            return snapshot_revision(imported, git)
        commit = git("log", "-1", "--format=%h", "--", "src").strip()
        changed = git("status", "--porcelain", "--", "src").splitlines()
        diff = git("diff", "HEAD", "--", "src")
    except (OSError, subprocess.CalledProcessError):
        return "not a git checkout", ""
    folders = sorted({str(Path(line[3:].strip()).parent) for line in changed if line.strip()})
    text = f"src/ as of commit {commit}" + (f", with uncommitted changes under {', '.join(folders)}" if folders else "")
    return text, hashlib.sha256(f"{commit}\n{changed}\n{diff}".encode()).hexdigest()


def imported_source() -> Path | None:
    """The directory holding the `lowtide` package the measured processes import (they are given this process's
    `PYTHONPATH`), or None when there is none."""
    spec = importlib.util.find_spec("lowtide")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).resolve().parent.parent


def snapshot_revision(source: Path, git: Callable[..., str]) -> tuple[str, str]:
    """A snapshot of `src/` outside this checkout, described by the commit of this checkout whose `src/` it is (its
    tree's id, written with an index of its own, compared with those of the last 500 commits that changed `src/`)."""
    with tempfile.TemporaryDirectory() as scratch:
        index = str(Path(scratch) / "index")
        git_dir = git("rev-parse", "--absolute-git-dir").strip()
        command = ["git", "--git-dir", git_dir, "--work-tree", str(source), "-C", str(source)]
        environment = {**os.environ, "GIT_INDEX_FILE": index}
        files = ["--", ".", ":(exclude,glob)**/__pycache__/**"]
        subprocess.run([*command, "add", "--all", "--force", *files], env=environment, capture_output=True, check=True)
        tree = subprocess.run(
            [*command, "write-tree"], env=environment, capture_output=True, text=True, check=True
        ).stdout.strip()
    for commit in git("log", "-500", "--format=%h", "--", "src").split():
        if git("rev-parse", f"{commit}:src").strip() == tree:
            return f"src/ as of commit {commit} (a snapshot: {source})", tree
    return f"a source outside this checkout, of none of its last 500 commits ({source}, tree {tree[:12]})", tree


def write_report(path: Path, text: str, provider: str = "anthropic", *, markers: tuple[str, str] | None = None) -> None:
    """Replace the results block of `path` (between the markers; OpenAI's run has markers of its own, and another
    benchmark passes its own), keeping everything written around it."""
    start, end = markers or (RESULTS_START, RESULTS_END)
    if markers is None and provider != "anthropic":
        start, end = (marker.replace("results:", f"results-{provider}:") for marker in (start, end))
    block = f"{start}\n{text}{end}"
    if path.exists():
        current = path.read_text()
        if start in current and end in current:
            before, rest = current.split(start, 1)
            after = rest.split(end, 1)[1]
            path.write_text(before + block + after)
            return
        path.write_text(current.rstrip("\n") + "\n\n" + block + "\n")
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# Benchmarks\n\n{block}\n")


@dataclass(frozen=True)
class Usage:
    """A child's CPU time and peak resident memory, its own (`wait_within`); `ru_maxrss` in `getrusage`'s units."""

    ru_utime: float
    ru_stime: float
    ru_maxrss: int


def wait_within(process: subprocess.Popen[bytes], seconds: float, *, sample_seconds: float = 0.05) -> tuple[int, Usage]:
    """Wait for `process`, killed if it runs past `seconds`; its exit code and resource usage (its own, `wait4`).

    Its peak memory is its own: `wait4`'s `ru_maxrss` counts the peak of this process as it was when the child was
    spawned (see `peak_rss_kib`), so it is taken only when above that; else the highest `VmHWM` sampled while the
    child ran (every `sample_seconds`), which misses at most what the child reached in its last moments."""
    spawner = high_water_kib(os.getpid())
    highest = [0]
    done = threading.Event()

    def sample() -> None:
        while True:
            seen = high_water_kib(process.pid)
            if seen is not None:
                highest[0] = max(highest[0], seen)
            if done.wait(sample_seconds):
                return

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    timer = threading.Timer(seconds, process.kill)
    timer.start()
    try:
        _, status, usage = os.wait4(process.pid, 0)
    finally:
        timer.cancel()
        done.set()
        sampler.join()
    process.returncode = os.waitstatus_to_exitcode(status)
    peak = usage.ru_maxrss
    if spawner is not None and peak <= spawner and highest[0] > 0:
        peak = highest[0]
    return process.returncode, Usage(usage.ru_utime, usage.ru_stime, peak)
