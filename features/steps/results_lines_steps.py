"""Steps for a provider's results files read line by line (features/results_lines.feature): `split_lines`,
`feed_lines` and `read_line` of `lowtide.providers`, over chunks given in the scenario; pure, no emulator."""

from __future__ import annotations

import asyncio
import codecs
import json
from collections.abc import AsyncIterator
from typing import Any, Protocol

from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import ActorError, BatchRequestUnreadable
from lowtide.batching.outcomes import outcome_of
from lowtide.providers import ResultLine, UnreadableLine, feed_lines, read_line, split_lines
from lowtide.providers.groq.dialect import GROQ
from lowtide.providers.openai_compatible.batch import ChatBatchCodec


class Context(StepContext, Protocol):
    chunks: list[bytes]
    split: list[tuple[bytes, bool]]
    handled: list[ResultLine | UnreadableLine]
    counted: int
    failure: ActorError | None
    read: ResultLine | UnreadableLine
    read_outcome: object


async def _downloaded(chunks: list[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        await asyncio.sleep(0)  # each chunk as a download gives it, apart
        yield chunk


def _bytes(text: str) -> bytes:
    # A cell's escapes (\n, \xc3) as the bytes they name: a line cut mid-character is not text.
    return codecs.decode(text, "unicode_escape").encode("latin-1")


def _ids(lines: list[ResultLine | UnreadableLine]) -> list[object]:
    return [line.get("custom_id") if isinstance(line, dict) else line for line in lines]


@given("a download of a results file in the chunks:")
def step_chunks(context: Context) -> None:
    # One chunk a line of the text; the lines' own newlines are the escaped ones.
    context.chunks = [_bytes(part) for part in (context.text or "").split("\n")]


@when("its lines are split")
def step_split(context: Context) -> None:
    async def split() -> list[tuple[bytes, bool]]:
        return [line async for line in split_lines(_downloaded(context.chunks))]

    context.split = context.runner.run(split())


@then('the lines are "{a}" whole, "{b}" whole and "{c}" without its newline')
def step_split_lines(context: Context, a: str, b: str, c: str) -> None:
    got = [(read_line(line, whole=whole), whole) for line, whole in context.split]
    assert [(_ids([line])[0], whole) for line, whole in got] == [(a, True), (b, True), (c, False)], context.split


@when("its lines are fed to a handler")
def step_feed(context: Context) -> None:
    context.handled, context.failure = [], None
    try:
        context.counted = context.runner.run(
            feed_lines(_downloaded(context.chunks), context.handled.append, source="the results of batch b-1")
        )
    except ActorError as exc:
        context.failure = exc


@then('the handler got "{a}", "{b}" and "{c}", and {count:d} lines were counted')
def step_fed(context: Context, a: str, b: str, c: str, count: int) -> None:
    assert context.failure is None, context.failure
    assert _ids(context.handled) == [a, b, c], context.handled
    assert context.counted == count, context.counted


@then('the read fails with {kind:w} saying "{message}"')
def step_feed_failed(context: Context, kind: str, message: str) -> None:
    assert context.failure is not None, "the read did not fail"
    assert type(context.failure).__name__ == kind, context.failure
    assert str(context.failure) == message, str(context.failure)


@then('the handler got only "{a}"')
def step_fed_one(context: Context, a: str) -> None:
    assert _ids(context.handled) == [a], context.handled


@when("the whole line {line} is read")
def step_read(context: Context, line: str) -> None:
    deep = line.removesuffix(" brackets deep")
    data = b"[" * int(deep) + b"]" * int(deep) if deep.isdigit() else _bytes(line)
    context.read = read_line(data, whole=True)


@then('it is unreadable, saying "{reason}"')
def step_unreadable(context: Context, reason: str) -> None:
    found: Any = context.read
    assert isinstance(found, UnreadableLine), found
    assert found.reason == reason, found.reason


@when("the Groq codec's outcome of the line {line} is read")
def step_outcome(context: Context, line: str) -> None:
    context.read_outcome = outcome_of(ChatBatchCodec(GROQ), json.loads(line), "r-1", batch_id="b-1", request_id=None)[0]


@then('it is BatchRequestUnreadable for "{custom_id}" in "{batch_id}", saying "{reason}"')
def step_outcome_unreadable(context: Context, custom_id: str, batch_id: str, reason: str) -> None:
    found = context.read_outcome
    assert isinstance(found, BatchRequestUnreadable), found
    assert (found.custom_id, found.batch_id, found.reason) == (custom_id, batch_id, reason), vars(found)


@then("its raw line is {line}")
def step_outcome_raw(context: Context, line: str) -> None:
    found = context.read_outcome
    assert isinstance(found, BatchRequestUnreadable), found
    assert found.raw_line == line, found.raw_line
