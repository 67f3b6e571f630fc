"""What a dry run says of the files a run converts to text (Word, Excel, PowerPoint, HTML): each one's kind and the
tokens its text costs, so that a user sees what a converted file will weigh before anything is sent."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lowtide.bulk.inputs.files import FileInfo

__all__ = ["ConvertedFile", "converted_files", "converted_json", "converted_lines"]


@dataclass(frozen=True)
class ConvertedFile:
    file: str
    kind: str
    """What it is: "a Word document", "an Excel workbook", "a PowerPoint presentation", "an HTML page"."""
    tokens: int
    """Its converted text's tokens, estimated high (as budgets count them)."""


def converted_files(files: Mapping[Path, FileInfo]) -> list[ConvertedFile]:
    """The converted files among a run's checked files, in the order the jobs first named them."""
    return [
        ConvertedFile(str(path), info.converted_from, info.sent_tokens)
        for path, info in files.items()
        if info.converted_from is not None
    ]


def converted_lines(converted: Sequence[ConvertedFile], indent: str = "") -> list[str]:
    if not converted:
        return []
    lines = [f"{indent}{len(converted)} file(s) sent as the text they convert to:"]
    lines += [f"{indent}  {c.file}: {c.kind}, about {c.tokens:,} tokens" for c in converted]
    return lines


def converted_json(converted: Sequence[ConvertedFile]) -> list[dict[str, object]]:
    return [{"file": c.file, "kind": c.kind, "tokens": c.tokens} for c in converted]
