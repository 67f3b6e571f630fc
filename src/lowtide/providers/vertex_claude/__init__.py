"""The built-in providers of Claude models on Vertex AI (live: the anthropic SDK's `AsyncAnthropicVertex`, Vertex's
`rawPredict`; batch: a Vertex batch prediction job of Anthropic Messages bodies in Cloud Storage, through google-genai
and google-cloud-storage) and their plugin registration.

`register` is the entry point of the `lowtide.providers` group, as for the other built-ins. Anthropic's request and
answer mapping, parameter rules and usage shape are `providers/anthropic`'s, reused as functions and data; Vertex AI's
project, location, credentials and Cloud Storage are `providers/vertex`'s. The provider classes (and their SDKs,
which the `lowtide[vertex]` extra installs) are imported when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lowtide.core.parameters import LazyCheck
from lowtide.providers.registration import Registration
from lowtide.providers.vertex_claude import rules

if TYPE_CHECKING:
    from lowtide.providers.vertex_claude.batch import VertexClaudeBatchProvider
    from lowtide.providers.vertex_claude.live import VertexClaudeProvider

__all__ = ["VertexClaudeBatchProvider", "VertexClaudeProvider", "register"]

_REGISTRATION = Registration(
    "vertex_claude",
    __name__,
    live="VertexClaudeProvider",
    batch="VertexClaudeBatchProvider",
    usage=rules.USAGE,
    parameters=LazyCheck(f"{__name__}.parameters", "check_parameters"),
    batch_parameters=LazyCheck(f"{__name__}.parameters", "check_batch_parameters"),
    custom_ids=rules.CUSTOM_IDS,
    reads_options_of=("anthropic",),
)
register = _REGISTRATION.register
"""The package's entry point of the `lowtide.providers` group."""
__getattr__ = _REGISTRATION.lent
