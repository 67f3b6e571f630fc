"""What a request costs in input tokens (ceil(chars / 4) over tools, system and messages, the order the model
reads them in; images and documents as `lowtide.emulator.core.documents` counts them) and where its prompt-cache
breakpoints fall; pure functions of the request."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lowtide.emulator.core.documents import media_tokens
from lowtide.emulator.core.jsonutil import as_array, as_object, canonical

__all__ = ["CACHE_TTLS", "Breakpoint", "Prompt", "analyze_prompt", "tokens_for_chars"]

CACHE_TTLS: Mapping[str, float] = {"5m": 300.0, "1h": 3600.0}
_CHARS_PER_TOKEN = 4
_MEDIA = ("image", "document")


@dataclass(frozen=True)
class Breakpoint:
    """A cacheable prefix: its identity (`key`), its size in tokens, and how long it stays cached."""

    key: str
    tokens: int
    ttl: float


@dataclass(frozen=True)
class Prompt:
    tokens: int
    breakpoints: tuple[Breakpoint, ...]


@dataclass(frozen=True)
class _Piece:
    value: object
    chars: int
    ttl: float | None


def tokens_for_chars(chars: int) -> int:
    return math.ceil(chars / _CHARS_PER_TOKEN)


def analyze_prompt(params: Mapping[str, object]) -> Prompt:
    """The request's input tokens and its cache breakpoints (in prompt order; empty without `cache_control`)."""
    pieces = _pieces(params)
    total = max(1, tokens_for_chars(sum(piece.chars for piece in pieces)))
    return Prompt(tokens=total, breakpoints=tuple(_breakpoints(params, pieces)))


def _ttl(control: object) -> float | None:
    settings = as_object(control)
    if settings is None:
        return None
    return CACHE_TTLS.get(str(settings.get("ttl") or "5m"), CACHE_TTLS["5m"])


def _without_cache_control(block: Mapping[str, object]) -> dict[str, object]:
    # Marking a block as a breakpoint must not change the prefix it closes.
    return {key: value for key, value in block.items() if key != "cache_control"}


def _block_chars(block: Mapping[str, Any]) -> int:
    """A block's size in characters: images and documents by what they cost in tokens, not by their base64."""
    if block.get("type") == "text" and isinstance(block.get("text"), str):
        return len(block["text"])
    tokens = media_tokens(block)
    if tokens is not None:
        return tokens * _CHARS_PER_TOKEN
    inner = as_array(block.get("content")) if block.get("type") == "tool_result" else None
    if inner is not None and any((as_object(item) or {}).get("type") in _MEDIA for item in inner):
        rest = {key: value for key, value in block.items() if key not in ("content", "cache_control")}
        return len(canonical(rest)) + sum(_block_chars(as_object(item) or {}) for item in inner)
    return len(canonical(_without_cache_control(block)))


def _pieces(params: Mapping[str, object]) -> list[_Piece]:
    pieces: list[_Piece] = []
    for item in as_array(params.get("tools")) or []:
        tool = as_object(item) or {}
        value = _without_cache_control(tool)
        pieces.append(_Piece(value, len(canonical(value)), _ttl(tool.get("cache_control"))))
    system = params.get("system")
    if isinstance(system, str):
        pieces.append(_Piece({"system": system}, len(system), None))
    for item in as_array(system) or []:
        block = as_object(item) or {}
        pieces.append(_Piece(_without_cache_control(block), _block_chars(block), _ttl(block.get("cache_control"))))
    for item in as_array(params.get("messages")) or []:
        message = as_object(item) or {}
        role = message.get("role")
        content = message.get("content")
        if isinstance(content, str):
            pieces.append(_Piece({"role": role, "text": content}, len(content), None))
            continue
        for entry in as_array(content) or []:
            block = as_object(entry) or {}
            value = {"role": role, **_without_cache_control(block)}
            pieces.append(_Piece(value, _block_chars(block), _ttl(block.get("cache_control"))))
    return pieces


def _breakpoints(params: Mapping[str, object], pieces: list[_Piece]) -> list[Breakpoint]:
    # Top-level `cache_control` is automatic caching: a breakpoint on the last block of the prompt.
    automatic = _ttl(params.get("cache_control"))
    if automatic is None and all(piece.ttl is None for piece in pieces):
        return []
    # A cache entry belongs to one model: the same prefix sent to another model is a miss.
    running = hashlib.sha256(str(params.get("model")).encode())
    chars = 0
    found: list[Breakpoint] = []
    for index, piece in enumerate(pieces):
        running.update(canonical(piece.value).encode())
        chars += piece.chars
        ttl = piece.ttl if piece.ttl is not None else (automatic if index == len(pieces) - 1 else None)
        if ttl is not None:
            found.append(Breakpoint(key=running.copy().hexdigest(), tokens=tokens_for_chars(chars), ttl=ttl))
    return found
