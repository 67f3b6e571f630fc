"""An emulator on a loopback socket for one scenario, reached by an SDK through its own base-URL variable alone (the
Groq and Together emulator scenarios): served on the scenario's manual clock, restarted from its state file."""

from __future__ import annotations

import tempfile
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path

from _support import World, set_env

from lowtide.core.clock import ManualClock, VirtualClock
from lowtide.emulator import Emulator, RunningServer
from lowtide.emulator.server import serve_in_thread


@dataclass
class SocketEmulator:
    """The emulator of a scenario, on a socket whose address is in `variable` (`GROQ_BASE_URL`, say)."""

    variable: str
    processing_seconds: float = 0.0
    clock: ManualClock | VirtualClock = field(default_factory=ManualClock)
    state_file: str | None = None
    max_request_bytes: int | None = None
    emulator: Emulator | None = None
    server: RunningServer | None = None
    serving: AbstractContextManager[RunningServer] | None = None

    @property
    def url(self) -> str:
        assert self.server is not None, "the emulator is not served"
        return self.server.url

    @property
    def emu(self) -> Emulator:
        assert self.emulator is not None, "the emulator is not served"
        return self.emulator

    def serve(self, w: World) -> None:
        """A new emulator (from the state file, if there is one) on a new socket, its address in `variable`."""
        self.stop()
        self.emulator = Emulator(
            clock=self.clock,
            processing_seconds=self.processing_seconds,
            state_file=self.state_file,
            max_request_bytes=self.max_request_bytes,
        )
        serving = self.serving = serve_in_thread(self.emulator)
        self.server = serving.__enter__()
        w.cleanups.append(lambda: serving.__exit__(None, None, None))
        set_env(w, self.variable, self.server.url)

    def stop(self) -> None:
        if self.serving is not None:
            self.serving.__exit__(None, None, None)
            self.serving = None

    def keep_state(self, w: World) -> None:
        """Serve again, keeping the state in a file of the scenario's."""
        folder = Path(tempfile.mkdtemp(prefix="lowtide-state-", dir=w.path("state").parent))
        self.state_file = str(folder / "state.json")
        self.serve(w)
