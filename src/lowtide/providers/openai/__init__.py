"""The built-in OpenAI providers (live: the Responses and Chat Completions APIs; batch: the Batch API over either)
and their plugin registration.

`register` is the entry point of the `lowtide.providers` group, as for the Anthropic built-ins. The provider classes
(and the OpenAI SDK with them) are imported when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lowtide.providers.openai import rules
from lowtide.providers.registration import Registration

if TYPE_CHECKING:
    from lowtide.providers.openai.batch import OpenAIBatchProvider
    from lowtide.providers.openai.live import OpenAIProvider
    from lowtide.providers.openai.options import OpenAIOptions

__all__ = ["OpenAIBatchProvider", "OpenAIOptions", "OpenAIProvider", "register"]

_REGISTRATION = Registration.built_in("openai", __name__, "OpenAI", rules.USAGE, batch_check=True)
register = _REGISTRATION.register
"""The package's entry point of the `lowtide.providers` group."""
__getattr__ = _REGISTRATION.lent
