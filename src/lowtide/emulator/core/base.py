"""`EmulatorBase`: an emulator composed of emulations, without naming any: the shared state, the app, the in-process
transport, the state file restored and kept, and each emulation found by its class (`emulation(OpenAIEmulation)`).
`lowtide.emulator.Emulator` builds on it with the built-in APIs' handles and SDK clients."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from typing import TypeVar

import httpx2
from starlette.applications import Starlette

from lowtide.core.clock import Clock
from lowtide.emulator.core.app import build_app
from lowtide.emulator.core.emulation import Emulation, EmulationError, Shared
from lowtide.emulator.core.faults import Faults
from lowtide.emulator.core.settings import Settings
from lowtide.emulator.core.state import UNREADABLE, StateFile
from lowtide.emulator.core.transport import in_process_transport

__all__ = ["EmulatorBase"]

E = TypeVar("E", bound=Emulation)


class EmulatorBase:
    """One emulated account with each API the `emulations` serve, on one clock, settings, faults and state file."""

    def __init__(
        self,
        clock: Clock,
        settings: Settings,
        emulations: Iterable[type[Emulation]],
        *,
        base_url: str,
        state_file: str | os.PathLike[str] | None = None,
    ) -> None:
        self.clock = clock
        self.base_url = base_url
        file = StateFile(state_file) if state_file is not None else None
        shared = self._shared = Shared(clock, settings, file)
        shared.emulations = tuple(kind(shared) for kind in emulations)
        for emulation in shared.emulations:
            shared.faults.know(emulation.route_names)
        if file is not None:
            saved = file.read()
            if saved is not None:
                shared.calls.update(saved.calls)
                shared.faults.restore_outcomes(saved.outcomes)
                shared.cache.restore(saved.cache)
                try:
                    for emulation in shared.emulations:
                        emulation.restore(saved.document)
                except UNREADABLE as error:
                    raise file.unreadable(error) from None
            # At once, so that a file that cannot be written fails the start rather than the first call.
            shared.save()
        self.app: Starlette = build_app(shared, shared.emulations)

    @property
    def emulations(self) -> tuple[Emulation, ...]:
        """The APIs served, in the order they were composed."""
        return self._shared.emulations

    def emulation(self, kind: type[E]) -> E:
        """The emulation of class `kind` (`emulator.emulation(OpenAIEmulation)`), typed as such: the one of exactly that
        class, else the first of a subclass of it (an API built on another's emulation, as Groq's on OpenAI's, is not
        that API)."""
        for emulation in self._shared.emulations:
            if type(emulation) is kind:
                return emulation
        for emulation in self._shared.emulations:
            if isinstance(emulation, kind):
                return emulation
        served = ", ".join(emulation.name for emulation in self._shared.emulations) or "none"
        raise EmulationError(
            f"this emulator serves no {kind.__name__} (it serves: {served}); is lowtide installed, with its "
            "`lowtide.emulators` entry points?"
        )

    @property
    def rate_limited(self) -> int:
        """How many live calls were answered 429 for being over `rate_limits`."""
        return self._shared.quotas.limited

    @property
    def calls(self) -> Counter[str]:
        """Served API calls by route name (`messages.create`, `openai.batches.create`, ...), failed ones included."""
        return self._shared.calls

    @property
    def faults(self) -> Faults:
        return self._shared.faults

    @property
    def processing_seconds(self) -> float:
        return self._shared.settings.processing_seconds

    @processing_seconds.setter
    def processing_seconds(self, seconds: float) -> None:
        """Batches created from now on take `seconds` (those out keep theirs): how a test makes a batch late."""
        if seconds < 0:
            raise ValueError("processing_seconds cannot be negative")
        self._shared.settings.processing_seconds = seconds

    @processing_seconds.setter
    def processing_seconds(self, value: float) -> None:
        self._shared.settings.processing_seconds = value

    @property
    def cancel_seconds(self) -> float:
        return self._shared.settings.cancel_seconds

    @cancel_seconds.setter
    def cancel_seconds(self, value: float) -> None:
        self._shared.settings.cancel_seconds = value

    def transport(self) -> httpx2.ASGITransport:
        """An in-process transport to this emulator, declaring ASGI spec 2.4.

        In-process there is no connection to lose, and with spec 2.4 Starlette streams a response without the
        task group that listens for a disconnect. Cancelling that group, on CPython 3.11, hides the rest of the
        awaiting coroutines from coverage tools; what the emulator answers is the same either way.

        Calls through this transport wait on the emulator's clock (`delay_after_commit`, `slow`), and an answer
        a `drop_after_commit` fault loses raises `httpx2.RemoteProtocolError`, as a closed connection would.
        """
        return in_process_transport(self.app)

    def http_client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(transport=self.transport(), base_url=self.base_url)

    def reset(self) -> None:
        """Forget batches, uploaded files, call counts, the created counts, faults and the prompt cache (and say so in
        the state file, if there is one)."""
        self._shared.reset()
