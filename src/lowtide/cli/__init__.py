"""The `lowtide` command (`lowtide --help`); `main` runs it and returns its exit status."""

from __future__ import annotations

from lowtide.cli.main import main

__all__ = ["main"]
