"""Citations of an answer, and which of them back which field of a structured answer.

The API returns citations on the text blocks of an answer. When the answer is JSON (a `response_model` asked for
with citation-enabled documents), a field is backed by the citations of the blocks its value's text overlaps, kept
only when the cited text supports the value: the value (or, for a list or object, one of its scalar leaves)
appears in the cited text, compared case-insensitively with whitespace collapsed. A field nothing supports gets
no entry, so an answer's unsupported claims stand out.
"""

from __future__ import annotations

import json
from typing import Any, cast

from pydantic import BaseModel, ConfigDict

from lowtide.messages.structured import json_text
from lowtide.types import ActorResponse, TextContent

__all__ = ["Citation", "citations_json", "citations_of", "field_citations"]


class Citation(BaseModel):
    """One citation as the API returns it: `char_location` (plain text, 0-based characters, end exclusive),
    `page_location` (PDF, 1-based pages, end exclusive) or `content_block_location` (custom content, 0-based
    blocks, end exclusive). Keys of newer citation types are kept as they came."""

    model_config = ConfigDict(extra="allow", frozen=True)

    type: str
    cited_text: str = ""
    document_index: int | None = None
    document_title: str | None = None
    start_char_index: int | None = None
    end_char_index: int | None = None
    start_page_number: int | None = None
    end_page_number: int | None = None
    start_block_index: int | None = None
    end_block_index: int | None = None


def citations_of(response: ActorResponse[object]) -> list[Citation]:
    """Every citation of the answer, in the order of its text."""
    return [citation for _, _, citations in _cited_spans(response) for citation in citations]


def field_citations(response: ActorResponse[object], parsed: BaseModel) -> dict[str, list[Citation]]:
    """For each top-level field of `parsed` (the answer's JSON, validated), the citations that support its value.

    Fields are named as the model names them (not by alias); a field without support has no entry.
    """
    spans = _value_spans(response.text)
    if spans is None:
        return {}
    by_key = {info.alias or name: name for name, info in type(parsed).model_fields.items()}
    values = parsed.model_dump(mode="json")
    cited = _cited_spans(response)
    found: dict[str, list[Citation]] = {}
    for key, (start, end) in spans.items():
        name = by_key.get(key, key)
        if name not in values:
            continue
        leaves = [_normal(leaf) for leaf in _leaves(values[name])]
        supported: list[Citation] = []
        for block_start, block_end, citations in cited:
            if block_start >= end or block_end <= start:
                continue
            for citation in citations:
                text = _normal(citation.cited_text)
                if citation not in supported and any(leaf and leaf in text for leaf in leaves):
                    supported.append(citation)
        if supported:
            found[name] = supported
    return found


def _cited_spans(response: ActorResponse[object]) -> list[tuple[int, int, list[Citation]]]:
    """`(start, end, citations)` of each cited text block, as offsets into `response.text` (the blocks' texts
    joined)."""
    spans: list[tuple[int, int, list[Citation]]] = []
    offset = 0
    for block in response.content:
        if not isinstance(block, TextContent):
            continue
        end = offset + len(block.text)
        if block.citations:
            spans.append((offset, end, [Citation.model_validate(item) for item in block.citations]))
        offset = end
    return spans


def _value_spans(text: str) -> dict[str, tuple[int, int]] | None:
    """Where the value of each key of the answer's top-level JSON object is in `text`; None if it is not one."""
    payload = json_text(text)
    index = text.find(payload) if payload else -1
    decoder = json.JSONDecoder()
    index = _skip_space(text, index) if index >= 0 else -1
    if index < 0 or text[index : index + 1] != "{":
        return None
    spans: dict[str, tuple[int, int]] = {}
    index = _skip_space(text, index + 1)
    try:
        while text[index : index + 1] == '"':
            key, index = decoder.raw_decode(text, index)
            index = _skip_space(text, index)
            if text[index : index + 1] != ":":
                return None
            start = _skip_space(text, index + 1)
            _, index = decoder.raw_decode(text, start)
            spans[str(key)] = (start, index)
            index = _skip_space(text, index)
            if text[index : index + 1] != ",":
                break
            index = _skip_space(text, index + 1)
    except json.JSONDecodeError:
        return None
    return spans


def _skip_space(text: str, index: int) -> int:
    while index < len(text) and text[index] in " \t\r\n":
        index += 1
    return index


def _leaves(value: object) -> list[str]:
    """The scalar leaves of a JSON value as text: strings as they are, numbers and booleans as JSON writes them."""
    if isinstance(value, dict):
        items = list(cast("dict[str, object]", value).values())
    elif isinstance(value, list):
        items = cast("list[object]", value)
    else:
        return [] if value is None else [value if isinstance(value, str) else json.dumps(value)]
    return [leaf for item in items for leaf in _leaves(item)]


def _normal(text: str) -> str:
    return " ".join(text.split()).casefold()


def citations_json(
    response: ActorResponse[object],
) -> tuple[list[dict[str, Any]] | None, dict[str, list[dict[str, Any]]] | None]:
    """An answer's citations as a run's results hold them: all of them, and those of each field of a parsed answer."""
    found = citations_of(response)
    if not found:
        return None, None
    listed = [c.model_dump(exclude_none=True) for c in found]
    parsed = response.parsed
    if not isinstance(parsed, BaseModel):
        return listed, None
    mapped = field_citations(response, parsed)
    return listed, {name: [c.model_dump(exclude_none=True) for c in cs] for name, cs in mapped.items()} or None
