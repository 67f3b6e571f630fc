"""Where a bulk run writes, checked before anything is sent: a run that could not write its results would have
paid for answers it cannot hand over."""

from __future__ import annotations

import os
from pathlib import Path

from lowtide.errors import ConfigurationError
from lowtide.spelling import argument

__all__ = ["check_outputs"]


def check_outputs(*, out: Path | None, results_dir: Path | None) -> None:
    """`out` can be written (its folder exists and takes files; it is not a folder itself), and `results_dir` is a
    folder that can be made and written; a `ConfigurationError` naming which and why otherwise."""
    if out is not None:
        folder = out.parent if str(out.parent) else Path(".")
        if out.is_dir():
            raise ConfigurationError(f"{argument('out')}: {out} is a folder; name a file for the results.", field="out")
        if not folder.is_dir():
            raise ConfigurationError(
                f"{argument('out')}: cannot write the results to {out}: its folder {folder} does not exist.",
                field="out",
            )
        if not os.access(folder, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
            raise ConfigurationError(
                f"{argument('out')}: cannot write the results to {out}: permission denied.", field="out"
            )
    if results_dir is not None:
        if results_dir.exists() and not results_dir.is_dir():
            raise ConfigurationError(
                f"{argument('results_dir')}: {results_dir} is a file, not a folder; name a folder for the results.",
                field="results_dir",
            )
        try:
            results_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigurationError(
                f"{argument('results_dir')}: cannot make the folder {results_dir}: {exc.strerror or exc}.",
                field="results_dir",
            ) from None
        if not os.access(results_dir, os.W_OK):
            raise ConfigurationError(
                f"{argument('results_dir')}: cannot write in {results_dir}: permission denied.", field="results_dir"
            )
