"""Conversation turns as both adapters build them for `Actor.run(messages=...)`: lowtide's content blocks, by role."""

from __future__ import annotations

from typing import Any, Literal

__all__ = ["Block", "Role", "append_turn"]

Role = Literal["user", "assistant"]
Block = dict[str, Any]


def append_turn(turns: list[tuple[Role, list[Block]]], role: Role, blocks: list[Block]) -> None:
    """Consecutive turns of one role become one: a conversation alternates user and assistant."""
    if not blocks:
        return
    if turns and turns[-1][0] == role:
        turns[-1][1].extend(blocks)
    else:
        turns.append((role, blocks))
