"""The checks the API makes on a Messages request's conversation: its messages and their content blocks (tool uses
answered by tool results in the next turn), its system prompt, and its cache breakpoints. Pure functions that raise
`ApiError` in the API's style (`validation.py` checks the rest of a request)."""

from __future__ import annotations

from lowtide.emulator.core.documents import check_document_block, check_image_block
from lowtide.emulator.core.errors import invalid_request
from lowtide.emulator.core.jsonutil import JsonObject, as_array, as_object

__all__ = ["MAX_CACHE_BREAKPOINTS", "check_breakpoint_count", "check_cache_control", "check_messages", "check_system"]

MAX_CACHE_BREAKPOINTS = 4


_BLOCK_TYPES = frozenset(
    {
        "text",
        "image",
        "document",
        "search_result",
        "tool_use",
        "tool_result",
        "thinking",
        "redacted_thinking",
        "server_tool_use",
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "tool_search_tool_result",
        "container_upload",
    }
)


def check_messages(value: object) -> None:
    messages = as_array(value)
    if messages is None:
        raise invalid_request("messages: Input should be a valid list")
    if not messages:
        raise invalid_request("messages: at least one message is required")
    # Tool use ids of the previous assistant turn, which the next user turn must answer, one result each.
    pending: list[str] = []
    pending_at = 0
    for index, item in enumerate(messages):
        where = f"messages.{index}"
        message = as_object(item)
        if message is None:
            raise invalid_request(f"{where}: Input should be a valid dictionary")
        for key in message:
            if key not in ("role", "content"):
                raise invalid_request(f"{where}.{key}: Extra inputs are not permitted")
        role = message.get("role")
        if role not in ("user", "assistant"):
            raise invalid_request(f"{where}.role: Input should be 'user' or 'assistant'")
        if "content" not in message:
            raise invalid_request(f"{where}.content: Field required")
        final_assistant = role == "assistant" and index == len(messages) - 1
        blocks = _check_content(message["content"], where, may_be_empty=final_assistant)
        results = [str(block.get("tool_use_id")) for block in blocks if block.get("type") == "tool_result"]
        if role == "user":
            unexpected = [tool_id for tool_id in results if tool_id not in pending]
            if unexpected:
                raise invalid_request(
                    f"{where}.content: unexpected `tool_use_id` found in `tool_result` blocks: "
                    f"{', '.join(unexpected)}. Each `tool_result` block must have a corresponding `tool_use` "
                    "block in the previous message."
                )
        unanswered = [tool_id for tool_id in pending if tool_id not in results]
        if unanswered:
            raise invalid_request(
                f"messages.{pending_at}: `tool_use` ids were found without `tool_result` blocks immediately "
                f"after: {', '.join(unanswered)}. Each `tool_use` block must have a corresponding `tool_result` "
                "block in the next message."
            )
        pending = [str(block.get("id")) for block in blocks if block.get("type") == "tool_use"]
        pending_at = index


def _check_content(value: object, where: str, *, may_be_empty: bool) -> list[JsonObject]:
    empty = f"{where}: all messages must have non-empty content except for the optional final assistant message"
    if isinstance(value, str):
        if not value and not may_be_empty:
            raise invalid_request(empty)
        return [{"type": "text", "text": value}]
    items = as_array(value)
    if items is None:
        raise invalid_request(f"{where}.content: Input should be a valid string or a valid list")
    if not items and not may_be_empty:
        raise invalid_request(empty)
    return [_check_block(item, f"{where}.content.{index}") for index, item in enumerate(items)]


def _check_block(item: object, where: str) -> JsonObject:
    block = as_object(item)
    if block is None:
        raise invalid_request(f"{where}: Input should be a valid dictionary")
    kind = block.get("type")
    if not isinstance(kind, str):
        raise invalid_request(f"{where}.type: Field required")
    if kind not in _BLOCK_TYPES:
        raise invalid_request(f"{where}: Input tag '{kind}' found using 'type' does not match any of the expected tags")
    if kind == "text":
        _check_text_block(block, where)
    elif kind == "tool_use":
        if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str):
            raise invalid_request(f"{where}.tool_use: `id` and `name` are required strings")
        if as_object(block.get("input")) is None:
            raise invalid_request(f"{where}.tool_use.input: Input should be a valid dictionary")
    elif kind == "image":
        check_image_block(block, where)
    elif kind == "document":
        check_document_block(block, where)
    elif kind == "tool_result":
        if not isinstance(block.get("tool_use_id"), str):
            raise invalid_request(f"{where}.tool_result.tool_use_id: Field required")
        _check_tool_result_content(block.get("content"), f"{where}.tool_result.content")
    check_cache_control(block.get("cache_control"), f"{where}.cache_control")
    return block


def _check_tool_result_content(value: object, where: str) -> None:
    """Images and documents inside a tool result are checked as they are at the top of a message."""
    for index, item in enumerate(as_array(value) or []):
        block = as_object(item) or {}
        if block.get("type") == "image":
            check_image_block(block, f"{where}.{index}")
        elif block.get("type") == "document":
            check_document_block(block, f"{where}.{index}")


def _check_text_block(block: JsonObject, where: str) -> None:
    text = block.get("text")
    if not isinstance(text, str):
        raise invalid_request(f"{where}.text: Input should be a valid string")
    if not text:
        raise invalid_request(f"{where.split('.')[0]}: text content blocks must be non-empty")


def check_system(value: object) -> None:
    if value is None or isinstance(value, str):
        return
    blocks = as_array(value)
    if blocks is None:
        raise invalid_request("system: Input should be a valid string or a valid list")
    for index, item in enumerate(blocks):
        where = f"system.{index}"
        block = as_object(item)
        if block is None or block.get("type") != "text":
            raise invalid_request(f"{where}: system blocks must be text blocks")
        _check_text_block(block, where)
        check_cache_control(block.get("cache_control"), f"{where}.cache_control")


def check_cache_control(value: object, where: str) -> None:
    if value is None:
        return
    control = as_object(value)
    if control is None or control.get("type") != "ephemeral":
        raise invalid_request(f"{where}.type: Input should be 'ephemeral'")
    if control.get("ttl") not in (None, "5m", "1h"):
        raise invalid_request(f"{where}.ttl: Input should be '5m' or '1h'")


def check_breakpoint_count(body: JsonObject) -> None:
    found = int(body.get("cache_control") is not None)
    for tool in as_array(body.get("tools")) or []:
        found += tool.get("cache_control") is not None
    for block in as_array(body.get("system")) or []:
        found += block.get("cache_control") is not None
    for message in as_array(body.get("messages")) or []:
        for block in as_array(message.get("content")) or []:
            found += block.get("cache_control") is not None
    if found > MAX_CACHE_BREAKPOINTS:
        raise invalid_request(
            f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found {found}."
        )
