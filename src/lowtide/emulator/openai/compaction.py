"""`POST /v1/responses/compact`: a conversation (its `input`, after the stored response `previous_response_id` names)
compacted into its user messages and one opaque `compaction` item (`CompactedResponse`), checked as a Responses
request is (the model, the input, the context window)."""

from __future__ import annotations

import base64

from lowtide.emulator.core.jsonutil import JsonObject
from lowtide.emulator.openai.checks import check_keys, require_object, required
from lowtide.emulator.openai.content import FileLookup
from lowtide.emulator.openai.ids import derived_hex, new_hex
from lowtide.emulator.openai.model import input_tokens
from lowtide.emulator.openai.responses_params import Conversations, read_responses_call
from lowtide.emulator.openai.stored_responses import input_items

__all__ = ["compact"]

_COMPACT_KEYS = (
    "model", "input", "instructions", "previous_response_id", "prompt_cache_key", "prompt_cache_options",
    "prompt_cache_retention", "service_tier", "image",
)  # fmt: skip
# Body keys the compaction reads as a Responses request does; the others are checked and echoed nowhere.
_READ = ("model", "input", "instructions", "previous_response_id", "prompt_cache_key", "prompt_cache_retention")


def compact(body: object, files: FileLookup, conversations: Conversations, *, now: float) -> JsonObject:
    params = require_object(body)
    check_keys(params, _COMPACT_KEYS)
    required(params, "model")
    asked = {key: params[key] for key in _READ if key in params}
    asked.setdefault("input", [])
    call = read_responses_call(asked, files, conversations=conversations)
    compaction_id = new_hex("cmp_", 48)
    previous = params.get("previous_response_id")
    before = conversations(previous) if isinstance(previous, str) else None
    items = [*(before or []), *input_items(compaction_id, asked["input"])]
    users = [
        item
        for item in (require_object(entry) for entry in items)
        if item.get("type", "message") == "message" and item.get("role") == "user"
    ]
    counted = input_tokens(call.request)
    summary = base64.b64encode(derived_hex("", compaction_id, str(counted), length=64).encode()).decode()
    output_tokens = max(1, counted // 10)
    return {
        "id": compaction_id.replace("cmp_", "resp_", 1),
        "object": "response.compaction",
        "created_at": int(now),
        "output": [*users, {"id": compaction_id, "type": "compaction", "encrypted_content": summary}],
        "usage": {
            "input_tokens": counted,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": counted + output_tokens,
        },
    }
