"""What an API takes of one request: its body's bytes, and the model's context window in input tokens, checked
before the request is recorded or sent; provider-neutral (each provider gives its own numbers, `InputLimits`).

Tokens are counted by the provider's API only when a cheap upper bound does not settle it. The bound: every token
of the byte-level tokenizers these APIs use stands for at least one byte of UTF-8 text, and the request's JSON
spells each such byte with at least one byte (ASCII-escaped, more), so a request whose JSON body is `n` bytes holds
at most `n` tokens of its own, plus what the API adds that the body does not show (the tool-use system prompt:
`InputLimits.fixed_tokens`). Images sent inline are bounded by their base64 too; a document, or content the API
fetches (a URL, a file by id), is not: a request holding one is counted.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from lowtide.errors import ConfigurationError
from lowtide.types import ActorRequest

__all__ = ["NO_LIMITS", "InputLimits", "body_json", "bounded_by_bytes", "byte_size", "check_input", "largest_part"]

_MIB = 1024 * 1024
# Content blocks whose tokens their JSON's bytes bound: text, and the turns of a tool call.
_BOUNDED_BLOCKS = frozenset({"text", "tool_use", "thinking", "redacted_thinking"})


@dataclass(frozen=True, slots=True)
class InputLimits:
    """What the API takes of a request of one model, settings and tools (any text), in one mode."""

    max_bytes: int | None = None
    """The most bytes the API takes in one request's body, in this mode (None: no limit known)."""
    window: int | None = None
    """The model's context window: the most input tokens a request may hold (None: unknown, not checked)."""
    fixed_tokens: int = 0
    """Tokens the API adds to the prompt that the body's bytes do not show (the tool-use system prompt)."""
    body_bytes: int = 0
    """The bytes of the body these limits were found for: what a request adds to it is measured from there."""
    model: str = ""
    where: str = "the API"
    """Who sets the limits, for messages ("Anthropic's Messages API", "OpenAI's Batch API")."""

    def fits(self, size: int) -> bool:
        """Whether a body of `size` bytes is within the byte limit and surely within the window, without counting."""
        if self.max_bytes is not None and size > self.max_bytes:
            return False
        return self.window is None or size + self.fixed_tokens <= self.window

    def check_size(self, size: int, request: ActorRequest) -> None:
        """Refuse a body of `size` bytes over the byte limit, naming the largest part of `request`."""
        if self.max_bytes is not None and size > self.max_bytes:
            field = largest_part(request)
            raise ConfigurationError(
                f"{field}: the request is {_mib(size)} ({size:,} bytes); {self.where} takes at most"
                f" {_mib(self.max_bytes)} in one request. Send less (split the text, or send a file by reference).",
                field=field,
            )

    def check_tokens(self, tokens: int, request: ActorRequest) -> None:
        """Refuse `tokens` input tokens over the model's context window, naming the largest part of `request`."""
        if self.window is not None and tokens > self.window:
            field = largest_part(request)
            raise ConfigurationError(
                f"{field}: the request holds {tokens:,} input tokens; {self.model!r} reads at most {self.window:,}"
                " (its context window). Send less, or use a model with a larger window.",
                field=field,
            )


NO_LIMITS = InputLimits()


async def check_input(
    request: ActorRequest, *, size: int, limits: InputLimits, count: Callable[[], Awaitable[int | None]]
) -> None:
    """Refuse `request` (whose body is `size` bytes) if it is over its API's byte limit or its model's context window.

    The window is checked without asking the API when the bound settles it (`bounded_by_bytes` and `limits.fits`);
    otherwise `count()` gives its input tokens (None: they cannot be counted now, and the request goes on).
    """
    limits.check_size(size, request)
    if limits.window is None or (limits.fits(size) and bounded_by_bytes(request)):
        return
    tokens = await count()
    if tokens is not None:
        limits.check_tokens(tokens, request)


def bounded_by_bytes(request: ActorRequest) -> bool:
    """Whether the bytes of every content block of `request` bound its tokens: text, tool calls and their results,
    and images sent inline (their base64); not a document, nor anything the API fetches (a URL, a file id)."""
    system = request.system
    if isinstance(system, list) and not all(_bounded(block) for block in system):
        return False
    for message in request.messages:
        content = message.content
        if not isinstance(content, str) and not all(_bounded(block) for block in content):
            return False
    return True


def _bounded(block: Mapping[str, Any]) -> bool:
    kind = block.get("type")
    if kind in _BOUNDED_BLOCKS:
        return True
    if kind == "image":
        source: object = block.get("source")
        return isinstance(source, dict) and cast("dict[str, object]", source).get("type") == "base64"
    if kind == "tool_result":
        inner: object = block.get("content")
        if isinstance(inner, list):
            items = cast("list[object]", inner)
            return all(isinstance(item, dict) and _bounded(cast("dict[str, Any]", item)) for item in items)
        return True
    return False


def largest_part(request: ActorRequest) -> str:
    """The part of `request` that weighs most (`messages.<n>`, `system` or `tools`): what a refusal names."""
    sizes: dict[str, int] = {
        f"messages.{index}": _weight(message.model_dump()) for index, message in enumerate(request.messages)
    }
    if request.system is not None:
        sizes["system"] = _weight(request.system)
    if request.tools:
        sizes["tools"] = _weight([tool.model_dump() for tool in request.tools])
    return max(sizes, key=lambda name: sizes[name])


def body_json(body: object, *, ascii_json: bool) -> str:
    """`body` as JSON, made once: as a live call sends it (UTF-8), or as a batch stores it (ASCII-escaped). Its
    bytes (`byte_size`) are what the size limit counts; their digest, what a count is kept under."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=ascii_json, default=str)


def byte_size(text: str) -> int:
    """The bytes of `text` in UTF-8 (its length, for ASCII, without encoding it)."""
    return len(text) if text.isascii() else len(text.encode())


def _weight(value: object) -> int:
    return len(json.dumps(value, default=str))


def _mib(size: int) -> str:
    return f"{size / _MIB:.1f} MiB"
