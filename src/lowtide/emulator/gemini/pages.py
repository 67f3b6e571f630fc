"""Gemini's lists paged by token (`GET /{version}/batches`, `GET /{version}/files`): a page token names the last
item of the page before."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from lowtide.emulator.gemini.errors import invalid_argument

__all__ = ["token_page"]

T = TypeVar("T")


def token_page(
    items: Sequence[T], name: Callable[[T], str], size: int, token: str | None
) -> tuple[list[T], str | None]:
    """The `size` items after the one `token` names (from the first without one), and the next page's token: the
    last item shown, when more follow. A token naming no item is the API's 400."""
    start = 0
    if token:
        names = [name(item) for item in items]
        if token not in names:
            raise invalid_argument(f"Invalid page token: {token[:60]}")
        start = names.index(token) + 1
    chosen = list(items[start : start + size])
    return chosen, name(chosen[-1]) if start + size < len(items) and chosen else None
