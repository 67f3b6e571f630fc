"""What one full garbage collection costs once the provider SDKs are imported, beside as many plain objects.

    python benchmarks/gc_cost.py [--repeat 20]

Each row is a fresh interpreter (so that nothing one row imported is alive in the next) that imports what the row
names, then times `--repeat` full collections (`gc.collect()`) and reports the median, the number of objects the
collector tracks, and the time per object. The baseline is the first row: as many small dicts and lists as the SDKs
leave alive, and nothing else. A full collection visits every tracked object; the SDKs' types are pydantic models,
and pydantic-core's validators and serializers walk their whole schema tree each time they are visited, so the SDKs'
objects cost several times a plain object's. lowtide keeps full collections away while thousands of calls wait
(`batching/gc_tuning.py`); the test suite freezes what outlives each scenario (`features/environment.py`).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

ROWS: dict[str, str] = {
    "plain objects (baseline)": "keep = [{'a': [i]} for i in range(75_000)]",
    "pydantic": "import pydantic",
    "anthropic": "import anthropic",
    "anthropic, openai": "import anthropic, openai",
    "anthropic, openai, lowtide": "import anthropic, openai, lowtide, lowtide.providers.anthropic",
}

_MEASURE = """
import gc, json, statistics, sys, time
{setup}
gc.collect()
times = []
for _ in range({repeat}):
    start = time.perf_counter()
    gc.collect()
    times.append(time.perf_counter() - start)
print(json.dumps({{"seconds": statistics.median(times), "objects": len(gc.get_objects())}}))
"""


def measure(setup: str, repeat: int) -> dict[str, float]:
    code = _MEASURE.format(setup=setup, repeat=repeat)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=20, help="full collections timed in each row (median)")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    rows = {name: measure(setup, args.repeat) for name, setup in ROWS.items()}
    base = rows["plain objects (baseline)"]
    base_per_object = base["seconds"] / base["objects"]
    end = os.getloadavg()[0]
    print(f"Python {sys.version.split()[0]}; load average (1 min) {load:.2f} at the start, {end:.2f} at the end")
    print()
    print("| imported | objects tracked | full collection (median) | per object | per object / baseline |")
    print("|---|---:|---:|---:|---:|")
    for name, row in rows.items():
        per_object = row["seconds"] / row["objects"]
        print(
            f"| {name} | {int(row['objects']):,} | {row['seconds'] * 1000:.1f} ms | {per_object * 1e9:.0f} ns"
            f" | {per_object / base_per_object:.1f}x |"
        )
    print()
    print(f"Median of {args.repeat} full collections in each row, each row a fresh interpreter.")


if __name__ == "__main__":
    main()
