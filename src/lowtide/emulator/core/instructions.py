"""The JSON schema a request asks its answer to follow in words, rather than through `output_config.format`.

Two ways are understood, in the system prompt and then in the last user turn: a schema between `<json_schema>` and
`</json_schema>` tags (how lowtide asks when citations rule structured outputs out), and an instruction to answer
in JSON that gives the schema in a fenced code block, or inline after the word "schema" ("Answer in JSON matching
this schema: {...}"). An object counts as a schema when it has a schema's keywords (`type`, `properties`, ...), so
an example answer or a stray brace is not taken for one; without the word JSON, no instruction is read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from lowtide.emulator.core.content import last_user_text
from lowtide.emulator.core.jsonutil import JsonObject, as_array, as_object

__all__ = ["instructed_schema"]

_SCHEMA_TAGS = re.compile(r"<json_schema>(.*?)</json_schema>", re.S)
_FENCE = re.compile(r"```[ \t]*(?:json)?[ \t]*\n(.*?)```", re.S | re.I)
_JSON_WORD = re.compile(r"\bjson\b", re.I)
_SCHEMA_WORD = re.compile(r"\bschema\b", re.I)
_SCHEMA_KEYWORDS = ("type", "properties", "$ref", "anyOf", "oneOf", "allOf", "enum", "const")


def instructed_schema(params: Mapping[str, Any]) -> JsonObject | None:
    """The schema the system prompt, or else the last user turn, asks the answer to follow; None if neither does."""
    for text in (_system_text(params), last_user_text(params)):
        tagged = _SCHEMA_TAGS.search(text)
        if tagged is not None:
            return _object(tagged.group(1))
        if _JSON_WORD.search(text):
            schema = next((found for found in _candidates(text) if _is_schema(found)), None)
            if schema is not None:
                return schema
    return None


def _system_text(params: Mapping[str, Any]) -> str:
    system = params.get("system")
    if isinstance(system, str):
        return system
    blocks = (as_object(item) or {} for item in as_array(system) or [])
    return "\n".join(str(block.get("text", "")) for block in blocks)


def _object(text: str) -> JsonObject | None:
    try:
        return as_object(json.loads(text))
    except json.JSONDecodeError:
        return None


def _candidates(text: str) -> Iterator[JsonObject]:
    """The JSON objects of `text` that may be a schema: fenced code blocks, then the first object after each
    mention of a schema."""
    for fenced in _FENCE.finditer(text):
        found = _object(fenced.group(1))
        if found is not None:
            yield found
    decoder = json.JSONDecoder()
    for mention in _SCHEMA_WORD.finditer(text):
        start = text.find("{", mention.end())
        if start < 0:
            return
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        # Decoded from a "{", the value is an object.
        yield as_object(value) or {}


def _is_schema(value: JsonObject) -> bool:
    return any(keyword in value for keyword in _SCHEMA_KEYWORDS)
