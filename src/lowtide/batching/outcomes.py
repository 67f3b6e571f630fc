"""What a result line comes to, whatever it holds: the codec's outcome for the line, or, for a line lowtide cannot
read or map (not JSON, not UTF-8, a shape the codec does not know, an answer that does not build), that request's
`BatchRequestUnreadable` keeping the line. One bad line is one request's error, never the batch's."""

from __future__ import annotations

import json
import logging
from typing import Any

from lowtide.batching.backend import BatchCodec, ResultLine, Settled, UnreadableLine
from lowtide.errors import BatchRequestUnreadable

__all__ = ["custom_id_of", "outcome_of", "raw_text", "unreadable"]

log = logging.getLogger("lowtide.batching.engine.batch_engine")


def custom_id_of(codec: BatchCodec, line: ResultLine | UnreadableLine) -> str | None:
    """The custom id a line names (for an unreadable line, the one made out of its bytes, if any)."""
    return line.custom_id if isinstance(line, UnreadableLine) else codec.custom_id_of(line)


def outcome_of(
    codec: BatchCodec, line: ResultLine | UnreadableLine, custom_id: str, *, batch_id: str, request_id: str | None
) -> tuple[Settled, dict[str, Any] | None]:
    """The line's outcome and, for an answer, the dict it is stored as (`BatchCodec.line_outcome`); the request's
    `BatchRequestUnreadable` when the line cannot be read or the codec cannot map it."""
    if isinstance(line, UnreadableLine):
        return unreadable(batch_id, custom_id, line.text, line.reason), None
    try:
        return codec.line_outcome(line, batch_id=batch_id, request_id=request_id)
    except Exception as exc:  # a shape the codec does not know: that request's error, not the batch's
        log.warning("Could not read the result of request %s in batch %s: %s: %s", custom_id, batch_id,
                    type(exc).__name__, exc)  # fmt: skip
        return unreadable(batch_id, custom_id, raw_text(line), f"{type(exc).__name__}: {exc}"), None


def unreadable(batch_id: str, custom_id: str, raw_line: str, reason: str) -> BatchRequestUnreadable:
    return BatchRequestUnreadable(batch_id=batch_id, custom_id=custom_id, raw_line=raw_line, reason=reason)


def raw_text(line: ResultLine | UnreadableLine) -> str:
    """A line as text, as near as can be to what the API sent (a decoded line is encoded again)."""
    if isinstance(line, UnreadableLine):
        return line.text
    try:
        return json.dumps(line, ensure_ascii=False, default=str, separators=(",", ":"))
    except (TypeError, ValueError):  # pragma: no cover - what json.loads gave, json.dumps takes
        return repr(line)
