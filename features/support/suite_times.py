"""docs/testing.md's tables from the lines `LOWTIDE_SUITE_TIMES` collected (features/support/clock.py): each
session's processes, and the slowest feature files and Robot suites, by wall seconds, with their CPU seconds and the
load average when each ended.

    LOWTIDE_SUITE_TIMES=build/times nox -s behave robot
    python features/support/suite_times.py build/times
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path


def read(folder: Path) -> list[dict[str, object]]:
    return [json.loads(line) for path in sorted(folder.glob("*.jsonl")) for line in path.read_text().splitlines()]


def tables(lines: list[dict[str, object]], features: int = 20, suites: int = 10) -> str:
    sessions: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for line in lines:
        if line["process"]:
            totals = sessions[str(line["session"])]
            totals[0] += 1
            totals[1] = max(totals[1], float(str(line["wall"])))
            totals[2] += float(str(line["cpu"]))
    out = ["| Session | Processes | Longest process, wall s | CPU s (user+sys) |", "|---|---:|---:|---:|"]
    out += [f"| {name} | {int(p)} | {wall:.0f} | {cpu:.0f} |" for name, (p, wall, cpu) in sorted(sessions.items())]
    for kind, suffix, count in (("Feature file", ".feature", features), ("Robot suite", ".robot", suites)):
        rows = sorted(
            (line for line in lines if str(line["name"]).endswith(suffix)), key=lambda x: -float(str(x["wall"]))
        )
        out += ["", f"| {kind} | Wall s | CPU s | Load (1 min) |", "|---|---:|---:|---:|"]
        for row in rows[:count]:
            wall, cpu, load = (float(str(row[key])) for key in ("wall", "cpu", "load"))
            out.append(f"| {row['name']} | {wall:.0f} | {cpu:.1f} | {load:.1f} |")
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    sys.stdout.write(tables(read(Path(argv[0]))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
