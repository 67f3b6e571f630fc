"""`FireworksProvider`: one call, one answer, through Fireworks' live Chat Completions with the official fireworks
SDK."""

from __future__ import annotations

from fireworks import AsyncFireworks

from lowtide.providers.fireworks.dialect import FIREWORKS
from lowtide.providers.fireworks.sdk import FIREWORKS_SDK
from lowtide.providers.openai_compatible.live import ChatProvider

__all__ = ["FireworksProvider"]


class FireworksProvider(ChatProvider[AsyncFireworks]):
    """Fireworks' live Chat Completions through the async fireworks client."""

    dialect = FIREWORKS
    sdk = FIREWORKS_SDK
