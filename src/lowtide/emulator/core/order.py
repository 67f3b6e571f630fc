"""The order a batch API's results come in: unrelated to the requests', and never theirs when there are two or more,
so that a reader that does not join results on their ids finds out at once (a scenario checking it must not pass by
chance: five requests keep their order one time in 120 under a plain hash)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

__all__ = ["unrelated_order"]


def unrelated_order(indexes: Sequence[int], label: Callable[[int], str]) -> list[int]:
    """`indexes` in the order of a hash of each one's `label` (its custom id, or the batch's id and its key: the same
    each time the results are read), reversed if that left them as they were."""

    def digest(index: int) -> bytes:
        return hashlib.blake2b(label(index).encode(), digest_size=8).digest()

    shuffled = sorted(indexes, key=digest)
    if len(shuffled) > 1 and shuffled == sorted(indexes):
        shuffled.reverse()
    return shuffled
