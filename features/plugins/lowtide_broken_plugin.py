"""A plugin that cannot be imported: it needs a package that is not installed."""

from __future__ import annotations

import lowtide_vendor_sdk_not_installed  # noqa: F401  # the point of this module: its import fails


def register(registry: object) -> None:  # pragma: no cover - never reached
    raise AssertionError("unreachable")
