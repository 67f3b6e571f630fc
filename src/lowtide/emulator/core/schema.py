"""Instances of JSON schemas, for the structured outputs and tool inputs the emulated model writes: what pydantic
v2's `model_json_schema()` produces, and what the SDK's `transform_schema()` makes of it (bounds moved into
descriptions as `{minLength: 3}`). Deterministic for a given schema and seed."""

from __future__ import annotations

import ast
import hashlib
import math
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lowtide.emulator.core.jsonutil import JsonObject, as_array, as_object, is_number

__all__ = ["generate_instance"]

# Past this depth optional properties are left out, arrays shrink to their minimum and Optional picks null, so
# that recursive schemas (trees, linked lists) end.
_SOFT_DEPTH = 5
_HARD_DEPTH = 40

# Keywords that `transform_schema()` can move into a description; values are Python reprs.
_HINT_KEYS = (
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "uniqueItems",
    "prefixItems",
    "pattern",
    "format",
)
_HINT_KEY = re.compile(r"(?:^|, )(" + "|".join(_HINT_KEYS) + r"): ")
_PATTERN_CANDIDATES = ("a", "abc", "A", "ABC", "Abc", "1", "123", "a1", "abc123", "a-b", "a_b", "abc.def", "x" * 8)


def generate_instance(schema: Mapping[str, Any], *, seed: str = "", quotes: Sequence[str] = ()) -> Any:
    """A value valid against `schema`; `seed` flavours the strings so that different requests differ.

    With `quotes`, free-text strings (those without a format or pattern, and whose length bounds a quote fits) are
    the quotes, taken in turn: how the emulated model fills an answer from the documents it was given.
    """
    return _Generator(schema, seed, quotes).value(schema, "value", 0, 0)


class _Generator:
    def __init__(self, root: Mapping[str, Any], seed: str, quotes: Sequence[str] = ()) -> None:
        self._root = root
        self._seed = seed
        self._quotes = tuple(quotes)
        self._quoted = 0

    def value(self, schema: Mapping[str, Any], name: str, depth: int, variant: int) -> Any:
        if depth > _HARD_DEPTH:
            return None
        resolved = self._resolve(schema)
        if "const" in resolved:
            return resolved["const"]
        enum = as_array(resolved.get("enum"))
        if enum:
            return enum[variant % len(enum)]
        for key in ("anyOf", "oneOf"):
            options = as_array(resolved.get(key))
            if options:
                return self.value(self._choose(options, depth), name, depth, variant)
        kind = _kind(resolved, deep=depth >= _SOFT_DEPTH)
        if kind == "object":
            return self._object(resolved, name, depth, variant)
        if kind == "array":
            return self._array(resolved, name, depth, variant)
        if kind == "integer":
            return _integer(resolved, variant)
        if kind == "number":
            return _number(resolved, variant)
        if kind == "boolean":
            return variant % 2 == 0
        if kind == "null":
            return None
        return self._string(resolved, name, variant)

    def _resolve(self, schema: Mapping[str, Any]) -> JsonObject:
        current: JsonObject = dict(schema)
        for _ in range(_HARD_DEPTH):
            ref = current.pop("$ref", None)
            if not isinstance(ref, str):
                break
            # Keywords beside a `$ref` (a description, a default) refine the target rather than replace it.
            current = {**self._lookup(ref), **current}
        parts = as_array(current.pop("allOf", None))
        if parts:
            merged: JsonObject = {}
            for part in parts:
                merged = _merge(merged, self._resolve(as_object(part) or {}))
            current = _merge(merged, current)
        return _with_hints(current)

    def _lookup(self, ref: str) -> JsonObject:
        if not ref.startswith("#"):
            return {}
        node: object = self._root
        for segment in ref[1:].split("/"):
            if not segment:
                continue
            container = as_object(node)
            if container is None:
                return {}
            node = container.get(segment.replace("~1", "/").replace("~0", "~"))
        return as_object(node) or {}

    def _choose(self, options: list[Any], depth: int) -> JsonObject:
        resolved = [self._resolve(as_object(option) or {}) for option in options]
        nullable = [option for option in resolved if option.get("type") == "null"]
        others = [option for option in resolved if option.get("type") != "null"]
        if nullable and (depth >= _SOFT_DEPTH or not others):
            return nullable[0]
        return others[0]

    def _object(self, schema: JsonObject, name: str, depth: int, variant: int) -> JsonObject:
        properties = as_object(schema.get("properties")) or {}
        required = {str(key) for key in as_array(schema.get("required")) or []}
        shallow = depth < _SOFT_DEPTH
        result: JsonObject = {}
        for key, sub in properties.items():
            if key in required or shallow:
                result[key] = self.value(as_object(sub) or {}, key, depth + 1, variant)
        additional = schema.get("additionalProperties")
        extra_schema = as_object(additional)
        wanted = int(schema.get("minProperties") or 0)
        if extra_schema is not None and not properties and shallow:
            wanted = max(wanted, 1)
        if schema.get("maxProperties") is not None:
            wanted = min(wanted, int(schema["maxProperties"]))
        counter = 0
        while len(result) < wanted and additional is not False:
            counter += 1
            key = f"{name}_{counter}"
            if key not in result:
                result[key] = self.value(extra_schema or {"type": "string"}, key, depth + 1, variant)
        return result

    def _array(self, schema: JsonObject, name: str, depth: int, variant: int) -> list[Any]:
        prefix = as_array(schema.get("prefixItems")) or []
        items = schema.get("items")
        count = max(int(schema.get("minItems") or 0), len(prefix))
        if items is not False and depth < _SOFT_DEPTH:
            count = max(count, len(prefix) + 2 if prefix else 2)
        if schema.get("maxItems") is not None:
            count = min(count, int(schema["maxItems"]))
        values: list[Any] = []
        for index in range(count):
            sub = prefix[index] if index < len(prefix) else items
            # Distinct variants keep items apart, for `uniqueItems` and sets.
            values.append(self.value(as_object(sub) or {}, name, depth + 1, variant + index))
        return values

    def _string(self, schema: JsonObject, name: str, variant: int) -> str:
        quote = self._quote(schema)
        if quote is not None:
            return quote
        text = _formatted(schema.get("format"), variant, self._seed)
        if text is None:
            text = f"{name} {self._seed}".strip() + (f" {variant + 1}" if variant else "")
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            text = _matching(pattern, text, schema)
        return _fit_length(text, schema)

    def _quote(self, schema: JsonObject) -> str | None:
        if not self._quotes or "format" in schema or "pattern" in schema:
            return None
        shortest = schema.get("minLength")
        longest = schema.get("maxLength")
        for step in range(len(self._quotes)):
            candidate = self._quotes[(self._quoted + step) % len(self._quotes)]
            if isinstance(shortest, int) and len(candidate) < shortest:
                continue
            if isinstance(longest, int) and len(candidate) > longest:
                continue
            self._quoted += step + 1
            return candidate
        return None


def _kind(schema: JsonObject, *, deep: bool) -> str:
    declared = schema.get("type")
    if isinstance(declared, str):
        return declared
    kinds = [str(kind) for kind in as_array(declared) or []]
    if kinds:
        others = [kind for kind in kinds if kind != "null"]
        return "null" if (deep and "null" in kinds) or not others else others[0]
    # No `type`: infer it from the keywords present; a bare `{}` accepts anything, a string included.
    if "properties" in schema or "additionalProperties" in schema:
        return "object"
    if "items" in schema or "prefixItems" in schema:
        return "array"
    if any(key in schema for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")):
        return "number"
    return "string"


def _merge(base: JsonObject, extra: JsonObject) -> JsonObject:
    merged = {**base, **extra}
    base_properties = as_object(base.get("properties"))
    extra_properties = as_object(extra.get("properties"))
    if base_properties is not None and extra_properties is not None:
        merged["properties"] = {**base_properties, **extra_properties}
    if "required" in base and "required" in extra:
        merged["required"] = list(dict.fromkeys([*(base["required"] or []), *(extra["required"] or [])]))
    return merged


def _with_hints(schema: JsonObject) -> JsonObject:
    """Keywords that `transform_schema()` moved into the description as `{key: value, ...}`, put back."""
    description = schema.get("description")
    if not isinstance(description, str) or not description.endswith("}"):
        return schema
    opening = description.rfind("\n\n{")
    if opening >= 0:
        body = description[opening + 3 : -1]
    elif description.startswith("{"):
        body = description[1:-1]
    else:
        return schema
    found = list(_HINT_KEY.finditer(body))
    if not found or found[0].start() != 0:
        return schema
    hints: JsonObject = {}
    for index, match in enumerate(found):
        end = found[index + 1].start() if index + 1 < len(found) else len(body)
        if match.group(1) not in schema:
            hints[match.group(1)] = _hint_value(body[match.end() : end])
    return {**schema, **hints}


def _hint_value(raw: str) -> object:
    try:
        return ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        # A bare string, such as a pattern or a format name.
        return raw


def _integer(schema: JsonObject, variant: int) -> int:
    low = _bound(schema, "minimum", "exclusiveMinimum", math.ceil, 1)
    high = _bound(schema, "maximum", "exclusiveMaximum", math.floor, -1)
    value = 1 + variant
    if low is not None and value < low:
        value = low + variant
    if high is not None and value > high:
        value = max(high - variant, low if low is not None else high - variant)
    step = schema.get("multipleOf")
    if is_number(step) and step > 0:
        value = math.ceil(value / step) * step
        if high is not None and value > high:
            value -= step
        value = int(value)
    return value


def _bound(
    schema: JsonObject, inclusive: str, exclusive: str, rounding: Callable[[float], int], direction: int
) -> int | None:
    bounds: list[int] = []
    if is_number(schema.get(inclusive)):
        bounds.append(rounding(schema[inclusive]))
    if is_number(schema.get(exclusive)):
        edge = schema[exclusive]
        rounded = rounding(edge)
        bounds.append(rounded + direction if rounded == edge else rounded)
    if not bounds:
        return None
    return max(bounds) if direction > 0 else min(bounds)


def _number(schema: JsonObject, variant: int) -> float:
    lows = [schema[key] for key in ("minimum", "exclusiveMinimum") if is_number(schema.get(key))]
    highs = [schema[key] for key in ("maximum", "exclusiveMaximum") if is_number(schema.get(key))]
    low = max(lows) if lows else None
    high = min(highs) if highs else None
    if low is not None and high is not None:
        # Strictly between the bounds, so exclusive ones hold too; a different point for each variant.
        value = low + (high - low) * (variant + 1) / (variant + 2) if high > low else float(low)
    elif low is not None:
        value = float(low) + 1 + variant
    elif high is not None:
        value = float(high) - 1 - variant
    else:
        value = 1.5 + variant
    step = schema.get("multipleOf")
    if is_number(step) and step > 0:
        value = math.ceil(value / step) * step
    return float(value)


def _formatted(fmt: object, variant: int, seed: str) -> str | None:
    number = int.from_bytes(hashlib.sha256(seed.encode()).digest()[:16], "big") + variant
    samples: dict[str, str] = {
        "date": f"2024-01-{15 + variant % 10:02d}",
        "date-time": f"2024-01-15T12:{variant % 60:02d}:00Z",
        "time": f"12:{variant % 60:02d}:00",
        "duration": f"PT{1 + variant}H",
        "email": f"user{variant + 1}@example.com",
        "idn-email": f"user{variant + 1}@example.com",
        "uri": f"https://example.com/item/{variant + 1}",
        "iri": f"https://example.com/item/{variant + 1}",
        "uri-reference": f"/item/{variant + 1}",
        "hostname": f"host{variant + 1}.example.com",
        "ipv4": f"192.0.2.{1 + variant % 254}",
        "ipv6": f"2001:db8::{1 + variant % 9999:x}",
        "uuid": _uuid(number, 4),
    }
    if isinstance(fmt, str) and fmt.startswith("uuid") and fmt[4:].isdigit():
        # pydantic's UUID1..UUID8 types check the version digit.
        return _uuid(number, int(fmt[4:]) % 16)
    return samples.get(fmt) if isinstance(fmt, str) else None


def _uuid(number: int, version: int) -> str:
    # RFC 9562 variant bits, then the version nibble; `uuid.UUID(version=...)` only knows versions 1 to 5.
    value = (number & ~(0xC000 << 48)) | (0x8000 << 48)
    value = (value & ~(0xF000 << 64)) | (version << 76)
    return str(uuid.UUID(int=value))


def _matching(pattern: str, text: str, schema: JsonObject) -> str:
    try:
        compiled = re.compile(pattern)
    except re.error:
        return text
    for candidate in (text, *_PATTERN_CANDIDATES):
        fitted = _fit_length(candidate, schema)
        if compiled.search(fitted):
            return fitted
    return text


def _fit_length(text: str, schema: JsonObject) -> str:
    shortest = schema.get("minLength")
    longest = schema.get("maxLength")
    if isinstance(shortest, int) and len(text) < shortest:
        text = text + "x" * (shortest - len(text))
    if isinstance(longest, int) and len(text) > longest:
        text = text[:longest]
    return text
