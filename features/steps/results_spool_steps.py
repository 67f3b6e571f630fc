"""Steps for a run's spool of result lines (`bulk.outputs.spool.LineSpool`): one go writes it, the next reads it back;
what the next go finds, and what it tells the run's report, are what a user's resumed run writes and counts."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Protocol

from _support import world
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.bulk.outputs.spool import LineSpool, Tallied, spool_path

_COUNT = 3
_TALLY = Tallied(True, Decimal("0.25"), Decimal("0.5"), (10, 0, 0, 5))


class Context(StepContext, Protocol):
    spool_place: Path
    spool_run: str
    spool: LineSpool
    spool_found: list[tuple[Tallied, int]]
    spool_puts: dict[int, int]


def _key(index: int) -> str:
    return f"item-{index}"


def _line(index: int, nth: int = 1) -> str:
    return f'{{"custom_id": "{_key(index)}", "go": {nth}}}'


def _indexes(text: str) -> list[int]:
    return [int(part) for part in text.replace(" and ", ", ").split(", ") if part]


def _open(context: Context) -> LineSpool:
    found: list[tuple[Tallied, int]] = []
    context.spool_found = found
    spool = LineSpool.kept(
        _COUNT, context.spool_place, context.spool_run, key_of=_key, found=lambda t, n: found.append((t, n))
    )
    world(context).cleanups.append(spool.close)
    return spool


def _place(context: Context, run_id: str) -> None:
    context.spool_run = run_id
    context.spool_place = spool_path(world(context).path("results"), "results.jsonl", run_id)
    context.spool_puts = {}


@given('a spool kept for run "{run_id}" of {count:d} items, holding the lines of items {indexes}')
def step_spool_written(context: Context, run_id: str, count: int, indexes: str) -> None:
    assert count == _COUNT, count
    _place(context, run_id)
    context.spool_place.parent.mkdir(parents=True, exist_ok=True)
    first = _open(context)
    assert first.path == context.spool_place, first.path
    for index in _indexes(indexes):
        nth = context.spool_puts[index] = context.spool_puts.get(index, 0) + 1
        first.put(index, _line(index, nth), _key(index), _TALLY)
    first.close(keep=True)


@given("a byte of the spool's record of item {index:d} is changed on disk")
def step_spool_damaged(context: Context, index: int) -> None:
    data = bytearray(context.spool_place.read_bytes())
    at = data.index(_line(index).encode())
    data[at + 3] ^= 0x20
    context.spool_place.write_bytes(bytes(data))


@given('a file of the user\'s at the spool\'s place of run "{run_id}" holding "{text}"')
def step_spool_users_file(context: Context, run_id: str, text: str) -> None:
    _place(context, run_id)
    context.spool_place.parent.mkdir(parents=True, exist_ok=True)
    context.spool_place.write_text(text, encoding="utf-8")


@given('the spool\'s folder of run "{run_id}" does not exist')
def step_spool_no_folder(context: Context, run_id: str) -> None:
    _place(context, run_id)
    assert not context.spool_place.parent.exists()


@when("the run's next go opens the spool")
def step_spool_open(context: Context) -> None:
    context.spool = _open(context)


@when("the go spools the line of item {index:d}")
def step_spool_put(context: Context, index: int) -> None:
    context.spool.put(index, _line(index), _key(index), _TALLY)


@then("the next go finds the lines of items {found}, and no line for item {missing}")
def step_spool_finds(context: Context, found: str, missing: str) -> None:
    spool = context.spool
    for index in _indexes(found):
        assert spool.get(index) == _line(index), (index, spool.get(index))
    for index in _indexes(missing):
        assert spool.get(index) is None, (index, spool.get(index))
        assert not spool.holds(index), index
    assert spool.lines(0, _COUNT) == [spool.get(index) for index in range(_COUNT)]


@then("the next go finds the later line of item {index:d}")
def step_spool_later(context: Context, index: int) -> None:
    assert context.spool.get(index) == _line(index, 2), context.spool.get(index)


@then("the report is given {count:d} success from the spool")
@then("the report is given {count:d} successes from the spool")
def step_spool_report(context: Context, count: int) -> None:
    net: dict[Tallied, int] = {}
    for tally, times in context.spool_found:
        net[tally] = net.get(tally, 0) + times
    assert {tally: times for tally, times in net.items() if times} == {_TALLY: count}, context.spool_found


@then("the spool file ends after the record of item {index:d}")
def step_spool_cut(context: Context, index: int) -> None:
    data = context.spool_place.read_bytes()
    assert data.endswith(_line(index).encode()), data[-80:]


@then('the user\'s file still holds "{text}"')
def step_spool_left_alone(context: Context, text: str) -> None:
    assert context.spool.path is None, context.spool.path
    assert context.spool_place.read_text(encoding="utf-8") == text


@then("the spool kept no file")
def step_spool_no_file(context: Context) -> None:
    assert context.spool.path is None, context.spool.path
    assert not context.spool_place.parent.exists()
