"""The bulk run scenarios' state, shared by the step modules that read it (a step module is never imported by
another: behave would register its steps twice)."""

from __future__ import annotations

from typing import Any

from _support import World

from lowtide.bulk.outputs.results import RunResult

__all__ = ["anthropic_batches", "bulk_state", "prompts", "run_result"]


def bulk_state(w: World) -> dict[str, Any]:
    return w.asked.setdefault("bulk", {})


def prompts(w: World) -> list[Any]:
    return bulk_state(w)["prompts"]


def run_result(w: World) -> RunResult:
    result = bulk_state(w).get("result")
    assert isinstance(result, RunResult), f"no run result (error: {w.error!r})"
    return result


def anthropic_batches(w: World) -> list[Any]:
    """The emulated Anthropic API's batches, oldest first."""

    async def listing() -> list[Any]:
        return [batch async for batch in w.client.messages.batches.list(limit=100)]

    return sorted(w.run(listing()), key=lambda b: (b.created_at, b.id))
