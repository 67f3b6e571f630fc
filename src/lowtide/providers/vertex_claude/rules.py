"""Claude on Vertex AI's rules as data, pure: its usage (Anthropic's Messages usage, read by genai-prices' Anthropic
extractor) priced at genai-prices' `google` provider's prices for Claude models, Vertex AI's own."""

from __future__ import annotations

import dataclasses

from lowtide.providers.anthropic import rules

__all__ = ["CUSTOM_IDS", "USAGE"]

USAGE = dataclasses.replace(rules.USAGE, genai_provider="google", owner="Vertex AI", extracted_as="anthropic")
"""Anthropic's usage shape at Vertex AI's prices (genai-prices lists Claude models under `google`)."""
CUSTOM_IDS = rules.CUSTOM_IDS
"""A batch line's `custom_id`: Anthropic's rule (Vertex AI's batch of Claude requests takes its bodies as they are)."""
