"""A conversation's content blocks (lowtide's own, in the Messages shape `ChatMessage` holds) read into pieces any
provider's request encoder can write in its API's shape: text, images, files, tool calls and tool results. Pure; a
block the provider cannot carry (`ContentRules`) raises `ConfigurationError` naming it, before anything is sent."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, cast

from lowtide.core.json_types import json_object
from lowtide.errors import ConfigurationError

__all__ = [
    "ContentRules",
    "FilePart",
    "ImagePart",
    "Part",
    "Piece",
    "TextPart",
    "ToolCall",
    "ToolResult",
    "check_image_type",
    "check_image_types",
    "first_image",
    "pieces_of",
    "system_text",
]


@dataclass(frozen=True)
class ContentRules:
    """What one provider's API can carry of lowtide's content blocks."""

    provider: str
    """The provider's name as its users write it, in a refusal ("... cannot take 'x' blocks ...")."""
    skipped: frozenset[str] = frozenset()
    """Block types of an assistant turn the provider's models cannot read back (another provider's signed
    thinking, say): left out of the conversation rather than refused."""
    cites_documents: bool = False
    """Whether the API can cite documents; if not, a document asking for citations is refused."""
    image_types: frozenset[str] | None = None
    """The media types of the images the API reads inline (base64); another is refused naming it. None: not
    checked here (the provider checks them itself, or takes any)."""


@dataclass(frozen=True)
class TextPart:
    text: str


@dataclass(frozen=True)
class ImagePart:
    """An image by URL (http(s) or a base64 data URL) or by an uploaded file's id."""

    where: str
    """The block it came from, to name in an error when an endpoint cannot take it."""
    url: str | None = None
    file_id: str | None = None


@dataclass(frozen=True)
class FilePart:
    """A file (a PDF) inline as a base64 data URL, by URL, or by an uploaded file's id."""

    where: str
    """The block it came from, to name in an error when an endpoint cannot take it."""
    filename: str | None = None
    data_url: str | None = None
    url: str | None = None
    file_id: str | None = None


Part = TextPart | ImagePart | FilePart


@dataclass(frozen=True)
class ToolCall:
    call_id: str
    name: str
    arguments: str
    """The call's input as a JSON object."""


@dataclass(frozen=True)
class ToolResult:
    call_id: str
    parts: tuple[Part, ...]
    where: str


Piece = Part | ToolCall | ToolResult


def first_image(messages: Sequence[object]) -> str | None:
    """Where the first image of a conversation's messages is (`messages[i].content[j]`), or None: for a model that
    takes text only, refused naming it. (An image inside a tool result is the encoders' to refuse or carry.)"""
    for index, message in enumerate(messages):
        content: object = getattr(message, "content", None)
        if not isinstance(content, list):
            continue
        for number, block in enumerate(cast(list[object], content)):
            if isinstance(block, Mapping) and cast(Mapping[str, object], block).get("type") == "image":
                return f"messages[{index}].content[{number}]"
    return None


def check_image_types(messages: Sequence[Mapping[str, object]], rules: ContentRules) -> None:
    """Refuse an inline image (base64) of the messages, tool results' included, whose media type the provider does
    not read (`rules.image_types`): for a provider that sends the blocks as they are rather than through
    `pieces_of`."""
    if rules.image_types is None:
        return
    for index, message in enumerate(messages):
        blocks: object = message.get("content")
        if not isinstance(blocks, list):
            continue
        for number, block in enumerate(cast("list[object]", blocks)):
            if not isinstance(block, dict):
                continue
            entry = cast("dict[str, object]", block)
            where = f"messages[{index}].content[{number}]"
            inner: object = entry.get("content")
            items = (
                cast("list[object]", inner) if entry.get("type") == "tool_result" and isinstance(inner, list) else []
            )
            found = [(where, entry)] + [
                (f"{where}.content[{place}]", cast("dict[str, object]", item))
                for place, item in enumerate(items)
                if isinstance(item, dict)
            ]
            for place, image in found:
                source: object = image.get("source")
                if image.get("type") == "image" and isinstance(source, dict):
                    check_image_type(cast("dict[str, object]", source), place, rules)


def check_image_type(source: Mapping[str, object], where: str, rules: ContentRules) -> None:
    """Refuse a base64 image `source` of a media type the provider does not read (`rules.image_types`)."""
    types = rules.image_types
    media_type = source.get("media_type")
    if types is None or source.get("type") != "base64" or media_type in types:
        return
    field = f"{where}.source.media_type"
    raise ConfigurationError(
        f"{field}: {rules.provider} cannot take an image of type {media_type!r}; it reads {', '.join(sorted(types))}.",
        field=field,
    )


def system_text(system: str | Sequence[Mapping[str, object]], *, rules: ContentRules) -> str:
    """The system prompt as one text: its text blocks, a blank line between them."""
    if isinstance(system, str):
        return system
    texts: list[str] = []
    for index, block in enumerate(system):
        if block.get("type") != "text":
            raise _unsupported(rules, f"system[{index}].type", f"{block.get('type')!r} blocks in the system prompt")
        texts.append(_text(block, f"system[{index}]"))
    return "\n\n".join(texts)


def pieces_of(
    role: Literal["user", "assistant"], blocks: Sequence[Mapping[str, object]], index: int, *, rules: ContentRules
) -> list[Piece]:
    """The pieces of the content blocks of one message, in order; `messages[index]` names it in errors."""
    pieces: list[Piece] = []
    for number, block in enumerate(blocks):
        where = f"messages[{index}].content[{number}]"
        kind = block.get("type")
        if role == "assistant" and kind in rules.skipped:
            continue
        if kind == "text":
            pieces.append(TextPart(_text(block, where)))
        elif kind == "tool_use" and role == "assistant":
            pieces.append(_tool_call(block, where))
        elif kind == "tool_result" and role == "user":
            pieces.append(_tool_result(block, where, rules))
        elif kind in ("image", "document") and role == "user":
            pieces.extend(_media(block, where, rules))
        else:
            raise _unsupported(rules, f"{where}.type", f"{kind!r} blocks in {role} messages")
    return pieces


def _media(block: Mapping[str, object], where: str, rules: ContentRules) -> list[Part]:
    if block.get("type") == "image":
        return [_image(block, where, rules)]
    return _document(block, where, rules)


def _image(block: Mapping[str, object], where: str, rules: ContentRules) -> ImagePart:
    source = _source(block, where)
    kind = source.get("type")
    if kind == "base64":
        check_image_type(source, where, rules)
        return ImagePart(where, url=_data_url(source, where))
    if kind == "url":
        return ImagePart(where, url=_string(source, "url", f"{where}.source"))
    if kind == "file":
        return ImagePart(where, file_id=_string(source, "file_id", f"{where}.source"))
    raise _unsupported(rules, f"{where}.source.type", f"image sources of type {kind!r}")


def _document(block: Mapping[str, object], where: str, rules: ContentRules) -> list[Part]:
    cited = json_object(block.get("citations")).get("enabled") is True
    if cited and not rules.cites_documents:
        what = f"documents with citations enabled: {rules.provider} does not cite documents"
        raise _unsupported(rules, f"{where}.citations", what)
    source = _source(block, where)
    title = block.get("title")
    title = title if isinstance(title, str) and title else None
    context = block.get("context")
    parts: list[Part] = [TextPart(context)] if isinstance(context, str) and context else []
    kind = source.get("type")
    if kind == "text":
        text = _string(source, "data", f"{where}.source")
        parts.append(TextPart(f"{title}\n\n{text}" if title else text))
    elif kind == "base64":
        parts.append(FilePart(where, filename=_filename(title), data_url=_data_url(source, where)))
    elif kind == "url":
        parts.append(FilePart(where, url=_string(source, "url", f"{where}.source")))
    elif kind == "file":
        parts.append(FilePart(where, file_id=_string(source, "file_id", f"{where}.source")))
    else:
        raise _unsupported(rules, f"{where}.source.type", f"document sources of type {kind!r}")
    return parts


def _filename(title: str | None) -> str:
    """The document's title as a PDF's file name (an API may read a file's kind from its name), else a plain one."""
    if title is None:
        return "document.pdf"
    return title if title.lower().endswith(".pdf") else f"{title}.pdf"


def _tool_call(block: Mapping[str, object], where: str) -> ToolCall:
    arguments: object = block.get("input", {})
    if not isinstance(arguments, dict):
        raise ConfigurationError(f"{where}.input must be an object: a tool's input is a JSON object.", field=where)
    return ToolCall(
        call_id=_string(block, "id", where),
        name=_string(block, "name", where),
        arguments=json.dumps(arguments, ensure_ascii=False, separators=(",", ":")),
    )


def _tool_result(block: Mapping[str, object], where: str, rules: ContentRules) -> ToolResult:
    call_id = _string(block, "tool_use_id", where)
    content: object = block.get("content")
    if content is None:
        return ToolResult(call_id, (), where)
    if isinstance(content, str):
        return ToolResult(call_id, (TextPart(content),), where)
    if not isinstance(content, list):
        raise ConfigurationError(f"{where}.content must be text or a list of blocks.", field=f"{where}.content")
    parts: list[Part] = []
    for number, item in enumerate(cast("list[object]", content)):
        inner = f"{where}.content[{number}]"
        if not isinstance(item, dict):
            raise ConfigurationError(f"{inner} must be a content block (an object).", field=inner)
        entry = cast("Mapping[str, object]", item)
        kind = entry.get("type")
        if kind == "text":
            parts.append(TextPart(_text(entry, inner)))
        elif kind in ("image", "document"):
            parts.extend(_media(entry, inner, rules))
        else:
            raise _unsupported(rules, f"{inner}.type", f"{kind!r} blocks in tool results")
    return ToolResult(call_id, tuple(parts), where)


def _source(block: Mapping[str, object], where: str) -> Mapping[str, object]:
    source: object = block.get("source")
    if not isinstance(source, dict):
        raise ConfigurationError(f"{where}.source must be an object naming the content.", field=f"{where}.source")
    return cast("Mapping[str, object]", source)


def _data_url(source: Mapping[str, object], where: str) -> str:
    media_type = _string(source, "media_type", f"{where}.source")
    return f"data:{media_type};base64,{_string(source, 'data', f'{where}.source')}"


def _text(block: Mapping[str, object], where: str) -> str:
    return _string(block, "text", where)


def _string(block: Mapping[str, object], key: str, where: str) -> str:
    value: object = block.get(key)
    if not isinstance(value, str):
        raise ConfigurationError(f"{where}.{key} must be a string.", field=f"{where}.{key}")
    return value


def _unsupported(rules: ContentRules, field: str, what: str) -> ConfigurationError:
    return ConfigurationError(f"{rules.provider} cannot take {what} ({field}).", field=field)
