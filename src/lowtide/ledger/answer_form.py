"""The form a stored answer takes in the ledger's `results` and back: its text kept once, in its blocks.

An answer's `text` is its text blocks' texts joined, as every provider shapes it; stored beside the blocks it was
most of a result's bytes a second time, written to every store's table and, on PostgreSQL, to its WAL and the sums
trigger's transition table as well. What is stored leaves it out whenever the blocks give it back exactly, and what is
read puts it back, so that every reader (the engine, a bulk run, the dashboard, a copy) sees the answer it always saw;
an answer stored with its text (by an earlier lowtide, or one whose text is not its blocks') reads as it was stored.
"""

from __future__ import annotations

from typing import Any, cast

from lowtide.core.exact_json import read_exactly

__all__ = ["narrowed", "stored_answer"]


def narrowed(answer: object) -> object:
    """`answer` (a response as JSON) as it is stored: without its `text` when `joined_text` of its blocks gives that
    text back, else as it is (a copy when narrowed; `answer` itself is never changed)."""
    if type(answer) is not dict:
        return answer
    fields = cast("dict[str, object]", answer)
    text, content = fields.get("text"), fields.get("content")
    if type(text) is not str or type(content) is not list or joined_text(cast("list[object]", content)) != text:
        return fields
    return {name: value for name, value in fields.items() if name != "text"}


def stored_answer(stored: str) -> dict[str, Any]:
    """A stored answer's JSON as the response it stands for: its `text` put back from its blocks when it was left out
    (`narrowed`), its keys in the order the stored JSON of an earlier lowtide gave them (sorted). Read by orjson
    where it reads the answer exactly (`read_exactly`: every reader of a batch's or a run's answers reads thousands)."""
    data: dict[str, Any] = cast("dict[str, Any]", read_exactly(stored.encode())[0])
    if "text" in data:
        return data
    content = data.get("content")
    if type(content) is not list:
        return data  # (not an answer `narrowed` made: read as it is)
    data["text"] = joined_text(cast("list[object]", content))
    return dict(sorted(data.items()))


def joined_text(content: list[object]) -> str:
    """The texts of an answer's text blocks, joined: its `text`, as every provider makes it."""
    if len(content) == 1:  # nearly every answer: one text block
        block = content[0]
        if type(block) is dict:
            fields = cast("dict[str, object]", block)
            text = fields.get("text")
            if type(text) is str and fields.get("type") == "text":
                return text
    texts: list[str] = []
    for block in content:
        text = _block_text(block)
        if text is not None:
            texts.append(text)
    return "".join(texts)


def _block_text(block: object) -> str | None:
    if type(block) is not dict:
        return None
    fields = cast("dict[str, object]", block)
    text = fields.get("text")
    return text if fields.get("type") == "text" and type(text) is str else None
