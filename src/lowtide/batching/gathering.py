"""Calls on their way from work the batching layer cannot see. A `Gathering` declares a group of tasks whose next
calls belong in one batch (the agent runs a `resume` pass advances together: each replays its journal, on a remote
store a round trip a step, before its next turn reaches an actor). A coalescing window that a member's call reached
stays open until every member has reached an engine or ended, `STRAGGLER_SECONDS` at most, instead of closing on
whichever members the window's seconds happened to cover on a busy machine."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Generator
from contextvars import ContextVar

__all__ = ["STRAGGLER_SECONDS", "Gathering", "reached"]

STRAGGLER_SECONDS = 30.0
"""Most seconds a window waits for the members still working (one running a long tool step, or calling a live
actor): the others' batch is not held longer than this for them."""


class Gathering:
    """`size` tasks, each entering `member()` once, whose next calls travel together."""

    def __init__(self, size: int) -> None:
        self._working = size
        self._settled: asyncio.Future[None] | None = None

    @property
    def settled(self) -> bool:
        """Whether every member has reached an engine or ended."""
        return self._working <= 0

    @contextlib.contextmanager
    def member(self) -> Generator[None]:
        """Inside: the current task (and the tasks it starts) is one member, working until a call of its reaches an
        engine (`reached`) or it leaves."""
        member = _Member(self)
        token = _MEMBER.set(member)
        try:
            yield
        finally:
            _MEMBER.reset(token)
            member.rest()

    async def wait(self) -> None:
        """Until every member has reached an engine or ended, or `STRAGGLER_SECONDS` (real time) have passed."""
        if self.settled:
            return
        if self._settled is None:
            self._settled = asyncio.get_running_loop().create_future()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._settled), STRAGGLER_SECONDS)

    def member_rested(self) -> None:
        """One member reached an engine or left (`_Member.rest`, once each)."""
        self._working -= 1
        if self.settled and self._settled is not None and not self._settled.done():
            self._settled.set_result(None)


class _Member:
    __slots__ = ("_gathering", "_resting")

    def __init__(self, gathering: Gathering) -> None:
        self._gathering = gathering
        self._resting = False

    def rest(self) -> Gathering:
        """The member reached an engine or left: counted once."""
        if not self._resting:
            self._resting = True
            self._gathering.member_rested()
        return self._gathering


_MEMBER: ContextVar[_Member | None] = ContextVar("lowtide_gathering_member", default=None)


def reached() -> Gathering | None:
    """A call reaches an engine now: the gathering its task is a member of (its member counted as arrived), if any."""
    member = _MEMBER.get()
    return None if member is None else member.rest()
