"""A request body from a client `lowtide serve` cannot trust, read into JSON or refused before anything looks at it: at
most a limit of bytes (a `Content-Length` over it refused unread, a longer stream as soon as it passes the limit, so
that no more than the limit is ever held), UTF-8, JSON nested at most `MAX_DEPTH` levels (counted before parsing,
which recurses), finite numbers, and strings without lone surrogates (which no API can carry: they are not text).
Each refusal is a `Refusal` in serve's own terms (`wire.REFUSAL_TYPES`)."""

from __future__ import annotations

import asyncio
import json
import math
import re
from itertools import accumulate
from typing import cast

from starlette.requests import Request

from lowtide.messages.wire import Refusal

__all__ = ["MAX_DEPTH", "nested_deeper_than", "parse_json", "read_body", "read_json"]

MAX_DEPTH = 128
"""Far deeper than a request any SDK builds (a tool's JSON schema nests a few levels per object), far shallower than
what the JSON codecs and validators downstream, which recurse, could fail on."""

_IN_THREAD_BYTES = 1 << 20
"""A body larger than this is parsed in a worker thread, so that the event loop keeps serving the others meanwhile."""

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = bytes(set(range(256)) - set(b"[]{}"))
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
_PASSES = 8
_MAYBE_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
"""An escape of a code point between U+D800 and U+DFFF: only a body holding one can hold a lone surrogate (a strict
UTF-8 decoder refuses one written as bytes)."""
_SURROGATE = re.compile("[\ud800-\udfff]")


async def read_json(request: Request, limit: int, *, idle_seconds: float | None = None) -> object:
    """The request's body, at most `limit` bytes, as checked JSON; raises `Refusal` (413, 408 or 400) otherwise."""
    body = await read_body(request, limit, idle_seconds=idle_seconds)
    if len(body) > _IN_THREAD_BYTES:
        return await asyncio.to_thread(parse_json, body)
    return parse_json(body)


async def read_body(request: Request, limit: int, *, idle_seconds: float | None = None) -> bytes:
    """The request's body, refused with 413 as soon as it is known to be over `limit` bytes: before a byte of it is
    read when its `Content-Length` says so, else when the bytes received pass the limit (a chunked body). Refused
    with 408 when `idle_seconds` pass with no byte of it arriving (a client that declared 500 bytes and sent 20 would
    otherwise hold the request, and its connection, for ever)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    body = bytearray()
    chunks = aiter(request.stream())
    while True:
        try:
            async with asyncio.timeout(idle_seconds):
                chunk = await anext(chunks)
        except StopAsyncIteration:
            return bytes(body)
        except TimeoutError:
            raise _stalled(len(body), declared, idle_seconds) from None
        if len(body) + len(chunk) > limit:
            raise _too_large(limit)
        body += chunk


def _stalled(received: int, declared: str | None, idle_seconds: float | None) -> Refusal:
    of = f" of the {declared} its Content-Length declared" if declared is not None else ""
    return Refusal(
        408,
        "invalid_request_error",
        f"The request body stopped arriving: {received} bytes{of} came, then nothing for {idle_seconds:g} seconds.",
    )


def parse_json(body: bytes) -> object:
    """`body` as JSON, refused (400, naming what is wrong) unless it is UTF-8, nested at most `MAX_DEPTH` levels, with
    finite numbers and no lone surrogate."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _invalid(f"The request body is not valid UTF-8 (at byte {error.start}).") from None
    if nested_deeper_than(text, MAX_DEPTH):
        raise _invalid(f"The request body nests JSON more than {MAX_DEPTH} levels deep, more than lowtide serve reads.")
    try:
        value: object = json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    except json.JSONDecodeError as error:
        where = f"line {error.lineno}, column {error.colno}"
        raise _invalid(f"The request body is not valid JSON: {error.msg} ({where}).") from None
    except ValueError as error:  # a number JSON may write but no API reads: too many digits, infinite
        raise _invalid(f"The request body is not valid JSON: {error}.") from None
    if _MAYBE_SURROGATE.search(text):
        where = _surrogate_at(value)
        if where is not None:
            raise _invalid(
                f"{where}: the text holds a lone surrogate (a \\ud800-\\udfff escape that is not half of a pair),"
                " which is not valid Unicode.",
                param=where,
            )
    return value


def nested_deeper_than(text: str, limit: int) -> bool:
    """Whether the arrays and objects of the JSON `text` nest more than `limit` levels deep, told without parsing it
    (which recurses) from the brackets outside its strings, at the speed of `bytes` methods for most bodies.

    A few passes remove every innermost `[]` and `{}` pair (each pass takes a body one or two levels up); a body
    nested a few levels is gone after them. Otherwise what remains, and only if that cannot tell, the whole body, is
    counted bracket by bracket.
    """
    brackets = _STRING.sub("", text).encode("utf-8", "surrogatepass").translate(None, _NOT_BRACKETS)
    left, passes = brackets, 0
    while passes < _PASSES:
        shorter = left.replace(b"[]", b"").replace(b"{}", b"")
        if shorter == left:
            break
        left, passes = shorter, passes + 1
    rest = _depth(left)
    if rest + 2 * passes <= limit:
        return False
    return rest + passes > limit or _depth(brackets) > limit


def _depth(brackets: bytes) -> int:
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def _surrogate_at(value: object) -> str | None:
    """Where in `value` a string (or an object's key) holds a lone surrogate, as a path (`messages[0].content`)."""
    stack: list[tuple[object, str]] = [(value, "")]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return where or "body"
        elif isinstance(item, dict):
            for key, inner in cast("dict[str, object]", item).items():
                shown = key.encode("utf-8", "backslashreplace").decode("utf-8")  # a path that is text itself
                inner_where = f"{where}.{shown}" if where else shown
                if _SURROGATE.search(key):
                    return inner_where
                stack.append((inner, inner_where))
        elif isinstance(item, list):
            stack.extend((inner, f"{where}[{index}]") for index, inner in enumerate(cast("list[object]", item)))
    return None


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not a number JSON allows")


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"{text} is too large a number")
    return number


def _invalid(message: str, *, param: str | None = None) -> Refusal:
    return Refusal(400, "invalid_request_error", message, param=param)


def _too_large(limit: int) -> Refusal:
    return Refusal(
        413,
        "request_too_large",
        f"Request exceeds the maximum allowed number of bytes: lowtide serve takes at most {limit} bytes in a body.",
    )
