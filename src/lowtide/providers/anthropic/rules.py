"""Anthropic's rules as data, which neutral code asks for by the provider's name (`register` hands them to the
registry): how the Messages API reports usage, for genai-prices; what it takes as a custom id; which errors of a
batch request may succeed if sent again, and which of lowtide's API errors each is. Pure, and light: no SDK."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, cast

from lowtide.core.custom_ids import CustomIdRule
from lowtide.cost.pricing import PROBE_TOKENS, UsageShape
from lowtide.errors import (
    APIError,
    AuthenticationError,
    InvalidRequestError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
)
from lowtide.messages.content import ContentRules
from lowtide.types import Usage

__all__ = ["CONTENT", "CUSTOM_IDS", "ERROR_KINDS", "RETRYABLE_ERROR_TYPES", "USAGE"]

CONTENT = ContentRules(
    provider="Anthropic",
    cites_documents=True,
    image_types=frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"}),
)
"""What the Messages API takes that lowtide checks before sending its blocks as they are: images of these four types
(its vision guide); documents may be cited."""

CUSTOM_IDS = CustomIdRule(re.compile(r"^[a-zA-Z0-9_-]{1,64}$"), "1 to 64 letters, digits, '-' or '_'")
"""The Message Batches API's rule for a custom id."""

RETRYABLE_ERROR_TYPES = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"})
"""Error types after which the same request may succeed if sent again."""

ERROR_KINDS: Mapping[str, type[APIError]] = {
    "invalid_request_error": InvalidRequestError,
    "authentication_error": AuthenticationError,
    "permission_error": PermissionDeniedError,
    "not_found_error": NotFoundError,
    "rate_limit_error": RateLimitError,
    "overloaded_error": OverloadedError,
    "api_error": ServerError,
    "timeout_error": ServerError,
}
"""The API's error types as lowtide's API errors (a batch request's `BatchRequestErrored.kind`)."""

_ZERO = {"input_tokens": 0, "output_tokens": 0}


def _fields(raw: Mapping[str, Any]) -> dict[str, int]:
    """The usage fields genai-prices' Anthropic extractor reads, as the Messages API reports them."""
    creation = raw.get("cache_creation")
    one_hour = int(cast("Mapping[str, Any]", creation).get("ephemeral_1h_input_tokens") or 0) if creation else 0
    return {
        "input_tokens": int(raw.get("input_tokens") or 0),
        "output_tokens": int(raw.get("output_tokens") or 0),
        "cache_read_input_tokens": int(raw.get("cache_read_input_tokens") or 0),
        # 1 hour cache writes are priced apart from the 5 minute ones they are counted with.
        "cache_creation_input_tokens": int(raw.get("cache_creation_input_tokens") or 0) - one_hour,
        "ephemeral_1h_input_tokens": one_hour,
    }


def _from_neutral(usage: Usage) -> dict[str, object]:
    return usage.model_dump()


USAGE = UsageShape(
    genai_provider="anthropic",
    owner="Anthropic",
    fields=_fields,
    probes=(
        ("input_tokens", {**_ZERO, "input_tokens": PROBE_TOKENS}),
        ("output_tokens", {**_ZERO, "output_tokens": PROBE_TOKENS}),
        ("cache_read_input_tokens", {**_ZERO, "cache_read_input_tokens": PROBE_TOKENS}),
        ("cache_creation_input_tokens", {**_ZERO, "cache_creation_input_tokens": PROBE_TOKENS}),
        (
            "ephemeral_1h_input_tokens",
            {
                **_ZERO,
                "cache_creation_input_tokens": PROBE_TOKENS,
                "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": PROBE_TOKENS},
            },
        ),
    ),
    from_neutral=_from_neutral,
)
"""How the Messages API reports usage, for genai-prices."""
