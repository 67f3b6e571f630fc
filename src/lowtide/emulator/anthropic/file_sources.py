"""File sources in a Messages request (`{"type": "file", "file_id": ...}` on an image or a document, at the top of
a turn, in a tool result, or inside a document's custom content), resolved from the uploaded files.

Each is replaced by the inline source the file's type calls for (a PDF or an image as base64, plain text as a text
source), and the request is checked again, so that everything downstream (the checks on the bytes, token counts,
citations, answers) treats the file exactly as if its content had been sent. A file id no file answers to is an
`invalid_request_error` naming it, as is a file of a type the block cannot hold.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from lowtide.emulator.anthropic.catalogue import ModelCatalogue
from lowtide.emulator.anthropic.stored_file import FileLookup, StoredFile
from lowtide.emulator.anthropic.validation import validate_message_params
from lowtide.emulator.core.errors import invalid_request
from lowtide.emulator.core.jsonutil import JsonObject, as_array, as_object
from lowtide.emulator.core.media import IMAGE_MEDIA_TYPES

__all__ = ["checked_params", "resolve_file_sources"]


def checked_params(
    body: object,
    lookup: FileLookup,
    *,
    models: ModelCatalogue,
    now: float | None,
    betas: frozenset[str] = frozenset(),
    in_batch: bool = False,
    count_tokens: bool = False,
) -> tuple[JsonObject, dict[str, StoredFile]]:
    """`body` validated as a Messages request with its file sources resolved, and the files it used; `models` are
    the models served."""
    params = validate_message_params(body, in_batch=in_batch, betas=betas, count_tokens=count_tokens, models=models)
    resolved, used = resolve_file_sources(params, lookup, now=now)
    if used:
        validate_message_params(resolved, in_batch=in_batch, betas=betas, count_tokens=count_tokens, models=models)
    return resolved, used


def resolve_file_sources(
    params: JsonObject, lookup: FileLookup, *, now: float | None
) -> tuple[JsonObject, dict[str, StoredFile]]:
    """`params` with every file source inline (`params` itself when it has none), and the files used by id.

    `now` is when the files are read: an expired file's bytes are gone. None reads them whatever their expiry (the
    files a settled batch already read).
    """
    resolver = _Resolver(lookup, now)
    messages = as_array(params.get("messages")) or []
    resolved = [resolver.message(item, f"messages.{index}") for index, item in enumerate(messages)]
    if not resolver.used:
        return params, resolver.used
    return {**params, "messages": resolved}, resolver.used


class _Resolver:
    def __init__(self, lookup: FileLookup, now: float | None) -> None:
        self._lookup = lookup
        self._now = now
        self.used: dict[str, StoredFile] = {}

    def message(self, item: object, where: str) -> object:
        message = as_object(item) or {}
        blocks = as_array(message.get("content"))
        if blocks is None:
            return item  # plain text
        content = [self.block(block, f"{where}.content.{index}") for index, block in enumerate(blocks)]
        return {**message, "content": content}

    def block(self, item: object, where: str) -> object:
        # The request was validated: every block is an object.
        block = as_object(item) or {}
        kind = block.get("type")
        source = as_object(block.get("source")) or {}
        if kind in ("image", "document") and source.get("type") == "file":
            return {**block, "source": self._inline(str(kind), source, where)}
        if kind == "document" and source.get("type") == "content":
            inner = as_array(source.get("content"))
            if inner is not None:
                place = f"{where}.document.source.content.content"
                content = [self.block(entry, f"{place}.{index}") for index, entry in enumerate(inner)]
                return {**block, "source": {**source, "content": content}}
        if kind == "tool_result":
            inner = as_array(block.get("content"))
            if inner is not None:
                place = f"{where}.tool_result.content"
                return {
                    **block,
                    "content": [self.block(entry, f"{place}.{index}") for index, entry in enumerate(inner)],
                }
        return block

    def _inline(self, kind: str, source: Mapping[str, Any], where: str) -> JsonObject:
        file_id = str(source.get("file_id"))
        place = f"{where}.{kind}.source.file"
        file = self._lookup(file_id)
        if file is None:
            raise invalid_request(f"{place}.file_id: File '{file_id}' not found.")
        if self._now is not None and file.expired(self._now):
            raise invalid_request(f"{place}.file_id: File '{file_id}' has expired; its content is no longer available.")
        self.used[file_id] = file
        data = base64.b64encode(file.content).decode()
        if kind == "image":
            if file.mime_type not in IMAGE_MEDIA_TYPES:
                raise invalid_request(
                    f"{place}: File '{file_id}' is {file.mime_type}; an image block takes a JPEG, PNG, GIF or WebP "
                    "file."
                )
            return {"type": "base64", "media_type": file.mime_type, "data": data}
        # The file's id stays on the source, so that citations of the document can name it.
        if file.mime_type == "application/pdf":
            return {"type": "base64", "media_type": "application/pdf", "data": data, "file_id": file_id}
        if file.mime_type == "text/plain":
            try:
                text = file.content.decode("utf-8")
            except UnicodeDecodeError:
                raise invalid_request(f"{place}: File '{file_id}' is text/plain but not valid UTF-8.") from None
            return {"type": "text", "media_type": "text/plain", "data": text, "file_id": file_id}
        raise invalid_request(
            f"{place}: File '{file_id}' is {file.mime_type}; a document block takes a PDF (application/pdf) or a "
            "plain text (text/plain) file."
        )
