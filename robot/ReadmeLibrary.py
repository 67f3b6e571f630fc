"""Robot keywords that run README.md's examples as written (`features/support/readme.py`), against a `lowtide
emulator` process, in a scratch directory of the suite's own."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from robot.api import logger
from robot.api.deco import keyword, library

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "features" / "support"))

from readme import ReadmeRunner, describe, expected_status  # features/support, shared with the behave scenarios

README = Path(__file__).resolve().parents[1] / "README.md"


@library(scope="SUITE", auto_keywords=False)
class ReadmeLibrary:
    def __init__(self) -> None:
        self._scratch = Path(tempfile.mkdtemp(prefix="lowtide-readme-"))
        self._runner = ReadmeRunner(README, self._scratch / "work", python=sys.executable)
        self._skipped: dict[str, str] = {}
        self._outputs: dict[str, str] = {}

    @keyword("Run The README's Examples")
    def run_the_readmes_examples(self, database: str | None = None, *holding: str) -> None:
        """Every python and bash block, in order; fails listing each block that did not end as it should. With a
        PostgreSQL `database`, the blocks that need one run too, given its URL as `DATABASE_URL`. With `holding`
        texts, only the blocks holding one of them run (in order; the files the others write are written)."""
        self._runner.start()
        needs: set[str | None] = {None}
        if database is not None:
            self._runner.environment["DATABASE_URL"] = database
            needs.add("postgres")
        failures: list[str] = []
        for run in self._runner.run_all(needs=needs, holding=holding):
            if run.skipped is not None:
                self._skipped[str(run.block)] = run.skipped
                logger.info(f"skipped {run.block}: {run.skipped}")
                continue
            self._outputs[run.block.text] = run.output
            logger.info(
                f"{run.block}: status {run.status} in {run.seconds:.1f} s ({run.cpu:.1f} s of CPU)\n{run.output}"
            )
            if run.status != expected_status(run.block) or "Traceback (most recent call last)" in run.output:
                failures.append(describe(run))
        if failures:
            raise AssertionError("\n\n".join(failures))

    @keyword("The Examples Not Run Should Be")
    def the_examples_not_run_should_be(self, *reasons: str) -> None:
        """The reasons of the blocks left out, in order: nothing is left out silently."""
        actual = list(self._skipped.values())
        if actual != list(reasons):
            raise AssertionError(f"blocks left out: {self._skipped}; expected the reasons {list(reasons)}")

    @keyword("The Output Of The Block Holding")
    def the_output_of_the_block_holding(self, text: str, *expected: str) -> None:
        """The block that ran holding `text` printed each of `expected`."""
        outputs = [output for block, output in self._outputs.items() if text in block]
        if len(outputs) != 1:
            raise AssertionError(f"{len(outputs)} blocks that ran hold {text!r}, not one")
        missing = [part for part in expected if part not in outputs[0]]
        if missing:
            raise AssertionError(f"the block holding {text!r} did not print {missing}:\n{outputs[0]}")

    @keyword("Clean Up README Examples")
    def clean_up(self) -> None:
        """Stop what the examples started, and start afresh (a suite's next test runs them all again)."""
        logger.info(self._runner.close())
        shutil.rmtree(self._scratch, ignore_errors=True)
        self._scratch = Path(tempfile.mkdtemp(prefix="lowtide-readme-"))
        self._runner = ReadmeRunner(README, self._scratch / "work", python=sys.executable)
        self._skipped = {}
        self._outputs = {}
