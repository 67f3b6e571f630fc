"""Stop sequences applied by lowtide, for an API that has none (OpenAI's Responses API): an answer cut at the first
stop sequence its text holds, and a stream's text held back while it may be the start of one. Neutral: it reads
`ActorResponse`s and stream pieces, never a provider's shapes."""

from __future__ import annotations

from collections.abc import Sequence

from lowtide.streaming import TextDelta, ThinkingDelta, ToolCallDelta
from lowtide.types import ActorResponse, TextContent

__all__ = ["StopCutter", "cut_at_stop"]

_Piece = TextDelta | ToolCallDelta | ThinkingDelta

STOP_SEQUENCE = "stop_sequence"
"""The stop reason of an answer cut at a stop sequence, as Anthropic's answers name it."""


def _first_stop(text: str, stops: Sequence[str]) -> tuple[int, str] | None:
    """Where the first stop sequence in `text` starts, and which it is (the earliest; of two starting at the same
    place, the one listed first)."""
    found: tuple[int, str] | None = None
    for stop in stops:
        at = text.find(stop)
        if at >= 0 and (found is None or at < found[0]):
            found = (at, stop)
    return found


def cut_at_stop(response: ActorResponse[object], stops: Sequence[str]) -> ActorResponse[object]:
    """`response` as the model would have ended it at the first of `stops` in its text: the text before it kept,
    every block after it dropped (a model that stops says nothing more), `stop_reason` "stop_sequence" and
    `stop_sequence` the one found. Its usage and cost stay as the API reported them: the tokens past the stop were
    generated and are paid for. Unchanged when no text block holds a stop sequence."""
    for index, block in enumerate(response.content):
        if not isinstance(block, TextContent):
            continue
        found = _first_stop(block.text, stops)
        if found is None:
            continue
        at, stop = found
        kept = [*response.content[:index], *([block.model_copy(update={"text": block.text[:at]})] if at else [])]
        text = "".join(part.text for part in kept if isinstance(part, TextContent))
        return response.model_copy(
            update={"content": kept, "text": text, "stop_reason": STOP_SEQUENCE, "stop_sequence": stop}
        )
    return response


class StopCutter:
    """A stream's pieces with `stops` applied as they come: text is handed on once it cannot be the start of a stop
    sequence, the text of a delta up to the first stop sequence, and nothing after it (the stream is still read to its
    end, for the usage the API reports)."""

    def __init__(self, stops: Sequence[str]) -> None:
        self._stops = tuple(stops)
        self._held = ""
        self._index: int | None = None
        self.stopped = False

    def pieces(self, piece: _Piece) -> list[_Piece]:
        """What of `piece` (and of the text held back before it) may be handed on now."""
        if self.stopped or not self._stops:
            return [] if self.stopped else [piece]
        if not isinstance(piece, TextDelta):  # stop sequences end the answer's text, not its calls or thinking
            return [*self.flush(), piece]
        out = self.flush() if piece.index != self._index else []
        self._index = piece.index
        text = self._held + piece.text
        found = _first_stop(text, self._stops)
        if found is not None:
            self.stopped = True
            self._held = ""
            return [*out, TextDelta(text[: found[0]], piece.index)] if found[0] else out
        keep = self._prefix_length(text)
        self._held = text[len(text) - keep :] if keep else ""
        ready = text[: len(text) - keep]
        return [*out, TextDelta(ready, piece.index)] if ready else out

    def flush(self) -> list[_Piece]:
        """The text held back, handed on: what follows it (another block, the end) shows it began no stop."""
        if not self._held or self._index is None:
            return []
        held, self._held = self._held, ""
        return [TextDelta(held, self._index)]

    def _prefix_length(self, text: str) -> int:
        """The length of the longest end of `text` that is the start of a stop sequence (and so may become one)."""
        longest = 0
        for stop in self._stops:
            for size in range(min(len(stop) - 1, len(text)), longest, -1):
                if stop.startswith(text[-size:]):
                    longest = size
                    break
        return longest
