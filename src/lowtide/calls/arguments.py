"""Checks of a call's own arguments that need no provider: text to send, a key naming the call, a budget.

Each raises `ConfigurationError` with a one-line message naming the argument, before anything is recorded or sent.
"""

from __future__ import annotations

import math
import reprlib
from collections.abc import Sequence
from decimal import Decimal

from pydantic import BaseModel

from lowtide.core.spelling import argument
from lowtide.errors import ConfigurationError
from lowtide.messages.unicode import check_text
from lowtide.types import ChatMessage

__all__ = [
    "check_budget",
    "check_call",
    "check_count",
    "check_key",
    "check_messages",
    "check_prompt",
    "check_requests",
    "check_response_model",
    "check_seconds",
]


def check_prompt(prompt: object) -> None:
    """A prompt: text (bytes would be sent as their Python repr) with something in it, which the API needs, of valid
    Unicode."""
    if not isinstance(prompt, str):
        hint = " (decode it)" if isinstance(prompt, bytes | bytearray) else ""
        raise ConfigurationError(
            f"prompt: a prompt is text (a str), not {_shown(prompt) if not hint else 'bytes'}{hint}.", field="prompt"
        )
    if not prompt or prompt.isspace():
        raise ConfigurationError(
            f"prompt: the prompt is {_blank(prompt)}; the API refuses a message with no text.", field="prompt"
        )
    if not prompt.isascii():
        check_text(prompt, "prompt")


def check_requests(requests: object) -> None:
    """`run_many`'s requests: a list (a str is one prompt, not a list of one-letter ones)."""
    if isinstance(requests, str | bytes | bytearray) or not isinstance(requests, Sequence):
        hint = " (one prompt: put it in a list)" if isinstance(requests, str) else ""
        raise ConfigurationError(
            f"requests must be a list of prompts or ActorRequests, not {type(requests).__name__} "
            f"{reprlib.repr(requests)}{hint}.",
            field="requests",
        )


def check_messages(messages: Sequence[ChatMessage]) -> None:
    """Every message has content that is not only whitespace, but a last assistant turn (which the model continues)."""
    for index, message in enumerate(messages):
        if message.role == "assistant" and index == len(messages) - 1:
            return
        where = f"messages.{index}.content"
        content = message.content
        if isinstance(content, str):
            if not content or content.isspace():
                raise ConfigurationError(
                    f"{where}: the message is {_blank(content)}; the API refuses a message with no content.",
                    field=where,
                )
            continue
        if not content:
            raise ConfigurationError(f"{where}: the message has no content blocks; the API needs one.", field=where)
        for number, block in enumerate(content):
            text = block.get("text")
            if block.get("type") == "text" and isinstance(text, str) and (not text or text.isspace()):
                raise ConfigurationError(
                    f"{where}.{number}.text: the text block is {_blank(text)}; the API refuses it.",
                    field=f"{where}.{number}.text",
                )


def check_key(key: object) -> str:
    """A key naming a call: a string with something in it, of valid Unicode (the ledger stores it as UTF-8)."""
    if not isinstance(key, str) or not key.strip():
        raise ConfigurationError(
            f"key: a key must be a non-empty string naming the call (got {_shown(key)}).", field="key"
        )
    if not key.isascii():
        check_text(key, "key")
    return key


def check_budget(amount: object) -> Decimal:
    """A budget in US dollars: a finite number more than 0 (a bool is no number here)."""
    number = isinstance(amount, int | float | Decimal) and not isinstance(amount, bool)
    value = Decimal(str(amount)) if number else None
    if value is None or not value.is_finite() or value <= 0:
        raise ConfigurationError(
            f"{argument('max_cost_usd')}: a budget must be a finite number of US dollars more than 0"
            f" (got {_shown(amount)}).",
            field="max_cost_usd",
        )
    return value


def check_seconds(name: str, value: object, *, zero: bool = False) -> float:
    """A duration in seconds: a finite number more than 0 (or 0 too, with `zero`); a bool is no number here."""
    seconds = float(value) if isinstance(value, int | float) and not isinstance(value, bool) else math.nan
    if not math.isfinite(seconds) or seconds < 0 or (seconds == 0 and not zero):
        least = "0 seconds or more" if zero else "more than 0 seconds"
        raise ConfigurationError(f"{argument(name)} must be {least}, not {value!r}.", field=name)
    return seconds


def check_count(name: str, value: object, *, least: int = 1, most: int | None = None) -> int:
    """A whole number from `least` to `most`; a bool or a float is no count here."""
    if not isinstance(value, int) or isinstance(value, bool) or value < least or (most is not None and value > most):
        span = f"between {least:,} and {most:,}" if most is not None else f"at least {least:,}"
        raise ConfigurationError(f"{argument(name)} must be a whole number {span}, not {value!r}.", field=name)
    return value


def check_call(key: object, max_cost_usd: object) -> None:
    """A call's key and budget, each when given."""
    if key is not None:
        check_key(key)
    if max_cost_usd is not None:
        check_budget(max_cost_usd)


def check_response_model(response_model: object) -> None:
    """A response model, when given: a pydantic model class (an instance of one, `Verdict()`, is named as such)."""
    if response_model is None or (isinstance(response_model, type) and issubclass(response_model, BaseModel)):
        return
    if isinstance(response_model, BaseModel):
        name = type(response_model).__name__
        said = f"give the model class, {name}, not an instance of it ({name}(...))"
    else:
        given = f"the class {response_model.__name__}" if isinstance(response_model, type) else _shown(response_model)
        said = f"a response model is a pydantic model class (a subclass of BaseModel), not {given}"
    raise ConfigurationError(f"response_model: {said}.", field="response_model")


def _blank(text: str) -> str:
    return "empty" if not text else "only whitespace"


def _shown(value: object) -> str:
    return f"{type(value).__name__} {value!r}"
