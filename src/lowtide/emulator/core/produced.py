"""A stored file's bytes, as an emulation's files hold them: kept as uploaded, or produced afresh at each read from
the batch that made them (so that a large batch's output costs nothing until it is read)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

__all__ = ["file_pieces"]


def file_pieces(content: bytes | None, lines: Callable[[], Iterable[bytes]] | None) -> Iterator[bytes]:
    """The file's bytes in order: `content` whole when it was uploaded, else each line `lines` produces."""
    if content is not None:
        yield content
        return
    assert lines is not None, "a file holds content or produces lines"
    yield from lines()
