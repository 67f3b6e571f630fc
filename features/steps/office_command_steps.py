"""Steps for `lowtide run` over office files, stopped and resumed (features/office_command_line.feature): what the
API was sent, seen from the emulator's side, and what the resumed command converted."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from _office_files import count_conversions
from _support import World, world
from step_context import Context, then, when

from lowtide.bulk.inputs.files import file_block

_ROWS = ("report.docx", "tides.xlsx", "briefing.pptx", "page.html")
"""The file of each row of files.csv, in order."""


def _documents(w: World) -> list[tuple[str, str]]:
    """(title, text) of each document the API was sent in a batch, in the order the batches were created."""
    found: list[tuple[str, str]] = []
    for batch in w.emu.anthropic.batches.oldest_first():
        for _, params in batch.requests:
            for message in params["messages"]:
                content: Any = message["content"]
                for block in content if isinstance(content, list) else []:
                    if block.get("type") == "document":
                        found.append((str(block["title"]), str(block["source"]["data"])))
    return found


def _sent_first(w: World) -> list[str]:
    """The files of the rows the first go sent (noted the first time it is asked, before the command resumed)."""
    noted: list[list[str]] = w.witnessed.setdefault("office files sent first", [])
    if not noted:
        sent = [title for title, _ in _documents(w)] or _answered(w)
        assert 0 < len(sent) < len(_ROWS), f"the first go should send some rows and not others; it sent {sent}"
        noted.append(sent)
        w.witnessed["office batches first"] = [w.emu.created_batches]
    return noted[0]


def _answered(w: World) -> list[str]:
    """The files of the rows a live first go answered, by the ids of its result lines (each row's id is its file's
    stem): a live run sends no batch."""
    out = w.path("out.jsonl")
    if not out.exists():
        return []
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line.strip()]
    ids = [line["id"] for line in lines if line["status"] == "succeeded"]
    return [name for name in _ROWS if Path(name).stem in ids]


def _unsent_first(w: World) -> list[str]:
    sent = _sent_first(w)
    return [name for name in _ROWS if name not in sent]


def _converted_text(w: World, name: str) -> str:
    with contextlib.chdir(w.path("")):
        return str(file_block(name, citations=False)["source"]["data"])


@when("the conversions of the next command are counted, nothing converted before kept")
def step_count(context: Context) -> None:
    w = world(context)
    _sent_first(w)
    counted: dict[str, int] = {}
    w.witnessed["office conversions"] = [counted]
    w.cleanups.append(count_conversions(counted))


@then("the command converted only the files of the {count:d} rows it had not sent")
def step_converted_unsent(context: Context, count: int) -> None:
    w = world(context)
    unsent = _unsent_first(w)
    assert len(unsent) == count, unsent
    wanted = {Path(name).suffix: 1 for name in unsent}
    [counted] = w.witnessed["office conversions"]
    assert counted == wanted, f"converted {counted}; sent before the resume: {_sent_first(w)}"


@then("the API was sent each row's file once, as the text it converts to, titled with the file's name")
def step_sent_once(context: Context) -> None:
    w = world(context)
    sent = _documents(w)
    assert sorted(title for title, _ in sent) == sorted(_ROWS), sent
    for title, text in sent:
        assert text == _converted_text(w, title), f"{title} was sent as:\n{text}"


@when("the file of the first row sent is deleted, and the file of the second is damaged")
def step_sent_changed(context: Context) -> None:
    w = world(context)
    sent = _sent_first(w)
    assert len(sent) >= 2, sent
    w.path(sent[0]).unlink()
    w.path(sent[1]).write_bytes(b"PK\x03\x04 cut short")


@when("the file of the first row not sent is deleted")
def step_unsent_deleted(context: Context) -> None:
    w = world(context)
    w.path(_unsent_first(w)[0]).unlink()


@then("the command printed on stderr that file of the first row not sent does not exist")
def step_unsent_refused(context: Context) -> None:
    w = world(context)
    name = _unsent_first(w)[0]
    line = _ROWS.index(name) + 2  # (files.csv's header is its line 1)
    wanted = f"line {line}: file {name!r} does not exist (looked for {w.path(name)})"
    err = w.value["err"]
    assert wanted in err, f"{wanted!r} not in:\n{err}"


@then("the API received no more batches")
def step_no_more(context: Context) -> None:
    w = world(context)
    [before] = w.witnessed["office batches first"]
    assert w.emu.created_batches == before, (before, w.emu.created_batches)


@then("the command printed on stderr that the line of the first row not sent names a file that does not exist")
def step_unsent_line_refused(context: Context) -> None:
    w = world(context)
    name = _unsent_first(w)[0]
    wanted = f"line {_ROWS.index(name) + 1}: file {name!r} does not exist (looked for {w.path(name)})"
    err = w.value["err"]
    assert wanted in err, f"{wanted!r} not in:\n{err}"
    assert "nothing was sent" in err or "lowtide: files.jsonl" in err, err


@then("the API was sent each row's file once, titled with the file's name")
def step_sent_once_titled(context: Context) -> None:
    sent = _documents(world(context))
    assert sorted(title for title, _ in sent) == sorted(_ROWS), sent


@then("each line of out.jsonl names its row's file")
def step_lines_name_files(context: Context) -> None:
    w = world(context)
    lines = [json.loads(line) for line in w.path("out.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    named = {line["id"]: line.get("file") for line in lines}
    assert named == {Path(name).stem: name for name in _ROWS}, lines
