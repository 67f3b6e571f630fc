"""Inline media no API can take, and a `tool_choice` no API can honour: every provider's rule, checked before anything
is recorded or sent.

A content block's base64 `source.data` (an image's, a document's) that is not valid base64 is refused naming its
place (`messages.0.content.1.source.data`), in user turns and inside tool results. A `tool_choice` that names a tool
(`{"type": "tool", "name": ...}`) names one of the request's `tools`. Which media types a provider takes is the
provider's to declare (`ContentRules.image_types`, checked as its encoder reads the blocks).
"""

from __future__ import annotations

import binascii
from collections.abc import Iterator, Mapping, Sequence
from typing import cast

from lowtide.errors import ConfigurationError
from lowtide.types import ActorRequest, ChatMessage

__all__ = ["check_media", "check_tool_choice", "media_sources"]


def check_media(request: ActorRequest) -> None:
    """Refuse a request whose inline media is not valid base64, or whose `tool_choice` names a tool it lacks."""
    check_tool_choice(request.tool_choice, [tool.name for tool in request.tools])
    for where, source in media_sources(request.messages):
        if source.get("type") != "base64":
            continue
        data: object = source.get("data")
        if isinstance(data, str) and not _is_base64(data):
            raise ConfigurationError(
                f"{where}.source.data: not valid base64 ({_shown(data)}); give the file's bytes base64-encoded in one"
                " line (`base64.b64encode(data).decode()`), or a document block with a `path`.",
                field=f"{where}.source.data",
            )


def check_tool_choice(tool_choice: Mapping[str, object] | None, tools: Sequence[str]) -> None:
    """A `tool_choice` of `{"type": "tool", "name": ...}` names one of `tools`."""
    if tool_choice is None or tool_choice.get("type") != "tool":
        return
    name = tool_choice.get("name")
    if name in tools:
        return
    given = ", ".join(repr(tool) for tool in tools) if tools else "none"
    if not isinstance(name, str) or not name:
        raise ConfigurationError(
            f"tool_choice.name: a tool_choice of type 'tool' must name the tool to call (one of the request's tools:"
            f" {given}).",
            field="tool_choice.name",
        )
    raise ConfigurationError(
        f"tool_choice.name: {name!r} is not among the request's tools ({given}); the API would refuse the request.",
        field="tool_choice.name",
    )


def media_sources(messages: Sequence[ChatMessage]) -> Iterator[tuple[str, Mapping[str, object]]]:
    """(place, source) of each image and document block of the messages, tool results' included."""
    for index, message in enumerate(messages):
        content = message.content
        if isinstance(content, str):
            continue
        for number, block in enumerate(content):
            where = f"messages.{index}.content.{number}"
            yield from _sources(block, where)
            inner: object = block.get("content")
            if block.get("type") == "tool_result" and isinstance(inner, list):
                for place, item in enumerate(cast("list[object]", inner)):
                    if isinstance(item, dict):
                        yield from _sources(cast("dict[str, object]", item), f"{where}.content.{place}")


def _sources(block: Mapping[str, object], where: str) -> Iterator[tuple[str, Mapping[str, object]]]:
    source: object = block.get("source")
    if block.get("type") in ("image", "document") and isinstance(source, dict):
        yield where, cast("dict[str, object]", source)


def _is_base64(data: str) -> bool:
    """Whether `data` is base64 as the APIs read it: one run of its alphabet, padded, no line breaks."""
    if not data.isascii():
        return False
    try:
        binascii.a2b_base64(data, strict_mode=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _shown(data: str) -> str:
    return f"{len(data):,} characters beginning {data[:12]!r}" if len(data) > 12 else repr(data)
