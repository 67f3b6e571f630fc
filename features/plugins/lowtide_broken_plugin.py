"""A plugin that cannot be imported: it needs a package that is not installed."""

from __future__ import annotations

# The point of this module: its import fails.
import lowtide_vendor_sdk_not_installed  # noqa: F401  # pyright: ignore[reportMissingImports]


def register(registry: object) -> None:  # pragma: no cover - never reached
    raise AssertionError("unreachable")
