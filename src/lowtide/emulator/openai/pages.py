"""Cursor pages of the OpenAI lists that page by an object's id (`after`, `limit` from 1 to 100, `order`): stored
chat completions and their messages, a stored response's input items. Each list is `{"object": "list", "data",
"first_id", "last_id", "has_more"}`."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lowtide.emulator.core.jsonutil import JsonObject
from lowtide.emulator.openai.errors import OpenAIError, invalid_value

__all__ = ["cursor_page", "list_limit", "list_order"]

_LIMIT_DEFAULT = 20
_LIMIT_MAX = 100


def list_limit(raw: str | None, *, default: int = _LIMIT_DEFAULT, maximum: int = _LIMIT_MAX) -> int:
    """`limit` of a list: `default` unless given, 1 to `maximum` (20 and 100 for most lists), refused as the API
    refuses it otherwise."""
    if raw is None:
        return default
    try:
        limit = int(raw)
    except ValueError:
        raise OpenAIError(
            400, f"Invalid type for 'limit': expected an integer, but got '{raw}'.", param="limit", code="invalid_type"
        ) from None
    if not 1 <= limit <= maximum:
        raise OpenAIError(
            400,
            f"Invalid 'limit': expected a value between 1 and {maximum}, but got {limit} instead.",
            param="limit",
            code="invalid_value",
        )
    return limit


def list_order(raw: str | None, default: str) -> bool:
    """Whether `order` (`asc` or `desc`, `default` unless given) lists newest first."""
    order = raw if raw is not None else default
    if order not in ("asc", "desc"):
        raise invalid_value("order", order, ("asc", "desc"))
    return order == "desc"


def cursor_page(
    items: Sequence[JsonObject],
    *,
    after: str | None,
    limit: str | None,
    order: str | None,
    default_order: str,
    missing_after: Callable[[str], OpenAIError],
) -> JsonObject:
    """One page of `items` (oldest first, each with its `id`), after the item `after` names in the order asked."""
    size = list_limit(limit)
    listed = list(reversed(items)) if list_order(order, default_order) else list(items)
    start = 0
    if after is not None:
        ids = [str(item["id"]) for item in listed]
        if after not in ids:
            raise missing_after(after)
        start = ids.index(after) + 1
    chosen = listed[start : start + size]
    return {
        "object": "list",
        "data": chosen,
        "first_id": chosen[0]["id"] if chosen else None,
        "last_id": chosen[-1]["id"] if chosen else None,
        "has_more": start + size < len(listed),
    }
