"""The seconds each top-level feature file took, read from behave's JUnit results, as `features/feature-seconds.txt`
holds them: nox's behave session deals the files to its processes by these (`_deal` in noxfile.py).

    python features/support/feature_seconds.py build/test-results/behave > features/feature-seconds.txt

A file's time is the sum of its scenarios' times (a Scenario Outline's examples included), rounded up to a tenth.
"""

from __future__ import annotations

import math
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

HEADER = (
    "# Seconds each feature file's scenarios took in a full `nox -s behave` (its three processes side by side, under\n"
    "# coverage): what noxfile.py deals the files to its processes by. Made by features/support/feature_seconds.py.\n"
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


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    times = feature_seconds(Path(argv[0]))
    sys.stdout.write(HEADER)
    for name, seconds in sorted(times.items(), key=lambda item: (-item[1], item[0])):
        sys.stdout.write(f"{math.ceil(seconds * 10) / 10:.1f} {name}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
