"""The prompt cache: which prefixes are warm, on the emulator's clock, and what a request reads or writes. Shared by
the emulations (each keys its prefixes its own way), and kept in the state file.

Requests of one batch are processed side by side: none of them reads what another wrote (`use`'s `seen`), as the
Anthropic batch guide warns; a write is visible to requests that start after it, within its lifetime.
As in the APIs, a prefix shorter than the model's minimum cacheable length is neither written nor read, however it
is marked: each emulation says what that minimum is for its model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lowtide.emulator.core.prompt import Breakpoint

__all__ = ["NO_CACHE", "CacheUsage", "PromptCache"]


@dataclass(frozen=True)
class CacheUsage:
    read: int = 0
    created_5m: int = 0
    created_1h: int = 0

    @property
    def created(self) -> int:
        return self.created_5m + self.created_1h


NO_CACHE = CacheUsage()


class PromptCache:
    """Cache entries keyed by prefix, each alive until its expiry time; a read refreshes the entry, as in the API."""

    def __init__(self) -> None:
        self._expiry: dict[str, float] = {}

    def clear(self) -> None:
        self._expiry.clear()

    def entries(self) -> dict[str, float]:
        """Every entry's expiry time by prefix key (a copy), for the state file."""
        return dict(self._expiry)

    def restore(self, entries: dict[str, float]) -> None:
        self._expiry = dict(entries)

    def use(
        self, breakpoints: Sequence[Breakpoint], now: float, *, minimum: int, seen: Mapping[str, float] | None = None
    ) -> CacheUsage:
        """Read the longest warm prefix, write the rest up to the last breakpoint, and refresh every breakpoint;
        breakpoints closing a prefix shorter than `minimum` tokens (the model's) are left out, as if unmarked.
        `seen`: the entries as they stood when the request started (`entries()` then), for a request processed
        side by side with others, which does not see their writes."""
        breakpoints = [breakpoint for breakpoint in breakpoints if breakpoint.tokens >= minimum]
        if not breakpoints:
            return NO_CACHE
        visible = self._expiry if seen is None else seen
        hit = -1
        for index in range(len(breakpoints) - 1, -1, -1):
            if visible.get(breakpoints[index].key, float("-inf")) > now:
                hit = index
                break
        read = breakpoints[hit].tokens if hit >= 0 else 0
        created = {300.0: 0, 3600.0: 0}
        previous = read
        for breakpoint in breakpoints[hit + 1 :]:
            # Each stretch of new prefix is written with the TTL of the breakpoint that closes it.
            created[3600.0 if breakpoint.ttl >= 3600.0 else 300.0] += max(0, breakpoint.tokens - previous)
            previous = max(previous, breakpoint.tokens)
        for breakpoint in breakpoints:
            self._expiry[breakpoint.key] = max(self._expiry.get(breakpoint.key, now), now + breakpoint.ttl)
        return CacheUsage(read=read, created_5m=created[300.0], created_1h=created[3600.0])
