"""What every provider does alike with its official SDK: a request body split into the parameters an SDK method
names and the rest, which travel in `extra_body`."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

__all__ = ["split_for_sdk"]


def split_for_sdk(body: dict[str, object], method: Callable[..., object]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split a request body into the parameters `method` names and the rest, which travel in `extra_body`.

    An SDK's typed signatures lag its API (anthropic 2.x dropped `temperature`, `top_p` and `top_k`), yet the API
    still takes them, and a batch line sends every parameter as it is: a live call must send the same.
    """
    accepted = _keyword_parameters(method)
    named = {name: value for name, value in body.items() if name in accepted}
    return named, {name: value for name, value in body.items() if name not in accepted}


def _keyword_parameters(method: Callable[..., object]) -> frozenset[str]:
    function = getattr(method, "__func__", method)
    cached = _SIGNATURES.get(function)
    if cached is None:
        cached = _SIGNATURES[function] = frozenset(inspect.signature(function).parameters) - _SDK_OPTIONS
    return cached


_SIGNATURES: dict[object, frozenset[str]] = {}
# The SDK's own request options, and `stream` (set by the call itself), never body parameters.
_SDK_OPTIONS = frozenset({"self", "extra_headers", "extra_query", "extra_body", "timeout", "stream"})
