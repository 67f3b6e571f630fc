"""The images and documents of a Messages request: the checks the API makes on them, the passages the emulated model
can quote and cite, and what they cost in input tokens.

- Images: base64 (`image/jpeg|png|gif|webp`, at most 5 MB of base64, at most 8000 pixels a side, bytes that are
  the declared kind of image) or a URL. Tokens: see `lowtide.emulator.core.media`.
- Documents: a base64 PDF, plain text (`text/plain`), custom content (a string or text and image blocks), or a
  URL. `citations: {"enabled": true}` is allowed on documents only, on all of a request's documents or none, and
  never together with structured outputs (`output_config.format`): the API refuses that pair with a 400.
- Passages: the citable pieces, as the API chunks them: sentences of plain text (`char_location`, 0-based
  character indexes, end exclusive), sentences of each PDF page (`page_location`, 1-based pages, end exclusive),
  and whole blocks of custom content (`content_block_location`, 0-based, end exclusive).
- Tokens: plain text at four characters a token; a PDF page `PDF_PAGE_TOKENS` (the page seen as an image) plus its
  text; a document's title and context as text.

The emulator is offline: it never fetches a URL. A URL image or document is accepted (when the URL is http or
https) and counted at a fixed size (`UNKNOWN_IMAGE_TOKENS`, one PDF page), but the emulated model cannot read it,
so it quotes and cites nothing from it. File sources (`file_id`) are checked for shape here, and resolved from the
uploaded files by `lowtide.emulator.anthropic.file_sources` before anything reads them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from lowtide.emulator.core.errors import ApiError, invalid_request
from lowtide.emulator.core.jsonutil import JsonObject, as_array, as_object
from lowtide.emulator.core.media import (
    IMAGE_MEDIA_TYPES,
    MAX_IMAGE_BASE64_BYTES,
    MAX_IMAGE_DIMENSION,
    UNKNOWN_IMAGE_TOKENS,
    decode_base64,
    image_info,
    image_tokens,
)
from lowtide.emulator.core.pdf import is_pdf, read_pdf

__all__ = [
    "PDF_PAGE_TOKENS",
    "Document",
    "Passage",
    "check_citations",
    "check_document_block",
    "check_image_block",
    "documents_of",
    "media_tokens",
    "sentence_spans",
]

PDF_PAGE_TOKENS = 1500

_IMAGE_KEYS = frozenset({"type", "source", "cache_control", "transformations"})
_DOCUMENT_KEYS = frozenset({"type", "source", "cache_control", "citations", "context", "title"})
_SENTENCE_END = re.compile(r"[.!?]+[\"'”’)\]]*(?=\s|$)|\n[ \t]*\n")


@dataclass(frozen=True)
class Passage:
    """A citable piece of a document: its text as the model quotes it (whitespace collapsed) and its citation."""

    text: str
    citation: JsonObject


@dataclass(frozen=True)
class Document:
    """A document of the request: its position among the request's documents, title, and passages."""

    index: int
    title: str | None
    cited: bool
    passages: tuple[Passage, ...]


# -- checks ----------------------------------------------------------------------------------------------------------


def check_image_block(block: JsonObject, where: str) -> None:
    source = _source(block, f"{where}.image", _IMAGE_KEYS)
    kind = source.get("type")
    if kind == "base64":
        _check_image_base64(source, f"{where}.image.source.base64")
    elif kind == "url":
        _check_url(source, f"{where}.image.source.url")
    elif kind == "file":
        _check_file_source(source, f"{where}.image.source.file")
    else:
        raise _bad_tag(f"{where}.image.source", kind, ("base64", "url", "file"))


def check_document_block(block: JsonObject, where: str) -> None:
    source = _source(block, f"{where}.document", _DOCUMENT_KEYS)
    kind = source.get("type")
    if kind == "base64":
        _check_pdf(source, where)
    elif kind == "text":
        if source.get("media_type") != "text/plain":
            raise invalid_request(f"{where}.document.source.text.media_type: Input should be 'text/plain'")
        if not isinstance(source.get("data"), str):
            raise invalid_request(f"{where}.document.source.text.data: Input should be a valid string")
    elif kind == "content":
        _check_custom_content(source.get("content"), f"{where}.document.source.content.content")
    elif kind == "url":
        _check_url(source, f"{where}.document.source.url")
    elif kind == "file":
        _check_file_source(source, f"{where}.document.source.file")
    else:
        raise _bad_tag(f"{where}.document.source", kind, ("base64", "text", "content", "url", "file"))
    for key in ("title", "context"):
        if block.get(key) is not None and not isinstance(block[key], str):
            raise invalid_request(f"{where}.document.{key}: Input should be a valid string")
    citations = block.get("citations")
    if citations is not None:
        config = as_object(citations)
        if config is None:
            raise invalid_request(f"{where}.document.citations: Input should be a valid dictionary")
        for key in config:
            if key != "enabled":
                raise invalid_request(f"{where}.document.citations.{key}: Extra inputs are not permitted")
        if config.get("enabled") is not None and not isinstance(config["enabled"], bool):
            raise invalid_request(f"{where}.document.citations.enabled: Input should be a valid boolean")


def check_citations(body: Mapping[str, Any]) -> None:
    """The request-wide rules: citations on all documents or none, and never with structured outputs."""
    found = list(_document_blocks(body))
    cited = [where for where, block in found if _cites(block)]
    if not cited:
        return
    uncited = [where for where, block in found if not _cites(block)]
    if uncited:
        raise invalid_request(
            f"Citations must be enabled on all or none of the documents in a request: {cited[0]} enables them "
            f"but {uncited[0]} does not."
        )
    if (as_object(body.get("output_config")) or {}).get("format") is not None:
        raise invalid_request(
            f"Citations are not supported with structured outputs: {cited[0]} enables citations and "
            "output_config.format asks for a JSON schema. Turn citations off, or leave out output_config.format "
            "and ask for the JSON in the prompt."
        )


def _source(block: JsonObject, where: str, keys: Collection[str]) -> JsonObject:
    """The block's `source` object, once the block holds no key but `keys` (an image's, a document's)."""
    for key in block:
        if key not in keys:
            raise invalid_request(f"{where}.{key}: Extra inputs are not permitted")
    if "source" not in block:
        raise invalid_request(f"{where}.source: Field required")
    source = as_object(block["source"])
    if source is None:
        raise invalid_request(f"{where}.source: Input should be a valid dictionary")
    return source


def _bad_tag(where: str, kind: object, expected: tuple[str, ...]) -> ApiError:
    tags = ", ".join(f"'{tag}'" for tag in expected)
    return invalid_request(
        f"{where}: Input tag '{kind}' found using 'type' does not match any of the expected tags: {tags}"
    )


def _check_file_source(source: JsonObject, where: str) -> None:
    """The shape of a file source; `lowtide.emulator.anthropic.file_sources` resolves it from the uploaded files."""
    for key in source:
        if key not in ("type", "file_id"):
            raise invalid_request(f"{where}.{key}: Extra inputs are not permitted")
    if not isinstance(source.get("file_id"), str):
        raise invalid_request(f"{where}.file_id: Input should be a valid string")


def _check_url(source: JsonObject, where: str) -> None:
    url = source.get("url")
    if not isinstance(url, str):
        raise invalid_request(f"{where}.url: Input should be a valid string")
    if not url.startswith(("https://", "http://")):
        raise invalid_request(f"{where}.url: Input should be a valid URL with an http or https scheme")


def _check_image_base64(source: JsonObject, where: str) -> None:
    declared = source.get("media_type")
    if declared not in IMAGE_MEDIA_TYPES:
        raise invalid_request(
            f"{where}.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"
        )
    data = source.get("data")
    if not isinstance(data, str):
        raise invalid_request(f"{where}.data: Input should be a valid string")
    if len(data) > MAX_IMAGE_BASE64_BYTES:
        raise invalid_request(
            f"{where}: image exceeds 5 MB maximum: {len(data)} bytes > {MAX_IMAGE_BASE64_BYTES} bytes"
        )
    raw = decode_base64(data)
    if raw is None:
        raise invalid_request(f"{where}.data: The image data is not valid base64.")
    info = image_info(raw)
    if info.media_type is None:
        raise invalid_request(f"{where}.data: Image does not match the provided media type {declared}")
    if info.media_type != declared:
        raise invalid_request(
            f"{where}: The image was specified using the {declared} media type, but the image appears to be a "
            f"{info.media_type} image"
        )
    if info.size is not None and max(info.size) > MAX_IMAGE_DIMENSION:
        raise invalid_request(
            f"{where}.data: At least one of the image dimensions exceed max allowed size: {MAX_IMAGE_DIMENSION} pixels"
        )


def _check_pdf(source: JsonObject, where: str) -> None:
    if source.get("media_type") != "application/pdf":
        raise invalid_request(f"{where}.document.source.base64.media_type: Input should be 'application/pdf'")
    data = source.get("data")
    if not isinstance(data, str):
        raise invalid_request(f"{where}.document.source.base64.data: Input should be a valid string")
    raw = decode_base64(data)
    if raw is None or not is_pdf(raw):
        raise invalid_request(f"{where}.pdf.source.base64.data: The PDF specified was not valid.")


def _check_custom_content(value: object, where: str) -> None:
    if isinstance(value, str):
        if not value:
            raise invalid_request(f"{where}: custom content must be non-empty")
        return
    items = as_array(value)
    if items is None:
        raise invalid_request(f"{where}: Input should be a valid string or a valid list")
    if not items:
        raise invalid_request(f"{where}: custom content must hold at least one block")
    for index, item in enumerate(items):
        inner = f"{where}.{index}"
        block = as_object(item)
        kind = block.get("type") if block is not None else None
        if block is None or kind not in ("text", "image"):
            raise invalid_request(f"{inner}: custom content blocks must be text or image blocks")
        if kind == "image":
            check_image_block(block, inner)
        elif not isinstance(block.get("text"), str) or not block["text"]:
            raise invalid_request(f"{inner}.text: text content blocks must be non-empty strings")


# -- reading ---------------------------------------------------------------------------------------------------------


def _document_blocks(params: Mapping[str, Any]) -> Iterator[tuple[str, JsonObject]]:
    """Every document block of the request, in prompt order, with where it is (tool results included)."""
    for index, item in enumerate(as_array(params.get("messages")) or []):
        message = as_object(item) or {}
        for position, entry in enumerate(as_array(message.get("content")) or []):
            block = as_object(entry) or {}
            where = f"messages.{index}.content.{position}"
            if block.get("type") == "document":
                yield where, block
            elif block.get("type") == "tool_result":
                for inner, nested in enumerate(as_array(block.get("content")) or []):
                    nested_block = as_object(nested) or {}
                    if nested_block.get("type") == "document":
                        yield f"{where}.tool_result.content.{inner}", nested_block


def _cites(block: Mapping[str, Any]) -> bool:
    return (as_object(block.get("citations")) or {}).get("enabled") is True


def documents_of(params: Mapping[str, Any]) -> list[Document]:
    """The request's documents, numbered as citations number them (`document_index`, in prompt order)."""
    found: list[Document] = []
    for index, (_, block) in enumerate(_document_blocks(params)):
        title = block.get("title") if isinstance(block.get("title"), str) else None
        found.append(Document(index, title, _cites(block), tuple(_passages(block, index, title))))
    return found


def _passages(block: Mapping[str, Any], index: int, title: str | None) -> Iterator[Passage]:
    source = as_object(block.get("source")) or {}
    kind = source.get("type")
    common: JsonObject = {"document_index": index, "document_title": title}
    if isinstance(source.get("file_id"), str):
        # A document read from an uploaded file: its citations name the file, as the API's do.
        common["file_id"] = source["file_id"]
    if kind == "text" and isinstance(source.get("data"), str):
        text: str = source["data"]
        for start, end in sentence_spans(text):
            cited = text[start:end]
            location = {"start_char_index": start, "end_char_index": end}
            yield _passage(cited, {"type": "char_location", "cited_text": cited, **common, **location})
    elif kind == "base64" and isinstance(source.get("data"), str):
        for number, page in enumerate(_pdf_pages(source["data"]), start=1):
            for start, end in sentence_spans(page):
                cited = page[start:end]
                location = {"start_page_number": number, "end_page_number": number + 1}
                yield _passage(cited, {"type": "page_location", "cited_text": cited, **common, **location})
    elif kind == "content":
        for position, block_text in enumerate(_content_texts(source.get("content"))):
            if block_text is not None and block_text.strip():
                location = {"start_block_index": position, "end_block_index": position + 1}
                citation = {"type": "content_block_location", "cited_text": block_text, **common, **location}
                yield _passage(block_text, citation)


def _passage(cited: str, citation: JsonObject) -> Passage:
    return Passage(" ".join(cited.split()), citation)


def _content_texts(content: object) -> list[str | None]:
    """The text of each block of custom content (None for an image); a plain string is one block."""
    if isinstance(content, str):
        return [content]
    texts: list[str | None] = []
    for item in as_array(content) or []:
        block = as_object(item) or {}
        texts.append(block["text"] if block.get("type") == "text" and isinstance(block.get("text"), str) else None)
    return texts


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """`(start, end)` of each sentence of `text`, trailing whitespace included, as the API chunks plain text."""
    spans: list[tuple[int, int]] = []
    position = _past_space(text, 0)
    while position < len(text):
        match = _SENTENCE_END.search(text, position)
        end = _past_space(text, match.end() if match is not None else len(text))
        spans.append((position, end))
        position = end
    return spans


def _past_space(text: str, position: int) -> int:
    while position < len(text) and text[position].isspace():
        position += 1
    return position


@lru_cache(maxsize=8)
def _pdf_pages(data: str) -> tuple[str, ...]:
    """The text of each page of a (validated) base64 PDF, empty where unreadable.

    Cached, as token counting and the answer both read the same documents of one request.
    """
    raw = decode_base64(data) or b""
    pages = read_pdf(raw).pages
    # A PDF whose page tree cannot be followed still has pages: count them, without text.
    return pages or ("",) * max(1, raw.count(b"/Type /Page") - raw.count(b"/Type /Pages"))


# -- tokens ----------------------------------------------------------------------------------------------------------


def media_tokens(block: Mapping[str, Any]) -> int | None:
    """What an image or document block costs in input tokens; None for other blocks."""
    kind = block.get("type")
    if kind == "image":
        return _image_tokens(as_object(block.get("source")) or {})
    if kind != "document":
        return None
    extras = sum(len(block[key]) for key in ("title", "context") if isinstance(block.get(key), str))
    return _tokens(extras) + _document_tokens(as_object(block.get("source")) or {})


def _tokens(chars: int) -> int:
    return math.ceil(chars / 4)


def _image_tokens(source: JsonObject) -> int:
    data = source.get("data")
    raw = decode_base64(data) if source.get("type") == "base64" and isinstance(data, str) else None
    return image_tokens(image_info(raw).size) if raw is not None else UNKNOWN_IMAGE_TOKENS


def _document_tokens(source: JsonObject) -> int:
    kind = source.get("type")
    if kind == "text" and isinstance(source.get("data"), str):
        return _tokens(len(source["data"]))
    if kind == "base64" and isinstance(source.get("data"), str):
        pages = _pdf_pages(source["data"])
        return sum(PDF_PAGE_TOKENS + _tokens(len(page)) for page in pages)
    if kind == "content":
        content = source.get("content")
        if isinstance(content, str):
            return _tokens(len(content))
        total = 0
        for item in as_array(content) or []:
            block = as_object(item) or {}
            text = block.get("text")
            image = as_object(block.get("source")) or {}
            total += _tokens(len(text)) if isinstance(text, str) else _image_tokens(image)
        return total
    return PDF_PAGE_TOKENS  # a URL: one page, unread
