"""A bulk run's mode and live options (`abort_on`, `abort_mode`, `post_process`), checked before it is recorded."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from lowtide.bulk.outputs.results import ItemResult
from lowtide.calls.arguments import check_seconds
from lowtide.core.spelling import argument
from lowtide.errors import ConfigurationError
from lowtide.live.retries import ERROR_CLASSES

__all__ = ["AbortMode", "LiveOptions", "PostProcess", "check_live_options"]

PostProcess = Callable[[ItemResult], Awaitable[object]]
"""Called with each successful item's result (its answer already stored); what it returns is not kept."""
AbortMode = Literal["drain", "cancel"]


@dataclass(frozen=True)
class LiveOptions:
    abort_on: frozenset[str]
    abort_mode: AbortMode


def check_live_options(
    mode: str,
    abort_on: Iterable[str] | str,
    abort_mode: str,
    post_process: PostProcess | None,
    post_process_timeout: float | None,
) -> LiveOptions | None:
    """A bulk run's mode and live options, checked: None for a batch run (which takes none of them)."""
    if mode not in ("batch", "live"):
        raise ConfigurationError(f"{argument('mode')} must be 'batch' or 'live', not {mode!r}.", field="mode")
    if isinstance(abort_on, str):
        abort_on = [part.strip() for part in abort_on.split(",") if part.strip()]
    aborting = frozenset(abort_on)
    if unknown := sorted(aborting - set(ERROR_CLASSES)):
        raise ConfigurationError(
            f"{argument('abort_on')}: unknown error class(es) {', '.join(unknown)}; choose from"
            f" {', '.join(ERROR_CLASSES)}.",
            field="abort_on",
        )
    if abort_mode not in ("drain", "cancel"):
        raise ConfigurationError(
            f"{argument('abort_mode')} must be 'drain' or 'cancel', not {abort_mode!r}.", field="abort_mode"
        )
    if post_process_timeout is not None:
        check_seconds("post_process_timeout", post_process_timeout)
    if mode == "batch":
        if aborting or post_process is not None or post_process_timeout is not None:
            raise ConfigurationError(
                f"{argument('abort_on')} and {argument('post_process')} are for live runs"
                f" ({argument('mode', 'live')}).",
                field="mode",
            )
        return None
    return LiveOptions(aborting, "cancel" if abort_mode == "cancel" else "drain")
