"""N durable agent runs of three model turns and two journaled steps, in batch mode against `lowtide emulator`, beside
the same 3N requests sent as three `run_many` waves, measured in the same run (issue 58's benchmark).

    python benchmarks/durable_agents.py [--runs 1000] [--processing-seconds 1] [--poll-interval 1]
                                        [--out docs/benchmarks.md]

Every contender runs in a subprocess of its own, against a fresh `lowtide emulator` subprocess and a fresh SQLite
ledger, so that its CPU (user + system, `getrusage`) is its own:

- `agents`: `durable_agents:triage`, an `@agent` whose three turns ask fixed prompts (`turn K of issue I`, so that the
  baseline can send the very same requests) and whose two steps append a line to a file. All N runs are started at
  once (`asyncio.gather` of `triage.start`); each parks once its first turn's batch exists; then `resume_once` passes
  (what `lowtide agents resume --once` does) every `--poll-interval` seconds until every run has finished.
- `run_many`: the same 3N requests, turn by turn: `actor.run_many` of the N first turns, then the N second, then the N
  third, as a program that holds its process for the whole agent would.
- `killed`: the `agents` contender's first process is killed with SIGKILL once the API has a batch of second turns;
  a new process resumes the runs to the end. Nothing may be paid or run twice: each custom id created once (the
  emulator's count), each step's line written once per run.

Reported: batches per turn (the goal: 1, every run's turn K in one batch), CPU per turn beside `run_many`'s (the goal:
at most 1.2x), the CPU of a `resume_once` pass per run it advanced, and the killed run's counts. The load average is
printed beside the figures: on a shared machine wall time moves with it far more than CPU does.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from harness import API_KEY, Emulator, cpu_seconds, log, subprocess_environment, write_report
from lowtide import Actor, AgentContext, agent

MARKERS = ("<!-- durable-agents-results:start -->", "<!-- durable-agents-results:end -->")
TURNS = 3
_ACTORS: dict[str, Actor] = {}


def _actor() -> Actor:
    """The turns' actor, built from the environment the benchmark gives its contenders (any process, as a user's)."""
    if "planner" not in _ACTORS:
        _ACTORS["planner"] = Actor(
            {
                "name": "planner",
                "model": "claude-haiku-4-5",
                "max_tokens": 64,
                "batch_processing": "batch",
                "base_url": os.environ["DURABLE_AGENTS_URL"],
                "api_key_env": "DURABLE_AGENTS_KEY",
                "batch": {"poll_interval": float(os.environ["DURABLE_AGENTS_POLL"]), "coalesce_window": 0.5},
            }
        )
    return _ACTORS["planner"]


def _turn(k: int, issue: int) -> str:
    return f"turn {k} of issue {issue}"


def _step(name: str, issue: int) -> str:
    """A step's side effect: a line appended to the steps file (counted after a kill: each step once)."""
    with Path(os.environ["DURABLE_AGENTS_STEPS"]).open("a") as out:
        out.write(f"{name} {issue}\n")
    return f"{name} done for {issue}"


@agent
async def triage(ctx: AgentContext, issue: int) -> str:
    """Three model turns, a step after the first and after the second."""
    first = await ctx.run(_actor(), _turn(1, issue))
    await ctx.step(_step, "read-log", issue)
    await ctx.run(_actor(), _turn(2, issue))
    await ctx.step(_step, "comment", issue)
    third = await ctx.run(_actor(), _turn(3, issue))
    return first.text[:8] + third.text[:8]


async def _agents(runs: int, poll: float, *, passes_after: int | None = None) -> dict[str, Any]:
    """Start `runs` runs (unless `passes_after` says they were started by a process now dead), then resume them
    until all have finished; CPU and wall of this work, and of each pass."""
    from lowtide.agents.agent import store_of
    from lowtide.agents.fleet import resume_once
    from lowtide.ledger.journal_records import AgentState

    store = store_of(None)
    start_cpu, start_wall = cpu_seconds(), time.perf_counter()
    if passes_after is None:
        await asyncio.gather(*(triage.start(i, run_id=f"run-{i}") for i in range(runs)))
    passes: list[tuple[float, int]] = []
    while True:
        finished = len(store.agent_journal.agent_runs([AgentState.FINISHED]))
        if finished == runs:
            break
        await asyncio.sleep(poll)
        before = cpu_seconds()
        done = await resume_once(store)
        if done.errors:
            raise SystemExit(f"resume failed: {done.errors[:3]}")
        if done.runs:
            passes.append((cpu_seconds() - before, len(done.runs)))
    await _actor().aclose()
    return {
        "cpu": cpu_seconds() - start_cpu,
        "wall": time.perf_counter() - start_wall,
        "passes": passes,
        "finished": runs,
    }


async def _run_many(runs: int) -> dict[str, Any]:
    start_cpu, start_wall = cpu_seconds(), time.perf_counter()
    answered = 0
    for k in range(1, TURNS + 1):
        answers = await _actor().run_many([_turn(k, i) for i in range(runs)], keys=[f"t{k}-{i}" for i in range(runs)])
        answered += sum(1 for answer in answers if not isinstance(answer, BaseException))
    await _actor().aclose()
    return {"cpu": cpu_seconds() - start_cpu, "wall": time.perf_counter() - start_wall, "answered": answered}


def _contender(which: str, runs: int, poll: float) -> None:
    """Run in a subprocess: one JSON line on stdout."""
    if which == "agents":
        print(json.dumps(asyncio.run(_agents(runs, poll))), flush=True)
    elif which == "resume":
        print(json.dumps(asyncio.run(_agents(runs, poll, passes_after=0))), flush=True)
    else:
        print(json.dumps(asyncio.run(_run_many(runs))), flush=True)


def _spawn(which: str, runs: int, poll: float, environment: dict[str, str]) -> subprocess.Popen[str]:
    here = Path(__file__).resolve().parent
    code = (
        f"import sys; sys.path.insert(0, {str(here)!r}); import durable_agents as d;"
        " d._contender(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]))"
    )
    return subprocess.Popen(
        [sys.executable, "-c", code, which, str(runs), str(poll)], stdout=subprocess.PIPE, text=True, env=environment
    )


def _result(process: subprocess.Popen[str]) -> dict[str, Any]:
    out, _ = process.communicate()
    if process.returncode != 0:
        raise SystemExit(f"a contender failed ({process.returncode})")
    found: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return found


def _measure(which: str, args: argparse.Namespace, *, kill: bool = False) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix=f"lowtide-bench-{which}-"))
    environment = subprocess_environment("cached")
    with Emulator(args.processing_seconds, environment) as emulator:
        environment |= {
            "DURABLE_AGENTS_URL": emulator.url,
            "DURABLE_AGENTS_KEY": API_KEY,
            "DURABLE_AGENTS_POLL": str(args.poll_interval),
            "DURABLE_AGENTS_STEPS": str(folder / "steps.txt"),
            "LOWTIDE_LEDGER": str(folder / "ledger.sqlite3"),
            # `resume_once` collects ended batches through the provider's client of the environment, as the
            # `lowtide agents resume` command does.
            "ANTHROPIC_BASE_URL": emulator.url,
            "ANTHROPIC_API_KEY": API_KEY,
        }
        process = _spawn(which, args.runs, args.poll_interval, environment)
        if not kill:
            found = _result(process)
        else:
            while emulator.stats()["calls"].get("batches.create", 0) < 2 and process.poll() is None:
                time.sleep(0.05)
            process.send_signal(signal.SIGKILL)
            process.wait()
            found = _result(_spawn("resume", args.runs, args.poll_interval, environment))
        stats = emulator.stats()
    created = Counter(stats.get("created_custom_ids", {}))
    lines = Counter((folder / "steps.txt").read_text().splitlines()) if (folder / "steps.txt").exists() else Counter()
    found |= {
        "batches": stats["calls"].get("batches.create", 0),
        "requests_created": sum(created.values()),
        "created_twice": sum(1 for n in created.values() if n > 1),
        "steps": sum(lines.values()),
        "steps_twice": sum(1 for n in lines.values() if n > 1),
    }
    log(f"{which}{' (killed)' if kill else ''}: {json.dumps({k: v for k, v in found.items() if k != 'passes'})}")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--processing-seconds", type=float, default=1.0)
    parser.add_argument("--poll-interval", type=float, default=1.0)
    parser.add_argument("--out", type=Path, default=None, help="write the results block into this file")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    agents = _measure("agents", args)
    baseline = _measure("run_many", args)
    killed = _measure("agents", args, kill=True)
    end = os.getloadavg()[0]
    turns = TURNS * args.runs
    passes = agents["passes"]
    per_run = sum(cpu for cpu, _ in passes) / max(1, sum(n for _, n in passes))
    text = (
        f"- {args.runs} runs of three turns and two steps; the emulator's batches take {args.processing_seconds:g} s;"
        f" resume every {args.poll_interval:g} s; load average {load:.2f} at the start, {end:.2f} at the end\n"
        f"- batches per turn: {agents['batches'] / TURNS:.2f} (agents), {baseline['batches'] / TURNS:.2f} (run_many)\n"
        f"- CPU: agents {agents['cpu']:.2f} s ({1000 * agents['cpu'] / turns:.2f} ms a turn), run_many"
        f" {baseline['cpu']:.2f} s ({1000 * baseline['cpu'] / turns:.2f} ms a turn):"
        f" {agents['cpu'] / baseline['cpu']:.2f}x\n"
        f"- wall: agents {agents['wall']:.1f} s, run_many {baseline['wall']:.1f} s\n"
        f"- a resume pass: {1000 * per_run:.2f} ms of CPU per run it advanced ({len(passes)} passes)\n"
        f"- killed once the API had a batch of second turns, resumed by a new process: {killed['finished']} runs"
        f" finished, {killed['requests_created']} requests created ({killed['created_twice']} twice), {killed['steps']}"
        f" steps run ({killed['steps_twice']} twice)\n"
    )
    print(text)
    if args.out is not None:
        write_report(args.out, text, markers=MARKERS)


if __name__ == "__main__":
    main()
