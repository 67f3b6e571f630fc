"""Per-request outcomes other than success, and the `[[emulator:…]]` markers that ask for one from request
text, so that faults can travel with the data (over a socket, or inside content lowtide forwards unchanged)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from lowtide.emulator.core.content import user_texts
from lowtide.emulator.core.errors import ERROR_STATUS, default_message

__all__ = ["Outcome", "OutcomeKind", "find_marker", "outcome_kind"]

OutcomeKind = Literal["errored", "canceled", "expired"]
_KINDS: dict[str, OutcomeKind] = {"errored": "errored", "canceled": "canceled", "expired": "expired"}

_MARKER = re.compile(r"\[\[emulator:(?:(canceled|expired)|errored(?::([a-z_]+))?)\]\]")


@dataclass(frozen=True)
class Outcome:
    """What a batch request ends as instead of succeeding; `error_type` and `message` matter for `errored`.
    `refused` marks an error the API's validation gave before the request ran (a bad model, `max_tokens` out of range),
    which some APIs report without a request id."""

    kind: OutcomeKind
    error_type: str = "invalid_request_error"
    message: str | None = None
    refused: bool = False

    @property
    def error_message(self) -> str:
        return self.message if self.message is not None else default_message(self.error_type)


def find_marker(params: Mapping[str, Any]) -> Outcome | None:
    """The outcome asked for by the first marker in the user text; a marker naming an unknown error type is text."""
    for text in user_texts(params):
        if "[[emulator:" not in text:
            continue
        for match in _MARKER.finditer(text):
            if match.group(1) is not None:
                return Outcome(outcome_kind(match.group(1)))
            error_type = match.group(2) or "invalid_request_error"
            if error_type in ERROR_STATUS:
                return Outcome("errored", error_type, f"Emulated {error_type} requested by a marker.")
    return None


def outcome_kind(value: object) -> OutcomeKind:
    """`value` as an outcome kind, or ValueError."""
    if not isinstance(value, str) or value not in _KINDS:
        raise ValueError(f"kind must be one of {', '.join(_KINDS)}, not {value!r}")
    return _KINDS[value]
