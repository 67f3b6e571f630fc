"""The Groq half of the emulator's state and operations: OpenAI's files, batches and chat answers (`CompatBackend`)
with Groq's models, its body keys, its completion windows (24h to 7d) and its batch listing (every batch, one page).
Raises `OpenAIError` (Groq's error bodies are OpenAI's)."""

from __future__ import annotations

from lowtide.core.clock import Clock
from lowtide.emulator.core.cache import PromptCache
from lowtide.emulator.core.faults import Faults
from lowtide.emulator.core.jsonutil import JsonObject
from lowtide.emulator.core.settings import Settings
from lowtide.emulator.groq.catalogue import known, page, retrieve
from lowtide.emulator.openai.checks import require_object, required
from lowtide.emulator.openai.compat import CompatBackend, window_seconds_of
from lowtide.emulator.openai.errors import OpenAIError, invalid_value

__all__ = ["GroqBackend"]

_ENDPOINTS = ("/v1/chat/completions",)
_OWN_KEYS = {
    "reasoning_format": ("hidden", "raw", "parsed"),
    "reasoning_effort": ("none", "default", "low", "medium", "high"),
    "service_tier": ("auto", "on_demand", "flex", "performance"),
    "include_reasoning": (),
}


class GroqBackend(CompatBackend):
    """Files, batches and the exactly-once counters of the emulated Groq account."""

    def __init__(self, clock: Clock, settings: Settings, faults: Faults, cache: PromptCache) -> None:
        super().__init__(clock, settings, faults, cache, known=known, own_keys=_OWN_KEYS)

    def create_batch(self, body: object) -> JsonObject:
        params = require_object(body)
        endpoint = required(params, "endpoint")
        window = required(params, "completion_window")
        if endpoint not in _ENDPOINTS:
            raise invalid_value("endpoint", endpoint, _ENDPOINTS)
        seconds = window_seconds_of(window, least_hours=24, most_hours=7 * 24)
        if seconds is None:
            raise OpenAIError(
                400,
                f"Invalid 'completion_window': {window!r}. Durations from 24h to 7d are supported.",
                param="completion_window",
                code="invalid_value",
            )
        return self.create_compat_batch(params, window_seconds=seconds)

    def retrieve_batch(self, batch_id: str) -> JsonObject:
        return self.shown(super().retrieve_batch(batch_id))

    def cancel_batch(self, batch_id: str) -> JsonObject:
        return self.shown(super().cancel_batch(batch_id))

    def list_batches(self, *, after: str | None = None, limit: str | None = None) -> JsonObject:
        """Every batch, newest first, in one answer (Groq's listing takes no page)."""
        batches = list(reversed(self.batches.oldest_first()))
        return {"object": "list", "data": [self.retrieve_batch(batch.id) for batch in batches]}

    def list_models(self) -> JsonObject:
        return page()

    def retrieve_model(self, model_id: str) -> JsonObject:
        return retrieve(model_id)
