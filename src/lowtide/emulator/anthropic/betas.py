"""Beta-only Messages parameters, which the API accepts only when the request's `anthropic-beta` header names the
beta that brings them, and refuses as unknown keys otherwise.

The emulator accepts `context_management` (no edit is ever applied: the response says so), `mcp_servers` (the
emulated model never calls an MCP tool) and `fallbacks` (the emulated model never declines, so no fallback runs).
The other parameters of the SDK's beta Messages (`compaction`, `thread`, `fallback_credit_token`,
`billing_policy`) change what the API answers in ways the emulator does not model, and stay unknown keys.
"""

from __future__ import annotations

from collections.abc import Mapping

from lowtide.emulator.core.errors import invalid_request
from lowtide.emulator.core.jsonutil import JsonObject, as_array, as_object

__all__ = ["BETA_PARAMS", "check_beta_params", "enabled_beta_params", "parse_betas"]

# Each parameter with the `anthropic-beta` values that enable it (the names of the SDK's `AnthropicBetaParam`).
BETA_PARAMS: Mapping[str, frozenset[str]] = {
    "context_management": frozenset({"context-management-2025-06-27", "compact-2026-01-12"}),
    "mcp_servers": frozenset({"mcp-client-2025-04-04", "mcp-client-2025-11-20", "mcp-client-2026-09-15"}),
    "fallbacks": frozenset({"server-side-fallback-2026-06-01", "server-side-fallback-2026-07-01"}),
}
# Context management edits, with the beta each needs.
_EDITS: Mapping[str, str] = {
    "clear_tool_uses_20250919": "context-management-2025-06-27",
    "clear_thinking_20251015": "context-management-2025-06-27",
    "compact_20260112": "compact-2026-01-12",
}
_FALLBACK_KEYS = frozenset({"model", "max_tokens", "thinking", "output_config", "speed"})
_MCP_SERVER_KEYS = frozenset({"type", "name", "url", "authorization_token", "tool_configuration"})


def parse_betas(values: list[str]) -> frozenset[str]:
    """The betas of `anthropic-beta` headers: comma-separated, and the header may be sent more than once."""
    return frozenset(beta.strip() for value in values for beta in value.split(",") if beta.strip())


def enabled_beta_params(betas: frozenset[str]) -> frozenset[str]:
    """The beta-only parameters `betas` enable."""
    return frozenset(param for param, enabling in BETA_PARAMS.items() if enabling & betas)


def check_beta_params(body: JsonObject, betas: frozenset[str]) -> None:
    """The checks the API makes on the beta-only parameters present in `body` (already known to be enabled)."""
    if body.get("context_management") is not None:
        _check_context_management(body["context_management"], betas)
    if "mcp_servers" in body:
        _check_mcp_servers(body["mcp_servers"])
    if body.get("fallbacks") is not None:
        _check_fallbacks(body["fallbacks"])


def _check_context_management(value: object, betas: frozenset[str]) -> None:
    config = as_object(value)
    if config is None:
        raise invalid_request("context_management: Input should be a valid dictionary")
    for key in config:
        if key != "edits":
            raise invalid_request(f"context_management.{key}: Extra inputs are not permitted")
    edits = as_array(config.get("edits", []))
    if edits is None:
        raise invalid_request("context_management.edits: Input should be a valid list")
    for index, item in enumerate(edits):
        where = f"context_management.edits.{index}"
        kind = (as_object(item) or {}).get("type")
        needed = _EDITS.get(kind) if isinstance(kind, str) else None
        if needed is None:
            tags = ", ".join(f"'{tag}'" for tag in _EDITS)
            raise invalid_request(
                f"{where}: Input tag '{kind}' found using 'type' does not match any of the expected tags: {tags}"
            )
        if needed not in betas:
            raise invalid_request(f"{where}: the {kind} edit needs the anthropic-beta header '{needed}'")


def _check_mcp_servers(value: object) -> None:
    servers = as_array(value)
    if servers is None:
        raise invalid_request("mcp_servers: Input should be a valid list")
    names: set[str] = set()
    for index, item in enumerate(servers):
        where = f"mcp_servers.{index}"
        server = as_object(item)
        if server is None:
            raise invalid_request(f"{where}: Input should be a valid dictionary")
        for key in server:
            if key not in _MCP_SERVER_KEYS:
                raise invalid_request(f"{where}.{key}: Extra inputs are not permitted")
        if server.get("type") != "url":
            raise invalid_request(f"{where}.type: Input should be 'url'")
        name, url = server.get("name"), server.get("url")
        if not isinstance(name, str) or not name:
            raise invalid_request(f"{where}.name: Field required")
        if not isinstance(url, str) or not url.startswith(("https://", "http://")):
            raise invalid_request(f"{where}.url: Input should be a valid URL with an http or https scheme")
        if name in names:
            raise invalid_request(f"mcp_servers: MCP server names must be unique; '{name}' is given twice.")
        names.add(name)


def _check_fallbacks(value: object) -> None:
    if value == "default":
        return
    entries = as_array(value)
    if entries is None:
        raise invalid_request("fallbacks: Input should be 'default' or a valid list")
    for index, item in enumerate(entries):
        where = f"fallbacks.{index}"
        entry = as_object(item)
        if entry is None:
            raise invalid_request(f"{where}: Input should be a valid dictionary")
        for key in entry:
            if key not in _FALLBACK_KEYS:
                raise invalid_request(f"{where}.{key}: Extra inputs are not permitted")
        if not isinstance(entry.get("model"), str):
            raise invalid_request(f"{where}.model: Field required")
