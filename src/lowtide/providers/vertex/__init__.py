"""The built-in Vertex AI providers for Gemini models (live: `generateContent` on Vertex; batch: a Vertex batch
prediction job over Cloud Storage; both through the official google-genai SDK with `vertexai=True`, the batch's files
through google-cloud-storage) and their plugin registration.

`register` is the entry point of the `lowtide.providers` group, as for the other built-ins. Gemini's request and
answer mapping, parameter rules and usage shape are `providers/gemini`'s, reused as functions and data; what is
Vertex's own (a project and a location, Google Cloud credentials, Cloud Storage) is here. The provider classes (and
their SDKs, which the `lowtide[vertex]` extra installs) are imported when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lowtide.core.parameters import LazyCheck
from lowtide.providers.gemini import rules
from lowtide.providers.registration import Registration

if TYPE_CHECKING:
    from lowtide.providers.vertex.batch import VertexBatchProvider
    from lowtide.providers.vertex.live import VertexProvider
    from lowtide.providers.vertex.options import VertexOptions

__all__ = ["VertexBatchProvider", "VertexOptions", "VertexProvider", "register"]

_REGISTRATION = Registration(
    "vertex",
    __name__,
    live="VertexProvider",
    batch="VertexBatchProvider",
    usage=rules.USAGE,
    parameters=LazyCheck(f"{__name__}.parameters", "check_parameters"),
    batch_parameters=LazyCheck(f"{__name__}.parameters", "check_batch_parameters"),
    lends={"VertexOptions": "options"},
    reads_options_of=("gemini",),
)
register = _REGISTRATION.register
"""The package's entry point of the `lowtide.providers` group."""
__getattr__ = _REGISTRATION.lent
