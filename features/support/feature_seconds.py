"""The seconds each top-level feature file took, as `features/feature-seconds.txt` holds them: nox's behave session
hands the files to its processes the longest first by these (`_longest_first` in noxfile.py). Either the CPU seconds
the suite clock wrote (`LOWTIDE_SUITE_TIMES`, features/support/clock.py: the lines of the `behave` session), which move
far less with the load than wall seconds, or the wall seconds of behave's JUnit results:

    LOWTIDE_SUITE_TIMES=$PWD/build/times nox -s behave
    python features/support/feature_seconds.py --cpu build/times [more ...] > features/feature-seconds.txt
    python features/support/feature_seconds.py build/test-results/behave [more ...] > features/feature-seconds.txt

From JUnit, a file's time is the sum of its scenarios' times (a Scenario Outline's examples included); either way it is
rounded up to a tenth.
On a shared machine one run's times are noisy (a file's time moved eightfold between two runs, with the load and with
what ran beside it): given the results of several runs, a file's time is its mean share of a run, times the mean
run's total.
"""

from __future__ import annotations

import json
import math
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

HEADER = (
    "# Seconds each feature file's scenarios took in full `nox -s behave` runs (three processes side by side, under\n"
    "# coverage; the mean of the runs given): what noxfile.py deals the files to its processes by. Made by\n"
    "# features/support/feature_seconds.py.\n"
)
CPU_HEADER = (
    "# CPU seconds (user + system) each feature file took in full `nox -s behave` runs (three processes side by side,\n"
    "# under coverage; the suite clock's, LOWTIDE_SUITE_TIMES; the mean of the runs given): what noxfile.py deals the\n"
    "# files to its processes by. Made by features/support/feature_seconds.py --cpu.\n"
)


def feature_seconds(results: Path) -> dict[str, float]:
    """Each feature file's name (`emulator.feature`) and its scenarios' seconds, from `TESTS-<name>.xml` files."""
    seconds: dict[str, float] = defaultdict(float)
    for path in sorted(results.glob("TESTS-*.xml")):
        root = ET.parse(path).getroot()
        name = path.name.removeprefix("TESTS-").removesuffix(".xml") + ".feature"
        for case in root.iter("testcase"):
            seconds[name] += float(case.get("time", 0))
    return dict(seconds)


def cpu_seconds(folder: Path) -> dict[str, float]:
    """Each feature file's name and the CPU seconds the `behave` session's processes spent on it, from the suite
    clock's JSON lines in `folder`."""
    seconds: dict[str, float] = defaultdict(float)
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            entry = json.loads(line)
            if entry["session"] == "behave" and not entry["process"] and str(entry["name"]).endswith(".feature"):
                seconds[str(entry["name"])] += float(entry["cpu"])
    return dict(seconds)


def mean_seconds(runs: list[dict[str, float]]) -> dict[str, float]:
    """Each file's mean share of its run's total, times the mean total (a file missing from a run: a share of 0)."""
    totals = [sum(run.values()) or 1.0 for run in runs]
    names = sorted({name for run in runs for name in run})
    mean_total = sum(totals) / len(runs)
    return {
        name: mean_total * sum(run.get(name, 0.0) / total for run, total in zip(runs, totals, strict=True)) / len(runs)
        for name in names
    }


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    cpu = argv[0] == "--cpu"
    folders = argv[1:] if cpu else argv
    if not folders:
        print(__doc__, file=sys.stderr)
        return 2
    times = mean_seconds([(cpu_seconds if cpu else feature_seconds)(Path(folder)) for folder in folders])
    sys.stdout.write(CPU_HEADER if cpu else HEADER)
    for name, seconds in sorted(times.items(), key=lambda item: (-item[1], item[0])):
        sys.stdout.write(f"{math.ceil(seconds * 10) / 10:.1f} {name}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
