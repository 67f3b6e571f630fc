"""The emulator's state in a file, so that an emulator started again on the same file still knows its batches.

What is kept is what the answers are computed from, never the answers themselves. The shared part (this module):
the calls counted by route, the outcomes armed by custom id (which batches not yet settled will need) and the prompt
cache; then each emulation's sections (`Emulation.saved()`: the Anthropic API's batches, files and counters at the
top level, as the file always held them; the OpenAI API's under `"openai"`). Call faults are not kept: they were
armed for calls to the emulator that stopped.

The file is JSON, rewritten whole after every change: written beside its final name, then renamed over it, so that
a reader, or an emulator killed while writing, only ever finds a complete file. Each emulation encodes what never
changes (a batch's requests, an uploaded file) once and reuses it in every later write.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lowtide.emulator.core.jsonutil import compact
from lowtide.emulator.core.outcomes import Outcome, outcome_kind

__all__ = ["UNREADABLE", "SavedState", "StateFile", "StateFileError"]

FORMAT = "lowtide-emulator-state"
VERSION = 1

UNREADABLE = (ValueError, TypeError, KeyError, AttributeError)
"""What reading a malformed file raises, in this module or an emulation's `restore`."""


class StateFileError(ValueError):
    """The state file cannot be read, is not an emulator state file, or cannot be written."""


@dataclass
class SavedState:
    """The shared part of a state file, and the whole `document`, from which each emulation takes its sections."""

    calls: dict[str, int]
    outcomes: dict[str, Outcome]
    cache: dict[str, float]
    document: Mapping[str, object]


class StateFile:
    """One emulator's state file. Writes are serialized: the server thread and a test thread may both save."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def read(self) -> SavedState | None:
        """The saved state, or None when there is no file yet."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as error:
            raise StateFileError(f"cannot read {self.path}: {error.strerror or error}") from None
        try:
            return _decode(json.loads(text))
        except UNREADABLE as error:
            raise self.unreadable(error) from None

    def unreadable(self, error: Exception) -> StateFileError:
        """The error for a file whose content (`error` says where) is not an emulator's state."""
        return StateFileError(f"{self.path} is not a lowtide emulator state file ({error!r})")

    def write(
        self,
        *,
        calls: dict[str, int],
        outcomes: dict[str, Outcome],
        cache: dict[str, float],
        sections: Sequence[Mapping[str, str]],
    ) -> None:
        """The whole file: the shared part, then each section's keys and JSON texts."""
        with self._lock:
            head = {
                "format": FORMAT,
                "version": VERSION,
                "calls": calls,
                "outcomes": {
                    custom_id: [outcome.kind, outcome.error_type, outcome.message]
                    for custom_id, outcome in outcomes.items()
                },
                "cache": cache,
            }
            rest = "".join(f",{json.dumps(key)}:{text}" for section in sections for key, text in section.items())
            text = f"{compact(head)[:-1]}{rest}}}\n"
            temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            try:
                temporary.write_text(text, encoding="utf-8")
                os.replace(temporary, self.path)
            except OSError as error:
                raise StateFileError(f"cannot write {self.path}: {error.strerror or error}") from None


def _decode(data: Any) -> SavedState:
    if data.get("format") != FORMAT or data.get("version") != VERSION:
        raise ValueError(f"format {data.get('format')!r}, version {data.get('version')!r}")
    return SavedState(
        calls={str(route): int(count) for route, count in data["calls"].items()},
        outcomes={
            str(custom_id): Outcome(outcome_kind(kind), str(error_type), _text(message))
            for custom_id, (kind, error_type, message) in data["outcomes"].items()
        },
        cache={str(key): float(expiry) for key, expiry in data["cache"].items()},
        document=data,
    )


def _text(value: object) -> str | None:
    return str(value) if value is not None else None
