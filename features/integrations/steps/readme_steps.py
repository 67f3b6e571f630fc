"""Steps that run README.md's framework examples as written (`features/support/readme.py`)."""

from __future__ import annotations

import sys
from pathlib import Path

from step_context import Context as StepContext
from step_context import then, when

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "support"))

from typing import Protocol

from readme import BlockRun, ReadmeRunner, describe, expected_status  # features/support, shared with Robot


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    readme_runs: list[BlockRun]


README = Path(__file__).resolve().parents[3] / "README.md"


@when("I run the README's examples that need {framework}")
def step_run_readme(context: Context, framework: str) -> None:
    runner = ReadmeRunner(README, context.state_dir / "readme", python=sys.executable)
    context.cleanups.append(runner.close)
    runner.start(processing_seconds=0.5)
    context.readme_runs = [run for run in runner.run_all(needs={framework}) if run.skipped is None]


@then("each of those examples ended as the README says")
def step_readme_ended(context: Context) -> None:
    runs: list[BlockRun] = context.readme_runs
    assert runs, "the README has no example for this framework"
    failed = [
        describe(run)
        for run in runs
        if run.status != expected_status(run.block) or "Traceback (most recent call last)" in run.output
    ]
    assert not failed, "\n\n".join(failed)
