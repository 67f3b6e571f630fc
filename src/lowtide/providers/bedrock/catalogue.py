"""Bedrock's own data on the foundation models lowtide's emulator serves: each model's `inputModalities` as Bedrock's
ListFoundationModels gives them (which models read images is Bedrock's word, not a list of lowtide's). The emulated
control plane answers from it; the Bedrock provider asks the real one (`models.check_images`)."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["DEFAULT_MODALITIES", "INPUT_MODALITIES", "input_modalities"]

INPUT_MODALITIES: Mapping[str, tuple[str, ...]] = {
    "anthropic.claude-3-haiku-20240307-v1:0": ("TEXT", "IMAGE"),
    "anthropic.claude-3-5-haiku-20241022-v1:0": ("TEXT",),
    "anthropic.claude-haiku-4-5-20251001-v1:0": ("TEXT", "IMAGE"),
    "anthropic.claude-sonnet-4-5-20250929-v1:0": ("TEXT", "IMAGE"),
    "anthropic.claude-opus-4-1-20250805-v1:0": ("TEXT", "IMAGE"),
    "amazon.nova-micro-v1:0": ("TEXT",),
    "amazon.nova-lite-v1:0": ("TEXT", "IMAGE", "VIDEO"),
    "amazon.nova-pro-v1:0": ("TEXT", "IMAGE", "VIDEO"),
    "meta.llama3-1-8b-instruct-v1:0": ("TEXT",),
}
"""Each foundation model's `inputModalities`, as Bedrock lists them."""
DEFAULT_MODALITIES: tuple[str, ...] = ("TEXT",)
"""What a model outside the table (one an emulator was given by name) is listed as taking."""


def input_modalities(model: str) -> tuple[str, ...]:
    """The `inputModalities` of `model`, a foundation model's id or a cross-region profile's (`us.` + its id)."""
    found = INPUT_MODALITIES.get(model)
    if found is None:
        found = INPUT_MODALITIES.get(model.partition(".")[2], DEFAULT_MODALITIES)
    return found
