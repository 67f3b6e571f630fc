"""A bulk run through `lowtide run` beside batchata, a peer library, on the same inputs, against `lowtide emulator`.

    python benchmarks/bulk_vs_batchata.py [--items 20000] [--items-per-batch 1000] [--max-parallel-batches 10]
                                          [--repeat 1] [--python312 PATH] [--out docs/benchmarks.md]

batchata (https://pypi.org/project/batchata/, pinned to 0.4.7) needs Python 3.12, so it runs in a virtual
environment of its own that this script creates with `--python312` (by default under build/bench/batchata-venv,
reused when it already holds that version). lowtide runs from this interpreter's environment (its `lowtide` command).

Both contenders read the same JSONL file of prompts and write one answer per line, in input order:

- `lowtide`: `lowtide run INPUT --actor actor.yaml --out results.jsonl ...`, the CLI as a user runs it.
- `batchata`: `Batch(results_dir, max_parallel_batches, items_per_batch)`, one `add_job(messages=...)` per prompt,
  `run()`, then its `results()` joined on job ids into the same kind of JSONL file (the glue a user writes).

Every measurement gets a fresh `lowtide emulator` subprocess and a fresh working directory; each contender runs as a
process of its own, whose wall time (spawn to exit), peak resident memory and CPU time come from `os.wait4`
(`harness.wait_within`). API calls come from the emulator's `/_emulator/stats`. The run fails unless both answered
every item and every request was created exactly once; the answers are compared item by item (the emulator is
deterministic: the same params give the same text). Performance is judged as lowtide/batchata ratios from the same run.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

# The emulator, the environment and the source description are shared with the batch-vs-SDK benchmark (stdlib only,
# so this script also runs as the batchata contender under its own Python 3.12).
from harness import Emulator, epoch, log, lowtide_command, source_revision, subprocess_environment, wait_within

BATCHATA_VERSION = "0.4.7"
# A model batchata 0.4.7 lists (batchata/providers/anthropic/models.py) and genai-prices prices.
MODEL = "claude-sonnet-4-20250514"
MAX_TOKENS = 256
# batchata sends a temperature with every request (0.7 unless told otherwise); lowtide's actor is given the same one,
# because the emulator's answer depends on it.
TEMPERATURE = 0.7
API_KEY = "sk-ant-benchmark-not-a-real-key"
Contender = Literal["lowtide", "batchata"]
CONTENDERS: tuple[Contender, ...] = ("lowtide", "batchata")
RESULTS_START = "<!-- bulk-results:start -->"
RESULTS_END = "<!-- bulk-results:end -->"
ROOT = Path(__file__).resolve().parent.parent
_CONTENDER_TIMEOUT_SECONDS = 4 * 3600.0
_LOGS = ("stdout.txt", "stderr.txt")


def prompt(i: int) -> str:
    return f"question {i}"


# The batchata contender, run by the batchata environment's Python (`--contender batchata`).


def run_batchata(args: argparse.Namespace) -> int:
    """What a batchata user writes for a JSONL file of prompts: one job each, run, answers back in input order."""
    from batchata import Batch
    from batchata.providers.anthropic import AnthropicProvider

    if args.poll_interval != 1.0:
        # batchata has no setting for it: every provider polls at `get_polling_interval()`, 1 s for Anthropic.
        interval: float = args.poll_interval
        AnthropicProvider.get_polling_interval = lambda self: interval
    start = time.perf_counter()
    prompts = [json.loads(line)["prompt"] for line in Path(args.input).read_text().splitlines() if line.strip()]
    batch = Batch(
        results_dir=str(args.results_dir),
        max_parallel_batches=args.max_parallel_batches,
        items_per_batch=args.items_per_batch,
    )
    batch.set_default_params(model=args.model, max_tokens=args.max_tokens, temperature=args.temperature)
    batch.set_verbosity("warn")
    if args.cost_limit is not None:
        batch.add_cost_limit(usd=args.cost_limit)
    for text in prompts:
        batch.add_job(messages=[{"role": "user", "content": text}])
    jobs_added = time.perf_counter()
    run = batch.run()
    ran = time.perf_counter()
    results = run.results()
    status_of = {"completed": "succeeded", "failed": "failed", "cancelled": "canceled"}
    by_id = {result.job_id: (status_of[group], result) for group, found in results.items() for result in found}
    with Path(args.answers).open("w") as out:
        for index, job in enumerate(batch.jobs):
            status, result = by_id.get(job.id, ("not-run", None))
            text = result.raw_response if result is not None and status == "succeeded" else None
            cost = result.cost_usd if result is not None else None
            out.write(json.dumps({"index": index, "status": status, "text": text, "cost_usd": cost}) + "\n")
    done = time.perf_counter()
    phases = {"add_job": jobs_added - start, "run": ran - jobs_added, "answers_file": done - ran}
    # batchata names each job `job-` and 8 hex digits of a uuid4: at 20,000 jobs two share one about 1 run in 20.
    duplicates = len(batch.jobs) - len({job.id for job in batch.jobs})
    notes = {"phases": {name: round(seconds, 3) for name, seconds in phases.items()}, "duplicate_job_ids": duplicates}
    print(json.dumps(notes), flush=True)
    return 0


# The orchestrator: one emulator and one working directory per measurement, one process per contender.


@dataclass
class Answers:
    """One contender's answers in input order: a status and the text (None unless it succeeded)."""

    statuses: list[str]
    texts: list[str | None]
    cost_usd: float

    @property
    def digest(self) -> str:
        hasher = hashlib.sha256()
        for text in self.texts:
            hasher.update(b"\1" if text is None else text.encode() + b"\0")
        return hasher.hexdigest()[:16]


@dataclass
class Measurement:
    contender: Contender
    items: int
    wall_seconds: float
    peak_rss_kib: int
    cpu_seconds: float
    calls: dict[str, int]
    batches: int
    to_first_create: float | None
    after_last_end: float | None
    written_files: int
    written_bytes: int
    answers: Answers
    notes: dict[str, Any] = field(default_factory=dict[str, Any])

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())


@dataclass(frozen=True)
class Paths:
    work: Path
    input: Path
    batchata_python: Path


def find_python312(given: str | None) -> str:
    """An interpreter that runs Python 3.12: the one given, else `python3.12` on PATH, else a pyenv install."""
    candidates = (
        [given]
        if given
        else [
            shutil.which("python3.12"),
            *sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.12*/bin/python")), reverse=True),
        ]
    )
    for candidate in candidates:
        if candidate and python_version(candidate) == "3.12":
            return candidate
    where = given or "python3.12 on PATH or ~/.pyenv/versions/3.12*"
    raise SystemExit(f"batchata needs Python 3.12 and none was found at {where}: pass --python312 PATH.")


def python_version(python: str, *, full: bool = False) -> str | None:
    """`python`'s version (major.minor, or in `full`), or None when it does not run."""
    try:
        done = subprocess.run(
            [python, "-c", "import platform; print(platform.python_version())"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    version = done.stdout.strip()
    return version if full else ".".join(version.split(".")[:2])


def batchata_environment(venv: Path, python312: str | None) -> Path:
    """The Python of a virtual environment with batchata installed: reused if it has the pinned version."""
    python = venv / "bin" / "python"
    if python.exists() and installed_version(python, "batchata") == BATCHATA_VERSION:
        return python
    interpreter = find_python312(python312)
    log(f"creating {venv} with {interpreter} and installing batchata=={BATCHATA_VERSION}")
    subprocess.run([interpreter, "-m", "venv", "--clear", str(venv)], check=True)
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, f"batchata=={BATCHATA_VERSION}"], check=True)
    return python


def installed_version(python: Path, package: str) -> str | None:
    done = subprocess.run(
        [str(python), "-c", f"import importlib.metadata as m; print(m.version({package!r}))"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.stdout.strip() if done.returncode == 0 else None


def check_lowtide_run() -> None:
    done = subprocess.run([*lowtide_command(), "run", "--help"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(
            "This lowtide has no `lowtide run` command yet (`lowtide run --help` failed); run with"
            " `--contenders batchata` to measure batchata alone.\n" + done.stderr[-2000:]
        )


def write_input(path: Path, n: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as out:
        for i in range(n):
            out.write(json.dumps({"prompt": prompt(i)}) + "\n")


def actor_yaml(args: argparse.Namespace, base_url: str) -> str:
    return "\n".join(
        [
            "name: bulk-benchmark",
            f"model: {args.model}",
            f"max_tokens: {args.max_tokens}",
            f"temperature: {args.temperature}",
            "batch_processing: batch",
            f"base_url: {base_url}",
            "batch:",
            f"  poll_interval: {args.poll_interval}",
            "",
        ]
    )


def contender_environment(args: argparse.Namespace, base_url: str, scratch: Path) -> dict[str, str]:
    """The emulator's address and a fake key; no real Anthropic credentials reach either contender."""
    environment = {
        name: value
        for name, value in subprocess_environment(args.bytecode).items()
        if not name.startswith("ANTHROPIC_")
    }
    environment["ANTHROPIC_API_KEY"] = API_KEY
    environment["ANTHROPIC_BASE_URL"] = base_url
    # batchata keeps its state in a temporary file it never deletes: keep it in the working directory.
    environment["TMPDIR"] = str(scratch)
    return environment


def contender_command(
    contender: Contender, n: int, args: argparse.Namespace, paths: Paths, scratch: Path, base_url: str
) -> tuple[list[str], Path]:
    """The command line of one contender, and the JSONL file of answers it writes."""
    if contender == "lowtide":
        actor = scratch / "actor.yaml"
        actor.write_text(actor_yaml(args, base_url))
        answers = scratch / "results.jsonl"
        command = [
            *lowtide_command(), "run", str(paths.input), "--actor", str(actor), "--out", str(answers),
            "--run-id", "bulk-benchmark", "--items-per-batch", str(args.items_per_batch),
            "--max-parallel-batches", str(args.max_parallel_batches), "--progress", "none",
            "--ledger", str(scratch / "ledger.sqlite3"),
        ]  # fmt: skip
        if args.cost_limit is not None:
            command += ["--max-cost-usd", str(args.cost_limit)]
        return command, answers
    answers = scratch / "answers.jsonl"
    command = [
        str(paths.batchata_python), str(Path(__file__).resolve()), "--contender", "batchata",
        "--input", str(paths.input), "--answers", str(answers), "--results-dir", str(scratch / "batchata-results"),
        "--items-per-batch", str(args.items_per_batch), "--max-parallel-batches", str(args.max_parallel_batches),
        "--poll-interval", str(args.poll_interval), "--model", args.model, "--max-tokens", str(args.max_tokens),
        "--temperature", str(args.temperature),
    ]  # fmt: skip
    if args.cost_limit is not None:
        command += ["--cost-limit", str(args.cost_limit)]
    return command, answers


def run_timed(command: Sequence[str], scratch: Path, environment: dict[str, str]) -> tuple[int, float, Any]:
    """Run `command` in `scratch`; its exit code, wall seconds and resource usage (its own, from `wait4`)."""
    with (scratch / "stdout.txt").open("w") as stdout, (scratch / "stderr.txt").open("w") as stderr:
        start = time.perf_counter()
        process = subprocess.Popen(command, cwd=scratch, env=environment, stdout=stdout, stderr=stderr)
        code, usage = wait_within(process, _CONTENDER_TIMEOUT_SECONDS)
        elapsed = time.perf_counter() - start
    return code, elapsed, usage


def read_answers(path: Path, n: int) -> Answers:
    statuses: list[str] = ["missing"] * n
    texts: list[str | None] = [None] * n
    cost = 0.0
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        statuses[row["index"]] = row["status"]
        texts[row["index"]] = row.get("text") if row["status"] == "succeeded" else None
        cost += float(row.get("cost_usd") or 0)
    return Answers(statuses, texts, cost)


def list_batches(url: str) -> list[dict[str, Any]]:
    """Every batch the emulator holds, page by page (the API's list route: read the stats first)."""
    found: list[dict[str, Any]] = []
    after: str | None = None
    while True:
        query = {"limit": "1000", **({"after_id": after} if after else {})}
        request = urllib.request.Request(
            f"{url}/v1/messages/batches?{urllib.parse.urlencode(query)}",
            headers={"x-api-key": API_KEY, "anthropic-version": "2023-06-01"},
        )
        with urllib.request.urlopen(request, timeout=60) as answer:
            page: dict[str, Any] = json.load(answer)
        found.extend(page["data"])
        if not page.get("has_more"):
            return found
        after = page["last_id"]


def written(scratch: Path) -> tuple[int, int]:
    """Files and bytes the contender left in its working directory (not counting our logs and actor file)."""
    files = size = 0
    for folder, _, names in os.walk(scratch):
        for name in names:
            if Path(folder) == scratch and name in (*_LOGS, "actor.yaml"):
                continue
            files += 1
            size += (Path(folder) / name).stat().st_size
    return files, size


def measure(
    contender: Contender, n: int, args: argparse.Namespace, paths: Paths, *, quiet: bool = False
) -> Measurement:
    scratch = paths.work / f"run-{contender}"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    try:
        # batchata 0.4.7 knows no current model: the emulator serves the retired one it does know as well.
        with Emulator(args.processing_seconds, subprocess_environment(args.bytecode), (args.model,)) as emulator:
            command, answers_file = contender_command(contender, n, args, paths, scratch, emulator.url)
            environment = contender_environment(args, emulator.url, scratch)
            started_at = time.time()
            code, elapsed, usage = run_timed(command, scratch, environment)
            if code != 0:
                stderr = (scratch / "stderr.txt").read_text()[-4000:]
                raise RuntimeError(f"{contender} failed (exit code {code}): {' '.join(command)}\n{stderr}")
            stats = emulator.stats()
            batches = list_batches(emulator.url)
        notes: dict[str, Any] = {}
        for line in (scratch / "stdout.txt").read_text().splitlines():
            if line.startswith('{"phases"'):
                notes = json.loads(line)
        if notes.get("duplicate_job_ids"):
            raise DuplicateJobIds(notes["duplicate_job_ids"])
        check_custom_ids(stats, contender, n)
        created = [epoch(b["created_at"]) for b in batches]
        ended = [epoch(b["ended_at"]) for b in batches if b.get("ended_at")]
        files, size = written(scratch)
        stderr_lines = (scratch / "stderr.txt").read_text().splitlines()
        if stderr_lines:
            # Warnings a contender printed (retries, reconciliation) explain an outlier: keep them.
            kept = paths.work / "logs" / f"{contender}-{n}-{time.strftime('%Y%m%d-%H%M%S')}.stderr.txt"
            kept.parent.mkdir(exist_ok=True)
            shutil.copyfile(scratch / "stderr.txt", kept)
            notes["stderr"] = f"{len(stderr_lines)} line(s) on stderr, kept in {kept}"
        measurement = Measurement(
            contender=contender,
            items=n,
            wall_seconds=elapsed,
            peak_rss_kib=usage.ru_maxrss // 1024 if sys.platform == "darwin" else usage.ru_maxrss,
            cpu_seconds=usage.ru_utime + usage.ru_stime,
            calls={str(route): int(count) for route, count in stats.get("calls", {}).items()},
            batches=len(batches),
            to_first_create=min(created) - started_at if created else None,
            after_last_end=started_at + elapsed - max(ended) if ended else None,
            written_files=files,
            written_bytes=size,
            answers=read_answers(answers_file, n),
            notes=notes,
        )
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    if not quiet:
        statuses = Counter(measurement.answers.statuses)
        log(
            f"  {contender:<8} n={n:<6} {measurement.wall_seconds:8.2f} s  {measurement.peak_rss_kib / 1024:7.1f} MiB"
            f"  cpu {measurement.cpu_seconds:7.2f} s  batches {measurement.batches}  calls {measurement.calls}"
            f"  answers {dict(statuses)}"
            + (f"  {notes['phases']}" if "phases" in notes else "")
            + (f"  ({notes['stderr']})" if "stderr" in notes else "")
        )
    return measurement


class DuplicateJobIds(Exception):
    """batchata gave two jobs the same id: it sent one of them only, and both items got that one's answer."""

    def __init__(self, count: int) -> None:
        super().__init__(f"batchata gave {count} job(s) an id another job already had")
        self.count = count


def measure_counted(
    contender: Contender, args: argparse.Namespace, paths: Paths, incidents: list[str], *, attempts: int = 3
) -> Measurement:
    """One counted measurement; a batchata run that lost items to a duplicate job id is noted and run again."""
    for attempt in range(1, attempts + 1):
        try:
            return measure(contender, args.items, args, paths)
        except DuplicateJobIds as duplicate:
            incidents.append(str(duplicate))
            log(f"  {contender}: {duplicate} (attempt {attempt} of {attempts}); not counted, running it again")
    raise RuntimeError(f"{contender} lost items to duplicate job ids {attempts} times in a row")


def check_custom_ids(stats: dict[str, Any], contender: str, n: int) -> None:
    """Every item was sent in exactly one batch request."""
    created = stats.get("created_custom_ids")
    if created is None:
        return
    twice = sum(1 for count in created.values() if count != 1)
    if len(created) != n or twice:
        raise RuntimeError(f"{contender} created {len(created)} distinct custom_ids of {n}, {twice} more than once")


def compare(measurements: Sequence[Measurement], n: int) -> list[str]:
    """Check that every run answered every item, and that the contenders' answers agree item by item."""
    for m in measurements:
        succeeded = m.answers.statuses.count("succeeded")
        if succeeded != n:
            raise RuntimeError(f"{m.contender} answered {succeeded} of {n} items: {dict(Counter(m.answers.statuses))}")
    first = {c: next((m for m in measurements if m.contender == c), None) for c in CONTENDERS}
    lines: list[str] = []
    for m in measurements:
        reference = first[m.contender]
        if reference is not None and m.answers.digest != reference.answers.digest:
            raise RuntimeError(f"{m.contender}'s answers changed from one run to the next: the emulator is not stable.")
    ours, theirs = first["lowtide"], first["batchata"]
    if ours is None or theirs is None:
        only = ours or theirs
        assert only is not None
        return [f"Answers: {only.contender} answered all {n:,} items (checksum `{only.answers.digest}`)."]
    same = sum(1 for a, b in zip(ours.answers.texts, theirs.answers.texts, strict=True) if a == b)
    if same != n:
        differing = [i for i in range(n) if ours.answers.texts[i] != theirs.answers.texts[i]][:3]
        samples = "; ".join(f"#{i}: {ours.answers.texts[i]!r} vs {theirs.answers.texts[i]!r}" for i in differing)
        raise RuntimeError(f"Only {same} of {n} answers are the same in both: not the same work. {samples}")
    sample = [0, n // 2, n - 1]
    log("  sample answers (same in both): " + "; ".join(f"#{i} {ours.answers.texts[i]!r}" for i in sample))
    lines.append(
        f"Answers: both answered all {n:,} items, and all {n:,} texts are the same item by item"
        f" (checksum `{ours.answers.digest}`), e.g. item {n - 1}: `{ours.answers.texts[n - 1]}`."
        f" Cost each reports for the run: lowtide ${ours.answers.cost_usd:.4f}, batchata"
        f" ${theirs.answers.cost_usd:.4f}."
    )
    return lines


@dataclass(frozen=True)
class Summary:
    contender: Contender
    runs: int
    wall_seconds: float
    wall_range: tuple[float, float]
    peak_rss_mib: float
    cpu_seconds: float
    calls: dict[str, int]
    batches: int
    to_first_create: float | None
    after_last_end: float | None
    written_files: int
    written_mib: float
    notes: dict[str, float]


def summarize(measurements: Sequence[Measurement], contender: Contender) -> Summary:
    mine = [m for m in measurements if m.contender == contender]
    walls = [m.wall_seconds for m in mine]
    routes = sorted({route for m in mine for route in m.calls})
    phases = [m.notes.get("phases", {}) for m in mine]

    def median_of(values: Sequence[float | None]) -> float | None:
        known = [v for v in values if v is not None]
        return statistics.median(known) if known else None

    return Summary(
        contender=contender,
        runs=len(mine),
        wall_seconds=statistics.median(walls),
        wall_range=(min(walls), max(walls)),
        peak_rss_mib=statistics.median(m.peak_rss_kib for m in mine) / 1024,
        cpu_seconds=statistics.median(m.cpu_seconds for m in mine),
        calls={route: int(statistics.median(m.calls.get(route, 0) for m in mine)) for route in routes},
        batches=int(statistics.median(m.batches for m in mine)),
        to_first_create=median_of([m.to_first_create for m in mine]),
        after_last_end=median_of([m.after_last_end for m in mine]),
        written_files=int(statistics.median(m.written_files for m in mine)),
        written_mib=statistics.median(m.written_bytes for m in mine) / 2**20,
        notes={name: statistics.median(p[name] for p in phases) for name in phases[0]} if phases[0] else {},
    )


def calls_text(calls: dict[str, int]) -> str:
    parts = [f"{route.removeprefix('batches.')} {count}" for route, count in sorted(calls.items()) if count]
    return f"{sum(calls.values())} ({', '.join(parts)})"


def seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s"


def per_run(measurements: Sequence[Measurement], contender: Contender) -> str:
    """Each run's wall time and API calls, so that an outlier (and its calls) shows."""
    runs = [
        f"{m.wall_seconds:.2f} s, CPU {m.cpu_seconds:.2f} s, {calls_text(m.calls)}"
        for m in measurements
        if m.contender == contender
    ]
    return f"- {contender}: " + "; ".join(runs)


def table(summaries: Sequence[Summary]) -> list[str]:
    lines = [
        "| contender | runs | wall time, median (min-max) | peak RSS | CPU time | API calls | batches"
        " | written to disk |",
        "|---|---:|---|---:|---:|---|---:|---:|",
    ]
    for s in summaries:
        lines.append(
            f"| {s.contender} | {s.runs} | **{s.wall_seconds:.2f} s** ({s.wall_range[0]:.2f}-{s.wall_range[1]:.2f})"
            f" | **{s.peak_rss_mib:.0f} MiB** | {s.cpu_seconds:.2f} s | {calls_text(s.calls)} | {s.batches}"
            f" | {s.written_files:,} files, {s.written_mib:.1f} MiB |"
        )
    lines += [
        "",
        "| contender | process start to first batch created | last batch ended to process exit |",
        "|---|---:|---:|",
        *(f"| {s.contender} | {seconds(s.to_first_create)} | {seconds(s.after_last_end)} |" for s in summaries),
    ]
    theirs = next((s for s in summaries if s.contender == "batchata"), None)
    if theirs is not None and theirs.notes:
        parts = ", ".join(f"{name} {value:.2f} s" for name, value in theirs.notes.items())
        lines += ["", f"Inside the batchata process (median): {parts}."]
    ours = next((s for s in summaries if s.contender == "lowtide"), None)
    if ours is not None and theirs is not None:
        ratios = [
            f"wall time **{ours.wall_seconds / theirs.wall_seconds:.2f}x**",
            f"peak memory **{ours.peak_rss_mib / theirs.peak_rss_mib:.2f}x**",
            f"CPU time {ours.cpu_seconds / theirs.cpu_seconds:.2f}x",
            f"API calls {sum(ours.calls.values()) / sum(theirs.calls.values()):.2f}x",
        ]
        lines += ["", "lowtide / batchata: " + ", ".join(ratios) + "."]
    return lines


def versions(args: argparse.Namespace, paths: Paths) -> list[str]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    lines = [f"- machine: {os.cpu_count()} CPU(s) ({cpu}), {platform.system()} {platform.release()}"]
    if "lowtide" in args.contenders:
        ours = ", ".join(f"{name} {metadata.version(name)}" for name in ("lowtide", "anthropic", "pydantic"))
        lines.append(f"- lowtide: Python {platform.python_version()}; {ours}")
    if "batchata" in args.contenders:
        theirs = ", ".join(
            f"{name} {installed_version(paths.batchata_python, name)}" for name in ("batchata", "anthropic", "pydantic")
        )
        lines.append(f"- batchata: Python {python_version(str(paths.batchata_python), full=True)}; {theirs}")
    return lines


def report(
    args: argparse.Namespace,
    paths: Paths,
    measurements: Sequence[Measurement],
    checks: Sequence[str],
    started: float,
    loads: Sequence[float],
    revision: str,
) -> str:
    command = " ".join(["python benchmarks/bulk_vs_batchata.py", *sys.argv[1:]])
    summaries = [summarize(measurements, c) for c in CONTENDERS if c in args.contenders]
    batches = -(-args.items // args.items_per_batch)
    lines = [
        f"Run on {time.strftime('%Y-%m-%d %H:%M', time.localtime(started))},"
        f" {(time.time() - started) / 60:.1f} minutes in all.",
        "",
        f"- lowtide source: {revision}",
        *versions(args, paths),
        f"- load average (1 min) {loads[0]:.2f} at the start, {loads[-1]:.2f} at the end: the machine is shared",
        f"- command: `{command}`",
        f"- emulator: `lowtide emulator --port 0 --processing-seconds {args.processing_seconds} --models {args.model}`,"
        " a fresh one per measurement",
        f"- the same for both: {args.items:,} prompts (`question {{i}}`) from one JSONL file, `{args.model}`,"
        f" max_tokens {args.max_tokens}, temperature {args.temperature}, {args.items_per_batch:,} items per batch"
        f" ({batches} batches), at most {args.max_parallel_batches} batches at a time, a status check every"
        f" {args.poll_interval:g} s"
        + (f", cost limit ${args.cost_limit:g}" if args.cost_limit is not None else ", no cost limit"),
        "- what differs: batchata runs on Python 3.12, lowtide here on"
        f" {platform.python_version()}; batchata writes a JSON file per item (and, by its default with a results"
        " directory, a raw response file per item and a request file per batch) and a state file, lowtide a results"
        " JSONL file and its SQLite ledger; batchata logs at `warn`, lowtide runs with `--progress none`",
        "",
        f"### {args.items:,} items, {args.repeat} run(s) each" + (", order alternating" if args.repeat > 1 else ""),
        "",
        *table(summaries),
        "",
        "Each run, in order:",
        "",
        *(per_run(measurements, s.contender) for s in summaries),
        "",
        *checks,
        "",
        "Wall time, peak RSS and CPU time are the contender's own process (`os.wait4`), from spawn to exit:"
        " interpreter start, imports and reading the input included. `retrieve` counts the status checks, plus one"
        " per batch where the SDK's `messages.batches.results()` looks up the results URL (batchata).",
    ]
    return "\n".join(lines) + "\n"


def write_report(path: Path, text: str) -> None:
    """Replace the results block of `path` (between the markers), keeping everything written around it."""
    block = f"{RESULTS_START}\n{text}{RESULTS_END}"
    current = path.read_text() if path.exists() else "# Benchmarks\n"
    if RESULTS_START in current and RESULTS_END in current:
        before, rest = current.split(RESULTS_START, 1)
        after = rest.split(RESULTS_END, 1)[1]
        path.write_text(before + block + after)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(current.rstrip("\n") + "\n\n## lowtide run beside batchata\n\n" + block + "\n")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=20_000, help="prompts in the run (default 20000)")
    parser.add_argument("--items-per-batch", type=int, default=1_000, help="items per batch, both (default 1000)")
    parser.add_argument(
        "--max-parallel-batches", type=int, default=10, help="batches in flight at once, both (default 10)"
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs of each contender; order alternates (default 1)")
    parser.add_argument(
        "--processing-seconds", type=float, default=2.0, help="how long the emulator keeps each batch in progress"
    )
    parser.add_argument(
        "--poll-interval", type=float, default=1.0, help="seconds between status checks (batchata's own is 1 s)"
    )
    parser.add_argument("--model", default=MODEL, help=f"model, one batchata knows (default {MODEL})")
    parser.add_argument("--max-tokens", type=int, default=MAX_TOKENS, help=f"max_tokens (default {MAX_TOKENS})")
    parser.add_argument("--temperature", type=float, default=TEMPERATURE, help=f"temperature (default {TEMPERATURE})")
    parser.add_argument("--cost-limit", type=float, default=None, help="a cost limit in USD for both (default none)")
    parser.add_argument(
        "--contenders", nargs="+", choices=CONTENDERS, default=list(CONTENDERS), help="which to run (default both)"
    )
    parser.add_argument("--python312", default=None, help="Python 3.12 for batchata's environment (default: found)")
    parser.add_argument(
        "--venv", type=Path, default=ROOT / "build" / "bench" / "batchata-venv", help="batchata's environment"
    )
    parser.add_argument(
        "--work-dir", type=Path, default=ROOT / "build" / "bench" / "bulk", help="input and working directories"
    )
    parser.add_argument("--keep", action="store_true", help="keep each contender's working directory")
    parser.add_argument(
        "--bytecode",
        choices=("cached", "as-is"),
        default="cached",
        help="let Python cache bytecode as after a pip install (cached, default), or keep the environment's setting",
    )
    parser.add_argument("--out", type=Path, default=None, help="write the results into this Markdown file")
    # Internal: run batchata in this process (under the batchata environment's Python).
    parser.add_argument("--contender", choices=("batchata",), help=argparse.SUPPRESS)
    parser.add_argument("--input", help=argparse.SUPPRESS)
    parser.add_argument("--answers", help=argparse.SUPPRESS)
    parser.add_argument("--results-dir", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.contender == "batchata":
        return run_batchata(args)
    started = time.time()
    loads = [os.getloadavg()[0]]
    if "lowtide" in args.contenders:
        check_lowtide_run()
    python = batchata_environment(args.venv, args.python312) if "batchata" in args.contenders else Path()
    paths = Paths(work=args.work_dir.resolve(), input=args.work_dir.resolve() / "input.jsonl", batchata_python=python)
    revision, fingerprint = source_revision()
    contenders = [c for c in CONTENDERS if c in args.contenders]
    log("warming up (one small uncounted run of each contender: bytecode and disk caches)")
    write_input(paths.input, 100)
    for contender in contenders:
        measure(contender, 100, args, paths, quiet=True)
    write_input(paths.input, args.items)
    measurements: list[Measurement] = []
    incidents: list[str] = []
    for round_ in range(args.repeat):
        order = contenders if round_ % 2 == 0 else contenders[::-1]
        log(f"round {round_ + 1}/{args.repeat} at {args.items} items: {' then '.join(order)}")
        measurements.extend(measure_counted(contender, args, paths, incidents) for contender in order)
    checks = compare(measurements, args.items)
    if incidents:
        checks.append(
            f"In {len(incidents)} more batchata run(s), not counted above, two jobs drew the same id (batchata names"
            " a job `job-` and 8 hex digits of a uuid4): it sent one of the two only, reported one result fewer than"
            " jobs added, and both items got the same answer. Each such run was repeated."
        )
    loads.append(os.getloadavg()[0])
    now, latest = source_revision()
    if latest != fingerprint:
        now = "" if now == revision else f" (now {now})"
        revision += f"; **src/ changed during the run**{now}: the runs may mix versions"
    text = report(args, paths, measurements, checks, started, loads, revision)
    print(text)
    if args.out is not None:
        write_report(args.out, text)
        log(f"results written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
