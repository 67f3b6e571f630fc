"""Checking the options `Actor.bulk` passes on to a `BulkRun`."""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Mapping

from lowtide.errors import ConfigurationError

__all__ = ["check_run_options"]


def check_run_options(options: Mapping[str, object]) -> None:
    """Refuse a `BulkRun` option by a name it does not take (`Actor.bulk`'s keywords), naming the closest one."""
    from lowtide.bulk.running.runner import BulkRun  # (which imports most of lowtide.bulk: only when asked)

    known = sorted(set(inspect.signature(BulkRun).parameters) - {"actor"})
    unknown = sorted(set(options) - set(known))
    if unknown:
        close = difflib.get_close_matches(unknown[0], known, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ConfigurationError(
            f"Unknown bulk run option(s): {', '.join(unknown)}.{hint} The options are {', '.join(known)}.",
            field=unknown[0],
        )
