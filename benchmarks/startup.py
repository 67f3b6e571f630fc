"""What starting lowtide costs: `import lowtide`, `lowtide --help` and the in-process emulator, beside a bare
interpreter and `import anthropic`, measured in the same run.

    python benchmarks/startup.py [--runs 7]

Each row is a fresh interpreter, run `--runs` times in turn with the others (so a change in the machine's load falls
on every row alike); the table gives each row's median CPU (user + system, the child's own `getrusage`) and wall
seconds, and its CPU as a ratio to `import anthropic`'s, the SDK a batch user loads anyway. The load average is printed
at the start and the end: on a shared machine wall time moves with it far more than CPU does. Run it with bytecode
written (`PYTHONDONTWRITEBYTECODE` unset), as users' installs are.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

ROWS: dict[str, list[str]] = {
    "python -c pass (the floor)": [sys.executable, "-c", "pass"],
    "import anthropic (the baseline)": [sys.executable, "-c", "import anthropic"],
    "import lowtide": [sys.executable, "-c", "import lowtide"],
    "from lowtide import Actor": [sys.executable, "-c", "from lowtide import Actor"],
    "lowtide --help": [sys.executable, "-c", "from lowtide.cli import main; main(['--help'])"],
    "Emulator() in process": [sys.executable, "-c", "from lowtide.emulator import Emulator; Emulator()"],
}
BASELINE = "import anthropic (the baseline)"


def measure(command: list[str]) -> tuple[float, float]:
    """(CPU, wall) seconds of one run of `command`: its own user and system time, as the kernel counted them."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7, help="runs of each row (medians reported)")
    args = parser.parse_args()
    for command in ROWS.values():  # once each, unmeasured: bytecode written, files in the page cache
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    load = os.getloadavg()[0]
    cpu: dict[str, list[float]] = {name: [] for name in ROWS}
    wall: dict[str, list[float]] = {name: [] for name in ROWS}
    for _ in range(args.runs):
        for name, command in ROWS.items():
            spent, took = measure(command)
            cpu[name].append(spent)
            wall[name].append(took)
    end = os.getloadavg()[0]
    base = statistics.median(cpu[BASELINE])
    print(f"Python {sys.version.split()[0]}; load average (1 min) {load:.2f} at the start, {end:.2f} at the end")
    print()
    print("| started | CPU (median) | wall (median) | CPU / import anthropic |")
    print("|---|---:|---:|---:|")
    for name in ROWS:
        median = statistics.median(cpu[name])
        print(f"| {name} | {median:.3f} s | {statistics.median(wall[name]):.3f} s | {median / base:.2f} |")
    print()
    print(f"Medians of {args.runs} runs of each row, the rows in turn; each run a fresh interpreter.")


if __name__ == "__main__":
    main()
