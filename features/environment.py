"""Behave fixtures: one asyncio.Runner per scenario, so async code runs in one event loop from plain steps."""

from __future__ import annotations

import asyncio
from typing import Any


def before_scenario(context: Any, scenario: Any) -> None:
    context.runner = asyncio.Runner()
    context.cleanups = []


def after_scenario(context: Any, scenario: Any) -> None:
    for cleanup in reversed(context.cleanups):
        result = cleanup()
        if asyncio.iscoroutine(result):
            context.runner.run(result)
    context.runner.close()
