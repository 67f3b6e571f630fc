"""Steps for `lowtide run`, `lowtide retry` and `lowtide status RUN` against the emulator on a socket."""

from __future__ import annotations

import ast
import csv
import json
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml
from _support import API_KEY, emulated_reply_to, run_cli, set_env, world
from step_context import Context, given, then, when

from lowtide.bulk.outputs import spool as spools
from lowtide.bulk.outputs.spool import LineSpool, spool_path


@given('an actor file "{name}" for that API, with the key in "{variable}":')
def step_actor_file(context: Context, name: str, variable: str) -> None:
    w = world(context)
    [url] = w.witnessed["server url"]
    set_env(w, variable, API_KEY)
    settings = {**yaml.safe_load(context.text), "base_url": url, "api_key_env": variable}
    w.path(name).write_text(yaml.safe_dump(settings), encoding="utf-8")


def _reviews(context: Context, name: str, count: int, errored: int | None = None, expired: int | None = None) -> None:
    marks = {errored: " [[emulator:errored]]", expired: " [[emulator:expired]]"}
    with world(context).path(name).open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["id", "review"])
        for n in range(count):
            writer.writerow([f"r{n}", f"Review {n}" + marks.get(n, "")])


@given(
    'a CSV file "{name}" of {count:d} reviews, with review {errored:d} ending as errored'
    " and review {expired:d} as expired"
)
def step_csv_errored_expired(context: Context, name: str, count: int, errored: int, expired: int) -> None:
    _reviews(context, name, count, errored, expired)


@given('a CSV file "{name}" of {count:d} reviews, with review {errored:d} ending as errored')
def step_csv_errored(context: Context, name: str, count: int, errored: int) -> None:
    _reviews(context, name, count, errored)


@given('a CSV file "{name}" of {count:d} reviews')
def step_csv(context: Context, name: str, count: int) -> None:
    _reviews(context, name, count)


@given('a JSONL file "{name}" of {count:d} prompts')
def step_jsonl(context: Context, name: str, count: int) -> None:
    lines = [json.dumps({"prompt": f"Prompt {n}"}) for n in range(count)]
    world(context).path(name).write_text("\n".join(lines) + "\n", encoding="utf-8")


@given('a JSONL file "{name}" of 1 prompt of {size:d} bytes')
def step_jsonl_big(context: Context, name: str, size: int) -> None:
    prompt = ("tide " * (size // 5 + 1))[:size]
    world(context).path(name).write_text(json.dumps({"prompt": prompt}) + "\n", encoding="utf-8")


@given('the file "{name}" in the scenario\'s folder holds the bytes {literal}')
def step_file_bytes(context: Context, name: str, literal: str) -> None:
    world(context).path(name).write_bytes(ast.literal_eval(literal))


@given('the file "{name}" in the scenario\'s folder holds:')
def step_file_text(context: Context, name: str) -> None:
    path = world(context).path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(context.text + "\n", encoding="utf-8")


@when('"{command}" runs in the scenario\'s folder')
def step_cli_in_folder(context: Context, command: str) -> None:
    w = world(context)
    run_cli(w, command, ledger=w.ledger_path, cwd=w.path("actor.yaml").parent)


@given("the jobs each run checks are counted")
def step_count_checked_jobs(context: Context) -> None:
    """Each go's count of the jobs it checks, and of its jobs: checked whole (`check_batch_jobs`), or only those still
    to send (`check_jobs_to_send`), as `BulkRun`'s recording half calls them."""
    from lowtide.bulk.running import recording

    w = world(context)
    counts: list[tuple[int, int]] = w.witnessed.setdefault("jobs checked", [])
    checks: dict[str, Any] = recording.__dict__

    def counted(name: str, checked: Callable[[Any], int]) -> None:
        real = checks[name]  # a name no longer called there fails here, not as a count of nothing later

        def counting(run: Any, *args: Any, **kwargs: Any) -> Any:
            counts.append((checked(args), len(run.jobs)))
            return real(run, *args, **kwargs)

        checks[name] = counting
        w.cleanups.append(lambda: checks.__setitem__(name, real))

    counted("check_batch_jobs", lambda args: -1)  # every job
    counted("check_jobs_to_send", lambda args: len(args[2]))  # (files, plain, indexes)


@given('a JSONL file "{name}" of {count:d} prompts, prompt {named:d} with the id "{item_id}"')
def step_jsonl_one_id(context: Context, name: str, count: int, named: int, item_id: str) -> None:
    lines = [json.dumps({"prompt": f"Prompt {n}", **({"id": item_id} if n == named else {})}) for n in range(count)]
    world(context).path(name).write_text("\n".join(lines) + "\n", encoding="utf-8")


@given("the lines each run parses are counted")
def step_count_parsed_lines(context: Context) -> None:
    """Each JSONL line parsed (its JSON read: `parser._json_object`, which every way of reading a line calls), counted
    from one `Then the run parsed` to the next."""
    from lowtide.bulk.inputs import parser

    w = world(context)
    parsed: list[int] = w.witnessed.setdefault("lines parsed", [0])
    functions: dict[str, Any] = parser.__dict__
    real = functions["_json_object"]

    def counting(text: str) -> Any:
        parsed[0] += 1
        return real(text)

    functions["_json_object"] = counting
    w.cleanups.append(lambda: functions.__setitem__("_json_object", real))


@then("the run parsed {count:d} lines of its input")
def step_parsed_lines(context: Context, count: int) -> None:
    parsed: list[int] = world(context).witnessed["lines parsed"]
    assert parsed[0] == count, parsed
    parsed[0] = 0


@then('line {number:d} of "{name}" holds the id "{item_id}", and no other line an id')
def step_out_one_id(context: Context, number: int, name: str, item_id: str) -> None:
    ids = [line["id"] for line in _lines(context, name)]
    assert ids == [item_id if n == number else None for n in range(1, len(ids) + 1)], ids


@then("the run checked {checked:d} of its {count:d} jobs")
def step_checked_jobs(context: Context, checked: int, count: int) -> None:
    counts = [(of if n < 0 else n, of) for n, of in world(context).witnessed["jobs checked"]]
    assert counts, counts
    assert counts[-1] == (checked, count), counts


@then("the run checked fewer than {most:d} of its {count:d} jobs")
def step_checked_fewer(context: Context, most: int, count: int) -> None:
    counts = [(of if n < 0 else n, of) for n, of in world(context).witnessed["jobs checked"]]
    assert counts, counts
    assert counts[-1][0] < most, counts
    assert counts[-1][1] == count, counts


def _lines(context: Context, name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in world(context).path(name).read_text(encoding="utf-8").splitlines()]


@then(
    '"{name}" has {count:d} lines in order, with ids "r0" to "r{last:d}", line {bad:d} failed'
    ' and the others the emulated replies to "{template}"'
)
def step_out_lines(context: Context, name: str, count: int, last: int, bad: int, template: str) -> None:
    lines = _lines(context, name)
    assert [line["index"] for line in lines] == list(range(count)), [line["index"] for line in lines]
    assert [line["id"] for line in lines] == [f"r{n}" for n in range(last + 1)]
    for n, line in enumerate(lines):
        if n == bad:
            assert line["status"] == "failed", line
            assert line["error"]["type"] == "BatchRequestErrored", line
        else:
            prompt = template.replace("...", f"Review {n}")
            assert line["status"] == "succeeded", line
            assert line["text"].startswith(emulated_reply_to(prompt)[:30]), line


@then('"{name}" has {count:d} lines in order, all succeeded')
def step_out_all_ok(context: Context, name: str, count: int) -> None:
    lines = _lines(context, name)
    assert [line["index"] for line in lines] == list(range(count))
    assert all(line["status"] == "succeeded" for line in lines), [line["status"] for line in lines]


@then('"{name}" and "{other}" hold the same {count:d} lines in input order, but for what names their runs')
def step_same_lines(context: Context, name: str, other: str, count: int) -> None:
    def apart_from_run(line: dict[str, Any]) -> dict[str, Any]:
        """The line but for what names its run (its key; its batch; an error's message names both)."""
        assert line["key"].endswith(f"-{line['index']}"), line
        kept = {field: value for field, value in line.items() if field not in ("key", "batch_id", "error")}
        error = line["error"]
        return {**kept, "error": {"type": error["type"], "reason": error["reason"]} if error is not None else None}

    ours, theirs = _lines(context, name), _lines(context, other)
    assert [line["index"] for line in ours] == list(range(count)), [line["index"] for line in ours]
    assert len(theirs) == count, len(theirs)
    for mine, whole in zip(ours, theirs, strict=True):
        assert apart_from_run(mine) == apart_from_run(whole), (mine, whole)


def _spool_of(context: Context, run_id: str, name: str) -> Path:
    out = world(context).path(name)
    return spool_path(out.parent, out.name, run_id)


@given("the spools are read by position (os.pread)")
def step_spools_pread(context: Context) -> None:
    assert spools._PREAD is not None, "this system has no os.pread"  # pyright: ignore[reportPrivateUsage]


@given("the spools are read by seeking, as where os.pread is missing (Windows)")
def step_spools_no_pread(context: Context) -> None:
    """The spool's reads as on a system without `os.pread`: its lines read back by seeking the file (`_record`)."""
    before = spools._PREAD  # pyright: ignore[reportPrivateUsage]
    spools._PREAD = None  # pyright: ignore[reportPrivateUsage]

    def restore() -> None:
        spools._PREAD = before  # pyright: ignore[reportPrivateUsage]

    world(context).cleanups.append(restore)


@then('no spool of the run "{run_id}" is left beside "{name}"')
def step_no_spool(context: Context, run_id: str, name: str) -> None:
    path = _spool_of(context, run_id, name)
    assert not path.exists(), path


@then('a spool of the run "{run_id}" beside "{name}" holds the lines of {count:d} of its {items:d} items')
def step_spool_holds(context: Context, run_id: str, name: str, count: int, items: int) -> None:
    path = _spool_of(context, run_id, name)
    found: list[int] = []  # how many items add each distinct part of the report
    spool = LineSpool.kept(items, path, run_id, key_of=lambda i: f"{run_id}-{i}", found=lambda t, n: found.append(n))
    try:
        assert spool.path == path, "the spool could not be opened"
        assert len(spool.earlier) == count == sum(found), (len(spool.earlier), found)
    finally:
        spool.close()


@when('the last line of the spool of the run "{run_id}" beside "{name}" is torn, as a killed process leaves it')
def step_tear_spool(context: Context, run_id: str, name: str) -> None:
    path = _spool_of(context, run_id, name)
    size = path.stat().st_size
    with path.open("r+b") as spool:
        spool.truncate(size - 40)  # the middle of its last record: its line, cut short


@then('the command printed the cost the lines of "{name}" add up to')
def step_cost_of_lines(context: Context, name: str) -> None:
    """The summary's cost, which a resumed run adds up from its spool and the ledger, is its lines' own."""
    printed = world(context).value["out"]
    assert isinstance(printed, str), printed
    total = sum(
        (Decimal(str(line["cost_usd"])) for line in _lines(context, name) if line["cost_usd"] is not None), Decimal(0)
    )
    assert f"${total:.6f} at batch prices" in printed, (total, printed)


@then('the command\'s standard output is exactly the lines of "{name}"')
def step_stdout_is_file(context: Context, name: str) -> None:
    w = world(context)
    out = w.value["out"]
    assert isinstance(out, str), w.value
    assert out == w.path(name).read_text(encoding="utf-8"), out[-2000:]


@then('the API received a batch with only the request "{key}"')
def step_batch_with_only(context: Context, key: str) -> None:
    w = world(context)
    counts = w.emu.created_custom_ids
    assert counts[w.custom_id(key)] == 1, counts
    assert w.emu.created_batches == 2, w.emu.created_batches
    assert sum(counts.values()) == 8, counts


@then("the command printed a JSON plan of {count:d} batches with {sizes} requests")
def step_json_plan(context: Context, count: int, sizes: str) -> None:
    plan = json.loads(world(context).value["out"])
    found = [batch["requests"] for batch in plan["batches"]]
    assert found == [int(n) for n in sizes.replace(" and ", ", ").split(", ")], plan
    assert len(found) == count, plan


@then("the command printed nothing, and on stderr exactly:")
def step_only_stderr(context: Context) -> None:
    value = world(context).value
    assert value["out"] == "", f"the command printed:\n{value['out']}"
    assert value["err"] == context.text + "\n", f"on stderr:\n{value['err']}"


@then(
    '"{name}" holds, in order, the ids "{first}" and "{second}", answered with the emulated replies to "{one}"'
    ' and "{other}"'
)
def step_out_ids(context: Context, name: str, first: str, second: str, one: str, other: str) -> None:
    lines = _lines(context, name)
    assert [line["id"] for line in lines] == [first, second], lines
    for line, prompt in zip(lines, (one, other), strict=True):
        assert line["status"] == "succeeded", line
        assert line["text"].startswith(emulated_reply_to(prompt)), line


@then(
    'item 0 of the run "{run_id}" was sent with max_tokens {tokens:d} and no system prompt, item 1 with max_tokens'
    ' {other:d} and the system prompt "{system}"'
)
def step_sent_params(context: Context, run_id: str, tokens: int, other: int, system: str) -> None:

    ledger = world(context).ledger()
    keys = [row.key for row in ledger.run_store.items(run_id, with_jobs=False)]
    first, second = (record.params for record in ledger.requests_for(keys))
    assert (first["max_tokens"], first.get("system")) == (tokens, None), first
    assert (second["max_tokens"], second.get("system")) == (other, system), second


@then("the command printed exactly:")
def step_printed_exactly(context: Context) -> None:
    out = world(context).value["out"]
    assert out == context.text + "\n", f"the command printed:\n{out}"


@then("the API received {count:d} batches, of {sizes} requests")
@then("the API received {count:d} batches, of {size:d} request each")
def step_batch_sizes(context: Context, count: int, sizes: str = "", size: int = 0) -> None:
    w = world(context)
    client = w.client_over(w.transport())

    async def listing() -> list[Any]:
        return [batch async for batch in client.messages.batches.list(limit=100)]

    # Batches created in the same (virtual) instant have no order: compare the sizes, not who came first.
    found = sorted(sum(dict(batch.request_counts).values()) for batch in w.run(listing()))
    expected = [size] * count if size else [int(n) for n in sizes.replace(" and ", ", ").split(", ")]
    assert found == sorted(expected), found


@then('the command printed JSON whose "{key}" are {value}')
def step_json_key(context: Context, key: str, value: str) -> None:
    printed = json.loads(world(context).value["out"])
    assert printed[key] == json.loads(value), printed


@then('the last progress line on stderr says "{text}"')
def step_last_progress(context: Context, text: str) -> None:
    lines = world(context).value["err"].splitlines()
    assert lines, "nothing on stderr"
    assert text in lines[-1], f"the last line on stderr is:\n{lines[-1]}"


@then('in "{name}" every cost_usd is a JSON number, or null where no answer came')
def step_out_costs(context: Context, name: str) -> None:
    for text in world(context).path(name).read_text(encoding="utf-8").splitlines():
        line = json.loads(text, parse_float=Decimal)
        cost = line["cost_usd"]
        if line["status"] == "succeeded":
            assert isinstance(cost, Decimal), f"cost_usd is a {type(cost).__name__}: {text}"
            assert cost > 0, text
        else:
            assert cost is None, text


@then('the command printed JSON whose "{key}" is the JSON number {number}, and whose "{other}" is {value}')
def step_json_number(context: Context, key: str, number: str, other: str, value: str) -> None:
    printed = json.loads(world(context).value["out"], parse_float=Decimal)
    assert isinstance(printed[key], Decimal), f"{key} is a {type(printed[key]).__name__}: {printed}"
    assert printed[key] == Decimal(number), printed
    assert printed[other] == json.loads(value), printed


@then('on stderr, the first line is "{text}"')
def step_first_stderr(context: Context, text: str) -> None:
    lines = world(context).value["err"].splitlines()
    assert lines, "nothing on stderr"
    assert lines[0] == text, f"the first line on stderr is:\n{lines[0]}"


@then('on stderr, exactly one line says "{text}", and it is the last')
def step_one_final_line(context: Context, text: str) -> None:
    lines = world(context).value["err"].splitlines()
    saying = [line for line in lines if text in line]
    assert len(saying) == 1, "\n".join(lines)
    assert lines[-1] == saying[0], "\n".join(lines)
