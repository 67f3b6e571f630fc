"""Helpers for decoded JSON: narrowing `object` to precise types for strict checking, and one canonical encoding."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, cast

import orjson
from typing_extensions import TypeIs

__all__ = ["JsonObject", "as_array", "as_object", "canonical", "compact", "is_int", "is_number", "surrogate_error"]

JsonObject = dict[str, Any]


def as_object(value: object) -> JsonObject | None:
    """`value` as a JSON object, or None when it is anything else."""
    return cast(JsonObject, value) if isinstance(value, dict) else None


def as_array(value: object) -> list[Any] | None:
    """`value` as a JSON array, or None when it is anything else."""
    return cast(list[Any], value) if isinstance(value, list) else None


def jsonl_objects(content: bytes) -> Iterator[tuple[int, JsonObject | None]]:
    """Each line of a JSONL file that is not blank, numbered from 1, as the JSON object it holds (None: it holds
    none, or is no JSON)."""
    for number, raw in enumerate(content.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            line = as_object(json.loads(raw))
        except ValueError:
            line = None
        yield number, line


def is_int(value: object) -> TypeIs[int]:
    # JSON has no booleans-as-integers, but Python's bool is an int subclass.
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> TypeIs[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def canonical(value: object) -> str:
    """A stable encoding (sorted keys), so equal requests hash equally whatever their key order."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def compact(value: object) -> str:
    """The wire encoding of response bodies and JSONL lines."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def surrogate_error(body: bytes) -> str | None:
    """What the APIs' strict JSON readers say of `body` when a string in it escapes an unpaired surrogate
    (`"\\ud800"`), which Python's `json` reads without a word: `no low surrogate in string: line 1 column 10 (char
    9)`. None when it escapes none."""
    if not _SURROGATE_ESCAPE.search(body):
        return None
    try:
        orjson.loads(body)
    except orjson.JSONDecodeError as error:
        return str(error) if "surrogate" in str(error) else None
    return None
