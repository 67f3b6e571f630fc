"""README.md's examples, run as written: its code blocks read in order and run in one working directory against
`lowtide emulator` (shared by the Robot suite `robot/readme_examples.robot` and the integrations' scenarios).

Every ```python and ```bash block runs as it is. A YAML or TOML block whose first line is a comment naming a file
(`# actors.yaml`) is written to that file, so the blocks after it use it as a reader would. Nothing in a block is
edited: what differs from the real API comes from the environment (`ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL`,
`GOOGLE_GEMINI_BASE_URL`, keys the emulator takes, a home directory of the run's own, so the default ledger is the
examples', `LOWTIDE_POLL_INTERVAL`). The working directory is a copy of the checkout, as a reader's would be.

An HTML comment just before a block (invisible on the rendered page) may say how it runs:
`<!-- readme-test: background -->` (a server: started, waited for on the port its `--port` names, stopped at the
end), `<!-- readme-test: exit=1 -->` (the status it ends with), `<!-- readme-test: needs=pydantic-ai -->` (runs
only where that framework is installed), `<!-- readme-test: skip=REASON -->` (not run; REASON says why).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

__all__ = ["NOT_COPIED", "Block", "BlockRun", "ReadmeRunner", "blocks_of"]

_FENCE = re.compile(r"^```(\w*)\s*$")
_DIRECTIVE = re.compile(r"<!--\s*readme-test:\s*(.*?)\s*-->")
_FILE_NAME = re.compile(r"^#\s*([\w.-]+\.(?:ya?ml|toml|json|jsonl|csv|txt))\s*$")
_PORT = re.compile(r"--port\s+(\d+)")
PORTS_LOCK = "lowtide-readme-examples.lock"
"""The lock, in the system's temporary directory, that one run of the examples at a time holds (`_hold_the_ports`)."""
RUN_LANGUAGES = ("python", "bash")
# Where a test run points lowtide: the examples use the reader's defaults instead.
_ISOLATED = ("LOWTIDE_LEDGER", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "LOWTIDE_SERVE_KEY", "LOWTIDE_LOG_LEVEL")
NOT_COPIED = shutil.ignore_patterns(
    ".git", ".nox", ".venv", ".ci-venv", "build", "node_modules", "__pycache__", "*.egg-info", ".coverage*"
)
"""What a copy of the checkout leaves out (`shutil.copytree`'s `ignore`): what git does not keep, and made things."""
FILE_LANGUAGES = ("yaml", "toml")


@dataclass(frozen=True)
class Block:
    """One fenced code block of the README."""

    number: int
    line: int
    language: str
    text: str
    heading: str
    directives: Mapping[str, str] = field(default_factory=dict[str, str])

    @property
    def file_name(self) -> str | None:
        """The file a YAML or TOML block is, when its first line names one."""
        if self.language not in FILE_LANGUAGES:
            return None
        first = self.text.splitlines()[0] if self.text else ""
        match = _FILE_NAME.match(first)
        return match.group(1) if match else None

    @property
    def runs(self) -> bool:
        return self.language in RUN_LANGUAGES

    def __str__(self) -> str:
        return f"block {self.number} ({self.language}, README.md line {self.line}, under {self.heading!r})"


@dataclass
class BlockRun:
    block: Block
    status: int | None
    output: str
    seconds: float
    skipped: str | None = None
    cpu: float = 0.0
    """The CPU seconds (user and system) of the processes the block ran and this process waited for."""


def blocks_of(readme: Path) -> list[Block]:
    """The README's fenced blocks, in order, each with the directives of the comments just above it."""
    blocks: list[Block] = []
    heading = ""
    pending: dict[str, str] = {}
    lines = readme.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        fence = _FENCE.match(line)
        if line.startswith("#") and not fence:
            heading = line.lstrip("#").strip()
        directive = _DIRECTIVE.search(line)
        if directive:
            for part in directive.group(1).split(";"):
                key, _, value = part.strip().partition("=")
                if key:
                    pending[key.strip()] = value.strip()
            index += 1
            continue
        if fence:
            start = index + 1
            end = start
            while end < len(lines) and lines[end].rstrip() != "```":
                end += 1
            blocks.append(
                Block(len(blocks) + 1, index + 1, fence.group(1), "\n".join(lines[start:end]) + "\n", heading, pending)
            )
            pending = {}
            index = end + 1
            continue
        if line.strip():
            pending = {}  # a directive belongs to the block right after it
        index += 1
    return blocks


class ReadmeRunner:
    """Runs a README's blocks in order in `workdir`, against an emulator it starts (and stops at `close`)."""

    def __init__(
        self, readme: Path, workdir: Path, *, python: str = sys.executable, timeout: float = 300.0, copy: bool = True
    ) -> None:
        self.readme = readme
        self.workdir = workdir
        self.copy = copy
        """Run in a copy of the checkout README.md is in, as a reader does (`pip install .` works there)."""
        self.python = python
        self.timeout = timeout
        self._background: list[tuple[Block, subprocess.Popen[bytes], Path]] = []
        self._emulator: subprocess.Popen[bytes] | None = None
        self._ports: IO[bytes] | None = None
        self.environment: dict[str, str] = {}

    def start(self, processing_seconds: float = 1.0) -> None:
        """Start `lowtide emulator` on a free loopback port and set the environment the blocks run in."""
        if self.copy:
            shutil.copytree(self.readme.parent, self.workdir, ignore=NOT_COPIED, dirs_exist_ok=True)
        self.workdir.mkdir(parents=True, exist_ok=True)
        home = self.workdir / "home"
        home.mkdir(exist_ok=True)
        bindir = str(Path(self.python).parent)
        log = (self.workdir / "emulator.log").open("wb")
        self._emulator = subprocess.Popen(
            [self.python, "-m", "lowtide", "emulator", "--host", "127.0.0.1", "--port", "0",
             "--processing-seconds", str(processing_seconds)],
            stdout=subprocess.PIPE, stderr=log, cwd=self.workdir, env={**os.environ, "PATH": _path(bindir)},
            start_new_session=True,
        )  # fmt: skip
        url = _announced_url(self._emulator, self.timeout)
        outside = {name: value for name, value in os.environ.items() if name not in _ISOLATED}
        self.environment = {
            **outside,
            # A home of its own: the default ledger (~/.local/state/lowtide/ledger.sqlite3) is the examples' alone.
            "HOME": str(home),
            "PIP_CACHE_DIR": os.environ.get("PIP_CACHE_DIR") or str(Path.home() / ".cache" / "pip"),
            "PATH": _path(bindir),
            "ANTHROPIC_BASE_URL": url,
            "ANTHROPIC_API_KEY": "sk-ant-readme-example",
            "OPENAI_BASE_URL": f"{url}/v1",
            "OPENAI_API_KEY": "sk-readme-example",
            "GOOGLE_GEMINI_BASE_URL": url,
            "GEMINI_API_KEY": "readme-example-gemini-key",
            "LOWTIDE_POLL_INTERVAL": "0.2",
            "PYTHONUNBUFFERED": "1",
        }

    def run_all(self, *, needs: Collection[str | None] = (None,), holding: Collection[str] = ()) -> Iterator[BlockRun]:
        """Each block in order: files written, code run (the blocks that need nothing, or what `needs` names: a
        framework installed, a database at hand), background servers started; the others skipped, saying why.
        `holding`: only the code blocks holding one of these texts run (the others are not yielded at all); fails
        naming a text no code block holds."""
        blocks = blocks_of(self.readme)
        unheld = [text for text in holding if not any(block.runs and text in block.text for block in blocks)]
        if unheld:
            raise AssertionError(f"no python or bash block of {self.readme.name} holds {unheld}")
        for block in blocks:
            if block.file_name is not None:
                (self.workdir / block.file_name).write_text(block.text, encoding="utf-8")
                continue
            if not block.runs or (holding and not any(text in block.text for text in holding)):
                continue
            needed = block.directives.get("needs")
            if "skip" in block.directives:
                yield BlockRun(block, None, "", 0.0, skipped=block.directives["skip"] or "no reason given")
            elif needed not in needs:
                yield BlockRun(block, None, "", 0.0, skipped=f"needs {needed}")
            else:
                yield self.run(block)

    def run(self, block: Block) -> BlockRun:
        started, cpu = time.monotonic(), _children_cpu()
        if _PORT.search(block.text):
            self._hold_the_ports()
        script = self.workdir / f"block-{block.number}.{'py' if block.language == 'python' else 'sh'}"
        script.write_text(block.text, encoding="utf-8")
        command = [self.python, str(script)] if block.language == "python" else ["bash", "-e", str(script)]
        if "background" in block.directives:
            output = self.workdir / f"block-{block.number}.log"
            process = subprocess.Popen(
                command, cwd=self.workdir, env=self.environment, stdout=output.open("wb"), stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
            self._background.append((block, process, output))
            for port in _PORT.findall(block.text):
                _wait_for_port(int(port), process, output, self.timeout)
            return BlockRun(block, 0, f"started in the background (pid {process.pid})", time.monotonic() - started)
        printed = self.workdir / f"block-{block.number}.out"
        with printed.open("wb") as out:
            # A file, not a pipe: a server the block leaves in the background would hold a pipe open.
            process = subprocess.Popen(
                command, cwd=self.workdir, env=self.environment, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        timeout = float(block.directives.get("timeout", self.timeout))
        status: int | None
        try:
            status = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            status = None
        finally:
            _stop(process)  # the whole group: what the block left in the background goes with it
        text = printed.read_text(errors="replace")
        if status is None:
            text = f"timed out after {timeout:.0f} s\n{text}"
        return BlockRun(block, status, text, time.monotonic() - started, cpu=_children_cpu() - cpu)

    def close(self) -> str:
        """Stop the background servers and the emulator; what the servers printed."""
        printed: list[str] = []
        for block, process, output in reversed(self._background):
            _stop(process)
            printed.append(f"--- {block} ---\n{output.read_text(errors='replace')}")
        self._background.clear()
        if self._emulator is not None:
            _stop(self._emulator)
            self._emulator = None
        if self._ports is not None:
            self._ports.close()  # and the lock with it
            self._ports = None
        return "\n".join(printed)

    def _hold_the_ports(self) -> None:
        """The README's servers listen on the ports it names (8765, 8787, ...), as a reader's would: two runs of its
        examples on one machine at once (the `robot` and `postgres` sessions side by side, or two checkouts) took
        each other's ports, and a block then failed to listen, or talked to the other run's server. From its first
        block that names a port until `close`, a run holds a lock of the machine's (released by the system if the
        process dies); another run waits for it there."""
        if self._ports is None:
            self._ports = (Path(tempfile.gettempdir()) / PORTS_LOCK).open("ab")
            fcntl.flock(self._ports, fcntl.LOCK_EX)
            named = sorted({int(port) for block in blocks_of(self.readme) for port in _PORT.findall(block.text)})
            taken = [port for port in named if _listened_on(port)]
            if taken:  # a block would fail to listen, or wait on a server that never starts, until its bound
                raise AssertionError(
                    f"port {', '.join(map(str, taken))}, which README.md's examples listen on, is taken by a process "
                    "that is not theirs: stop it to run them"
                )


def expected_status(block: Block) -> int:
    return int(block.directives.get("exit", "0"))


def _path(bindir: str) -> str:
    return os.pathsep.join([bindir, os.environ.get("PATH", "")])


def _announced_url(process: subprocess.Popen[bytes], timeout: float) -> str:
    """The URL `lowtide emulator` prints on its first line once it listens."""
    assert process.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline().decode()
        if not line:
            break
        match = re.search(r"http://127\.0\.0\.1:\d+", line)
        if match:
            return match.group(0)
    _stop(process)
    raise AssertionError("lowtide emulator did not announce its address")


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _listened_on(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _wait_for_port(port: int, process: subprocess.Popen[bytes], output: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server ended with {process.returncode}:\n{output.read_text(errors='replace')}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"nothing listened on port {port} within {timeout:.0f} s")


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End the process and everything in its process group (what a block started in the background too)."""
    with contextlib.suppress(ProcessLookupError):  # nothing left of the group
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:  # the group's other members, which are not our children to wait for
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def describe(run: BlockRun) -> str:
    """A failed run, for the test's message: the block and what it printed."""
    return f"{run.block} ended with {run.status} (expected {expected_status(run.block)}):\n{run.block.text}\n" + (
        f"--- output ---\n{run.output}"
    )
