"""A third-party provider whose module takes long to import, as a provider's SDK does on a loaded machine (seconds):
registered by name (`LazyProvider`), it is imported on its actor's first call. Importing it sleeps LOAD_SECONDS."""

from __future__ import annotations

import time
from typing import ClassVar

from lowtide_echo_plugin import EchoProvider

LOAD_SECONDS = 4.0
time.sleep(LOAD_SECONDS)


class SlowLoadingProvider(EchoProvider):
    """The echo provider, behind a slow import."""

    name: ClassVar[str] = "slowload"
