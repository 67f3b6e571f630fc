"""A message's document block by path (`{"type": "document", "path": "report.docx"}`): the file read when the call's
request is built, before anything is sent, and made the block a bulk job's `file` becomes (`file_block`): a PDF or
text as a document, an image as an image block, a Word, Excel or PowerPoint file or an HTML page as the Markdown it
converts to (the `documents` extra), titled with the file's name unless the block gives a title. A missing file, a
kind the API does not take, a damaged or password-protected office file are refused naming the block and the file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from lowtide.errors import ConfigurationError
from lowtide.types import ChatMessage

__all__ = ["documents_by_path", "path_block"]

# What a block by path may carry beside its path: the rest of a document block is made from the file.
_KEPT = ("cache_control", "context")
_ALLOWED = frozenset({"type", "path", "title", "citations", *_KEPT})


def documents_by_path(messages: Sequence[ChatMessage]) -> list[ChatMessage] | None:
    """`messages` with each document block given by `path` made the block its file becomes, or None when there is none.

    Raises `ConfigurationError` naming the block (`messages.0.content.1`) when its file cannot be sent."""
    if not any(_has_path(message) for message in messages):
        return None
    made: list[ChatMessage] = []
    for index, message in enumerate(messages):
        if not _has_path(message):
            made.append(message)
            continue
        content = cast("list[dict[str, Any]]", message.content)
        blocks = [
            _block(block, f"messages.{index}.content.{number}") if _by_path(block) else block
            for number, block in enumerate(content)
        ]
        made.append(message.model_copy(update={"content": blocks}))
    return made


def path_block(messages: object) -> str | None:
    """Where the first document block by path is among `messages` (ChatMessages or their dicts), or None: what
    `lowtide serve` refuses, since a path names a file of the server's machine, which no client may have read."""
    if not isinstance(messages, list | tuple):
        return None
    for index, message in enumerate(cast("Sequence[object]", messages)):
        content: object = (
            message.content
            if isinstance(message, ChatMessage)
            else cast("Mapping[str, object]", message).get("content")
            if isinstance(message, Mapping)
            else None
        )
        if isinstance(content, list):
            for number, block in enumerate(cast("list[object]", content)):
                if isinstance(block, Mapping) and _by_path(cast("Mapping[str, Any]", block)):
                    return f"messages.{index}.content.{number}"
    return None


def _has_path(message: ChatMessage) -> bool:
    return not isinstance(message.content, str) and any(_by_path(block) for block in message.content)


def _by_path(block: Mapping[str, Any]) -> bool:
    return block.get("type") == "document" and "path" in block


def _block(block: Mapping[str, Any], where: str) -> dict[str, Any]:
    path: object = block["path"]
    title: object = block.get("title")
    citations: object = block.get("citations")
    unknown = sorted(set(block) - _ALLOWED)
    if unknown:
        raise ConfigurationError(
            f"{where}: a document block given by path takes {', '.join(sorted(_ALLOWED - {'type'}))}; not "
            f"{', '.join(unknown)} (its source is made from the file).",
            field=where,
        )
    if not isinstance(path, str) or not path.strip():
        raise ConfigurationError(f"{where}.path: the path must name a file (got {path!r}).", field=f"{where}.path")
    if title is not None and not isinstance(title, str):
        raise ConfigurationError(f"{where}.title: the title must be a string (got {title!r}).", field=f"{where}.title")
    enabled = _enabled(cast("Mapping[str, object]", citations)) if isinstance(citations, Mapping) else None
    if citations is not None and not isinstance(enabled, bool):
        raise ConfigurationError(
            f'{where}.citations: give {{"enabled": true}} or {{"enabled": false}} (got {citations!r}).',
            field=f"{where}.citations",
        )
    # Imported only for a block by path: the bulk inputs' package is not every call's to load.
    from lowtide.bulk.inputs.files import file_block
    from lowtide.bulk.inputs.problems import InputError

    file = Path(path).expanduser()
    try:
        made = file_block(file, citations=enabled is True, title=title)
    except InputError as exc:
        reason = exc.problems[0].message if exc.problems else str(exc)
        shown = f" (looked for {file.absolute()})" if reason == "does not exist" and not file.is_absolute() else ""
        raise ConfigurationError(f"{where}: file {str(path)!r} {reason}{shown}", field=where) from None
    for name in _KEPT:
        if name in block:
            made[name] = block[name]
    return made


def _enabled(citations: Mapping[str, object]) -> object:
    return citations.get("enabled")
