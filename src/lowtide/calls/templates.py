"""The template of an actor's calls that give only a prompt: everything else comes from the configuration, so the
params are built, checked and encoded once, and each call adds only its prompt."""

from __future__ import annotations

import asyncio
import functools
import json
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lowtide.batching.gc_tuning import MANY, freeze_survivors, thaw
from lowtide.ledger.store import stored_json
from lowtide.messages.limits import NO_LIMITS, InputLimits
from lowtide.types import ActorRequest, ChatMessage

if TYPE_CHECKING:
    from lowtide.batching.backend import Settled
    from lowtide.batching.engine.batch_engine import BatchEngine
    from lowtide.provider import Provider

__all__ = ["Claim", "PromptTemplate"]

Claim = Callable[["BatchEngine", str, str, "asyncio.Future[Settled]"], None]
"""How a call that waited for a template's checks is claimed: (the engine it chose, params JSON, key, the outcome its
caller waits on). The engine is the call's own choice, made in its own context (a deadline's lane: `deadline_lane`),
never that of the call whose task ends the checks."""
_Waiting = list[tuple["BatchEngine", str, str, "asyncio.Future[Settled]"]]


@dataclass(eq=False)
class PromptTemplate:
    """The params of every call that gives only a prompt, whose other fields come from the configuration."""

    encode: Callable[[str], dict[str, Any]]
    """The provider's params for a prompt (through its codec)."""
    model: str
    around: tuple[str, str] | None
    """The params' JSON as the ledger stores it, before and after the prompt's JSON string."""
    request: ActorRequest
    """A call of this template, for the provider's pre-send checks (made once: only the prompt varies)."""
    checked: bool = False
    checking: asyncio.Future[None] | None = None
    """The checks under way, which the calls that arrive meanwhile wait for."""
    provider: Provider | None = None
    """The provider the checks were made with (which checks a call whole, when it must be)."""
    limits: InputLimits | None = NO_LIMITS
    """What the provider takes of one request of this template (`Provider.input_limits`, found by the checks): a
    call whose params fit is claimed as it comes; one that may not is checked whole first. None: every call is."""
    _waiting: _Waiting = field(default_factory=_Waiting)

    @classmethod
    def of(cls, encode: Callable[[str], dict[str, Any]], request: ActorRequest) -> PromptTemplate:
        marker = f"lowtide-prompt-{uuid.uuid4().hex}"
        encoded = stored_json(encode(marker))
        # JSON nests: the params with a prompt are these pieces around the prompt's own JSON string.
        before, _, after = encoded.partition(stored_json(marker))
        around = (before, after) if encoded.count(marker) == 1 else None
        return cls(encode, request.model, around, request)

    def with_prompt(self, prompt: str) -> dict[str, Any]:
        return self.encode(prompt)

    def fits(self, params_json: str) -> bool:
        """Whether a call whose params are `params_json` is within the provider's limits without checking it whole
        (its size, and surely its model's context window)."""
        return self.limits is not None and self.limits.fits(len(params_json))

    def size_with(self, prompt: str) -> int:
        """The bytes of the params of a call with `prompt`, as the ledger stores them."""
        if self.around is not None:
            return len(self.around[0]) + len(stored_json(prompt)) + len(self.around[1])
        return len(stored_json(self.encode(prompt)))

    def request_with(self, prompt: str) -> ActorRequest:
        """The whole request of a call of this template with `prompt` (to check it alone)."""
        return self.request.model_copy(update={"messages": [ChatMessage(role="user", content=prompt)]})

    def request_of(self, params_json: str) -> ActorRequest:
        """The whole request of a call of this template whose params are `params_json`."""
        assert self.around is not None
        return self.request_with(json.loads(params_json[len(self.around[0]) : len(params_json) - len(self.around[1])]))

    def check_under_way(self) -> bool:
        """Whether checks of this event loop are under way, which a call arriving now can wait for."""
        checking = self.checking
        return checking is not None and checking.get_loop() is asyncio.get_running_loop() and not checking.done()

    def start_check(self, check: Awaitable[None], claim: Claim) -> None:
        """Start the provider's pre-send checks. Once they pass, `claim(engine, params_json, key, outcome)` claims each
        call that waited (`after_check`); should they fail, each waiting call's outcome is their error.

        The waiting calls are kept as a list and claimed in one go, in the turn of the event loop the checks end in:
        thousands arrive at once, and a future, two callbacks and a wake-up each would be so many more objects.
        """
        waiting: _Waiting = []
        self._waiting = waiting
        checking = self.checking = asyncio.ensure_future(check)
        checking.add_done_callback(functools.partial(self._checked, waiting, claim))

    def after_check(self, engine: BatchEngine, params_json: str, key: str) -> asyncio.Future[Settled]:
        """The outcome of a call that waits for the checks under way, and is claimed by `engine` once they pass."""
        outcome: asyncio.Future[Settled] = asyncio.get_running_loop().create_future()
        self._waiting.append((engine, params_json, key, outcome))
        if len(self._waiting) % MANY == 0:
            freeze_survivors(MANY)  # thousands of calls arriving at once wait for the checks, then for their batch
        return outcome

    def _checked(
        self,
        waiting: _Waiting,
        claim: Claim,
        checking: asyncio.Future[None],
    ) -> None:
        error = None if checking.cancelled() else checking.exception()
        if error is None and not checking.cancelled():
            self.checked = True
        calls, waiting[:] = list(waiting), []
        if error is not None or checking.cancelled():
            thaw()  # no batch is sent for the calls that waited: nothing of theirs stays out of the collector's sight
        for engine, params_json, key, outcome in calls:
            if outcome.done():
                continue  # its caller gave up while it waited: it is never claimed
            if checking.cancelled():
                outcome.cancel()
            elif error is not None:
                outcome.set_exception(error)
            else:
                try:
                    claim(engine, params_json, key, outcome)
                except Exception as exc:
                    outcome.set_exception(exc)
