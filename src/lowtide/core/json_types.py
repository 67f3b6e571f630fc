"""JSON as lowtide reads it from the wire and the ledger: recursive aliases for JSON values, and helpers that narrow a
value read from decoded JSON (typed `object` until checked) to the object or list of objects a reader expects."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeAlias, cast

__all__ = ["JSONObject", "JSONValue", "json_count", "json_object", "json_objects"]

JSONValue: TypeAlias = "str | int | float | bool | list[JSONValue] | dict[str, JSONValue] | None"
"""Any value `json.loads` gives."""

JSONObject: TypeAlias = "dict[str, JSONValue]"
"""A JSON object, as `json.loads` gives it."""


def json_object(value: object) -> Mapping[str, object]:
    """`value` when it is a JSON object (a dict), else an empty one: absent and null read alike."""
    return cast("Mapping[str, object]", value) if isinstance(value, dict) else {}


def json_objects(value: object) -> list[Mapping[str, object]]:
    """The objects (dicts) of `value` when it is a list, in order, anything else in it skipped; else none."""
    items = cast("list[object]", value) if isinstance(value, list) else []
    return [cast("Mapping[str, object]", item) for item in items if isinstance(item, dict)]


def json_count(value: object, name: str = "a token count") -> int:
    """A count (tokens, say) as decoded JSON gives it: 0 when absent, null or empty; a number or a numeric string as
    an int; anything else (`true`, a list, an object) a `TypeError` naming `name`."""
    if not value:
        return 0
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise TypeError(f"{name} must be a number, not {value!r}")
    return int(value)
