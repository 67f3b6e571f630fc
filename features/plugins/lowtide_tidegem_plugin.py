"""A batch provider plugin, "tidegem": lowtide's fake batch API (`lowtide.testing`, in the process's memory, on the real
clock) behind Gemini's wire, so that `lowtide serve` can be run as a process in front of it and driven by the
google-genai SDK over a socket (`robot/serve_gemini.robot`) before the Gemini batch provider is installed.

Its entry point is `lowtide_tidegem_plugin:register`.
"""

from __future__ import annotations

from collections.abc import Sequence

from lowtide import ProviderRegistry, SystemClock
from lowtide.providers import Wire
from lowtide.providers.gemini.serving import GEMINI_WIRES
from lowtide.testing import FakeBatchAPI, FakeBatchProvider


class TidegemProvider(FakeBatchProvider):
    """The fake batch provider, serving Gemini's `generateContent`."""

    def serving_wires(self) -> Sequence[Wire]:
        return GEMINI_WIRES


def register(registry: ProviderRegistry) -> None:
    api = FakeBatchAPI(SystemClock(), processing_seconds=0.2, respond=lambda request: f"tidegem: {request.prompt}")
    TidegemProvider.register(registry, api, name="tidegem")
