"""Azure OpenAI's rules as data, which neutral code asks for by the provider's name: its usage is OpenAI's (the same
Chat Completions shapes), priced through genai-prices' `azure` provider, which lists Azure's own prices and falls back
to OpenAI's for the models it shares. Pure, and light: no SDK."""

from __future__ import annotations

from dataclasses import replace

from lowtide.providers.openai.rules import CONTENT as OPENAI_CONTENT
from lowtide.providers.openai.rules import USAGE as OPENAI_USAGE

__all__ = ["CONTENT", "USAGE"]

CONTENT = OPENAI_CONTENT
"""What Azure's Chat Completions can carry of lowtide's content blocks: OpenAI's."""

USAGE = replace(OPENAI_USAGE, genai_provider="azure", owner="Azure OpenAI", priced_tiers=frozenset())
"""OpenAI's usage shapes, priced at Azure's rates (genai-prices `azure`); Azure has no flex or priority tier."""
