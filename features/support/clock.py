"""Wall and CPU seconds of each feature file (behave's hooks) or Robot suite (a listener), written as JSON lines
into the folder `LOWTIDE_SUITE_TIMES` names, when it is set: what docs/testing.md's tables are made from
(`features/support/suite_times.py`). CPU is the process's own and that of the children it has waited for."""

from __future__ import annotations

import json
import os
import resource
import time
from pathlib import Path

FOLDER = "LOWTIDE_SUITE_TIMES"


def cpu_seconds() -> float:
    """User and system seconds of this process and of the children it has waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class Clock:
    """Started and stopped around each thing measured; a process's whole life is the line with `"process": true`."""

    def __init__(self, session: str) -> None:
        folder = os.environ.get(FOLDER)
        self.out = Path(folder) / f"{session}-{os.getpid()}.jsonl" if folder else None
        self.session = session
        self.started: tuple[float, float] = (0.0, 0.0)

    def start(self) -> None:
        self.started = (time.monotonic(), cpu_seconds())

    def stop(self, name: str, *, process: bool = False) -> None:
        if self.out is None:
            return
        wall = time.monotonic() - self.started[0]
        cpu = cpu_seconds() - (0.0 if process else self.started[1])
        if process:  # the process's whole life, its start and imports included
            wall = time.time() - _process_start()
        line = {"session": self.session, "name": name, "wall": round(wall, 2), "cpu": round(cpu, 2),
                "load": os.getloadavg()[0], "process": process}  # fmt: skip
        self.out.parent.mkdir(parents=True, exist_ok=True)
        with self.out.open("a") as out:
            out.write(json.dumps(line) + "\n")


def _process_start() -> float:
    """When this process started (epoch seconds), from /proc: its start in clock ticks after boot."""
    ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
    boot = next(
        float(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines() if line.startswith("btime")
    )
    return boot + ticks / os.sysconf("SC_CLK_TCK")
