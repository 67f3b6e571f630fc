"""The emulated model as a cooperative one: which offered tool a prompt asks for by name, and the arguments a tool
call takes from the prompt where its schema allows (numbers, quoted strings, names), the rest left to the schema's
generated instance. Deterministic: a pure function of the prompt and the tools, so the same request gets the same call.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from lowtide.emulator.core.jsonutil import JsonObject, as_array, as_object

__all__ = ["asked_tool", "prompt_arguments"]

# Words a tool's name may start with that say what it does, not what it is about (`get_weather` is asked for by
# "weather").
_VERBS = frozenset(
    {
        *("get", "fetch", "find", "look", "lookup", "search", "list", "create", "make", "add", "set", "update"),
        *("delete", "remove", "run", "call", "compute", "calculate", "check", "send", "read", "write", "show", "tell"),
    }
)
_NAME_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_WORD = re.compile(r"\w+")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")
_QUOTED = re.compile(r"\"([^\"\n]+)\"|“([^”\n]+)”|(?<!\w)'([^'\n]+)'(?!\w)|‘([^’\n]+)’|「([^」\n]+)」")
_NAME = re.compile(r"[A-Z][\w'-]*(?:,? [A-Z][\w'-]*)*")
_MARKER = re.compile(r"\[\[emulator:[^\]]*\]\]")


def asked_tool(tools: Sequence[JsonObject], text: str) -> JsonObject | None:
    """The first of `tools` that `text` asks for: its name written out as words of their own (any case, `_` and `-`
    as spaces too), or every word of its name but a leading verb among the text's words (a plural too)."""
    lowered = text.lower()
    words = set(_WORD.findall(lowered))
    for tool in tools:
        name = str(tool.get("name", ""))
        parts = [part.lower() for part in _NAME_PART.findall(name)]
        if name and (_written(name.lower(), lowered) or (parts and _written(" ".join(parts), lowered))):
            return tool
        subject = parts[1:] if parts and parts[0] in _VERBS else parts
        if subject and all(part in words or f"{part}s" in words for part in subject):
            return tool
    return None


def _written(name: str, text: str) -> bool:
    """Whether `name` is written in `text` as words of its own (`t` is not written in "the tide")."""
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None


def prompt_arguments(schema: Mapping[str, Any], generated: object, text: str) -> object:
    """`generated` (an instance of `schema`) with each top-level property the prompt gives replaced by it: a number
    within the property's bounds, an enum value the text names, else for a free-text string the next quoted string,
    else the next name (a run of capitalised words not opening a sentence). Values are used in the order they come."""
    instance = as_object(generated)
    properties = as_object(schema.get("properties"))
    if instance is None or properties is None:
        return generated
    text = _MARKER.sub(" ", text)
    numbers = [match.group() for match in _NUMBER.finditer(text)]
    quoted = [next(group for group in match.groups() if group) for match in _QUOTED.finditer(text)]
    names = _names(_QUOTED.sub(" ", text))
    result = dict(instance)
    for key in instance:
        prop = as_object(properties.get(key))
        if prop is None:
            continue
        kinds = _types(prop)
        value: object = None
        if "integer" in kinds or "number" in kinds:
            value = _take_number(numbers, prop, integer="number" not in kinds)
        elif "string" in kinds and isinstance(prop.get("enum"), list):
            value = next((v for v in prop["enum"] if isinstance(v, str) and v.lower() in text.lower()), None)
        elif "string" in kinds and "format" not in prop and "pattern" not in prop:
            value = _take_string(quoted, prop) or _take_string(names, prop)
        if value is not None:
            result[key] = value
    return result


def _types(prop: Mapping[str, Any]) -> set[str]:
    kind = prop.get("type")
    if isinstance(kind, str):
        return {kind}
    items = as_array(kind) or []
    return {item for item in items if isinstance(item, str)}


def _take_number(numbers: list[str], prop: Mapping[str, Any], *, integer: bool) -> int | float | None:
    for position, written in enumerate(numbers):
        if integer and "." in written:
            continue
        value: int | float = int(written) if "." not in written else float(written)
        if _within(value, prop):
            del numbers[position]
            return value
    return None


def _within(value: float, prop: Mapping[str, Any]) -> bool:
    def bound(key: str) -> float | None:
        limit = prop.get(key)
        return float(limit) if isinstance(limit, int | float) and not isinstance(limit, bool) else None

    low, high = bound("minimum"), bound("maximum")
    above, below = bound("exclusiveMinimum"), bound("exclusiveMaximum")
    return (
        (low is None or value >= low)
        and (high is None or value <= high)
        and (above is None or value > above)
        and (below is None or value < below)
    )


def _take_string(candidates: list[str], prop: Mapping[str, Any]) -> str | None:
    low, high = prop.get("minLength", 0), prop.get("maxLength")
    for position, candidate in enumerate(candidates):
        if len(candidate) >= (low if isinstance(low, int) else 0) and (
            not isinstance(high, int) or len(candidate) <= high
        ):
            del candidates[position]
            return candidate
    return None


def _names(text: str) -> list[str]:
    """Runs of capitalised words (`San Francisco, CA`), the word opening a sentence left out."""
    names: list[str] = []
    for match in _NAME.finditer(text):
        run = match.group()
        before = text[: match.start()].rstrip()
        if not before or before[-1] in ".!?:\n":
            _, _, run = run.partition(" ")
            run = run.lstrip(", ")
        if run:
            names.append(run)
    return names
