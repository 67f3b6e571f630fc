"""Steps for office files and web pages sent as the text they convert to (features/office_documents.feature): the
blocks they become, a bulk run of them on each provider against the emulator on a socket, and the dry run."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sys
import zipfile
from pathlib import Path
from typing import Any, Protocol

from _office_files import count_conversions
from _rebuild_support import RebuildWorld, keys_created
from _support import world
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import Actor, BulkRun, RunResult
from lowtide.bulk.inputs import converted
from lowtide.bulk.inputs.files import file_block
from lowtide.bulk.planning.batches import RunPlan
from lowtide.errors import ConfigurationError
from lowtide.types import ActorRequest


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context (and reads of other step modules')."""

    rebuild: RebuildWorld
    bulk_inputs: Any
    built_actor: Actor
    office_run: RunResult
    office_plan: RunPlan
    office_conversions: dict[str, int]
    office_tokens: dict[str, int]
    office_sent_first: list[str]
    office_answer: Any
    office_request: ActorRequest
    office_block_error: Exception | None


def _folder(context: Context) -> Path:
    """The scenario's input folder (bulk_inputs_steps' own), where its files are made and its jobs run."""
    return world(context).path("")


def the_block(context: Context) -> dict[str, Any]:
    """The block bulk_inputs_steps built (kept on the context as `bulk_inputs.block`)."""
    world(context).succeeded()
    block: dict[str, Any] | None = context.bulk_inputs.block
    assert block is not None, "no block was built"
    return block


def _citations(response: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for block in response.content:
        for citation in getattr(block, "citations", None) or []:
            found.append(citation if isinstance(citation, dict) else citation.model_dump())
    return found


_FILES = ("report.docx", "tides.xlsx", "briefing.pptx", "page.html")
# Providers whose API cites documents: their answers quote the documents; the others' quote the text they were sent.
_CITING = frozenset({"anthropic"})


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


@then('the block is a text document titled "{title}" whose text holds these lines, in this order:')
def step_text_lines(context: Context, title: str) -> None:
    block = the_block(context)
    assert block["type"] == "document", block
    assert block["title"] == title, block
    source = block["source"]
    assert source == {"type": "text", "media_type": "text/plain", "data": source["data"]}, source
    lines = _lines(source["data"])
    place = 0
    for wanted in _lines(context.text or ""):
        assert wanted in lines[place:], f"{wanted!r} is not among the lines after line {place}:\n{source['data']}"
        place = lines.index(wanted, place) + 1


@then('the block\'s text does not hold "{first}", "{second}" or "{third}"')
def step_text_lacks(context: Context, first: str, second: str, third: str) -> None:
    text = the_block(context)["source"]["data"]
    for unwanted in (first, second, third):
        assert unwanted not in text, f"{unwanted!r} is in:\n{text}"


@given("markitdown cannot be imported")
def step_no_markitdown(context: Context) -> None:
    """As if the `documents` extra were not installed: its modules cannot be imported, and nothing converted before
    is kept (a text converted earlier in this process would otherwise be found by its digest)."""
    saved = {name: module for name, module in sys.modules.items() if name.split(".")[0] == "markitdown"}
    for name in saved:
        del sys.modules[name]
    sys.modules["markitdown"] = None  # type: ignore[assignment]  # import fails, as when it is not installed
    kept = dict(converted._converters)  # pyright: ignore[reportPrivateUsage]
    converted._converters.clear()  # pyright: ignore[reportPrivateUsage]
    converted._cache = converted._Cache()  # pyright: ignore[reportPrivateUsage]

    def restore() -> None:
        del sys.modules["markitdown"]
        sys.modules.update(saved)
        converted._converters.update(kept)  # pyright: ignore[reportPrivateUsage]

    world(context).cleanups.append(restore)


def _r(context: Context) -> RebuildWorld:
    found: object = getattr(context, "rebuild", None)
    assert isinstance(found, RebuildWorld), "no emulator on a socket: add 'Given the emulator on a socket, ...'"
    return found


def _map(context: Context, prompt: str, names: list[str], mode: str, *, citations: bool) -> RunResult:
    w, r = world(context), _r(context)
    # Room for the answer past a thinking model's default thinking (Gemini 2.5's), which 64 tokens would not leave.
    r.configuration["max_tokens"] = 1024
    folder = _folder(context)
    jobs = [{"prompt": prompt, "file": str(folder / name), "id": name} for name in names]

    async def mapping(actor: Actor) -> RunResult:
        return await actor.map(jobs, mode=mode, progress="none", citations=citations)

    with contextlib.chdir(folder):
        result = r.program(w, mapping)
    context.office_run = result
    return result


@when('the programs\' actor maps "{prompt}" over each of those files in {mode:w} mode')
def step_map_files(context: Context, prompt: str, mode: str) -> None:
    r = _r(context)
    _map(context, prompt, list(_FILES), mode, citations=r.provider in _CITING)


def _jobs(context: Context, prompt: str, *, by_path: bool = False) -> list[dict[str, Any]]:
    folder = _folder(context)
    if by_path:  # each file named by a document block of the job's message
        return [
            {"messages": _path_message(prompt, {"type": "document", "path": str(folder / name)}), "id": name}
            for name in _FILES
        ]
    return [{"prompt": prompt, "file": str(folder / name), "id": name} for name in _FILES]


@when(
    'a program maps "{prompt}" over each of those files, {count:d} a batch, 1 batch at a time, as run "{run_id}",'
    " and stops once its first batch is out"
)
def step_map_files_stopped(context: Context, prompt: str, count: int, run_id: str, by_path: bool = False) -> None:
    w, r = world(context), _r(context)
    r.configuration["max_tokens"] = 1024
    jobs = _jobs(context, prompt, by_path=by_path)

    async def until_out(actor: Actor) -> None:
        run = BulkRun(
            actor, run_id=run_id, items_per_batch=count, max_parallel_batches=1, progress="none", citations=True
        )
        run.add_jobs(jobs)
        task = asyncio.ensure_future(run.run())
        # Stopped as soon as the first batch has its API id: on the scenario's clock it ends 60 virtual seconds later.
        while not any(api_id is not None for _, api_id, *_ in actor.ledger.run_store.batches(run_id)):
            await asyncio.sleep(0)
            assert not task.done(), f"the run ended before it was stopped: {task.result()!r}"
        task.cancel()
        keys = [f"{run_id}-{index}" for index in range(len(_FILES))]
        sent = {record.key for record in actor.ledger.requests_for(keys)}
        context.office_sent_first = [name for name, key in zip(_FILES, keys, strict=True) if key in sent]

    with contextlib.chdir(_folder(context)):
        r.program(w, until_out)


@when(
    'a new program, which has converted nothing yet, maps "{prompt}" over each of those files, {count:d} a batch,'
    ' as run "{run_id}"'
)
def step_map_files_resumed(context: Context, prompt: str, count: int, run_id: str, by_path: bool = False) -> None:
    w, r = world(context), _r(context)
    jobs = _jobs(context, prompt, by_path=by_path)

    async def mapping(actor: Actor) -> RunResult:
        return await actor.map(jobs, run_id=run_id, items_per_batch=count, progress="none", citations=True)

    context.office_conversions = {}
    stop = count_conversions(context.office_conversions)  # nothing converted kept, as in a process of its own
    try:
        with contextlib.chdir(_folder(context)):
            context.office_run = r.program(w, mapping)
    finally:
        stop()


@then("the new program converted only the {count:d} files whose requests were not in the ledger yet")
def step_converted_unsent(context: Context, count: int) -> None:
    sent = context.office_sent_first
    unsent = [name for name in _FILES if name not in sent]
    assert len(unsent) == count, (sent, unsent)
    wanted = {Path(name).suffix: 1 for name in unsent}
    assert context.office_conversions == wanted, f"converted {context.office_conversions}; sent before: {sent}"


@then("each item's result line names the file its document block sent")
def step_lines_name_block_files(context: Context) -> None:
    lines = [item.as_json() for item in context.office_run]
    assert [line.get("file") for line in lines] == list(_FILES), lines


@then("each file's request was created once at the API, in {batches:d} batches")
def step_created_once(context: Context, batches: int) -> None:
    r = _r(context)
    created = keys_created(r.created())
    assert len(created) == len(_FILES), created
    assert set(created.values()) == {1}, created
    assert r.stats()["created_batches"] == batches, r.stats()


@when('the programs\' actor maps "{prompt}" over "{name}" with citations in {mode:w} mode')
def step_map_cited(context: Context, prompt: str, name: str, mode: str) -> None:
    _map(context, prompt, [name], mode, citations=True)


def _converted_text(folder: Path, name: str) -> str:
    with contextlib.chdir(folder):
        return str(file_block(name, citations=False)["source"]["data"])


@then("every item succeeded, and the API was sent each file's converted text under its name")
def step_sent_converted(context: Context) -> None:
    r = _r(context)
    folder = _folder(context)
    items = list(context.office_run)
    assert [item.id for item in items] == list(_FILES), [item.id for item in items]
    for item in items:
        assert item.ok, f"{item.id}: {item.error}"
        response = item.response
        assert response is not None
        assert item.id is not None
        text = _converted_text(folder, item.id)
        if r.provider in _CITING:
            # The emulator quotes what it was sent as documents: each citation's text is in the converted file's.
            cited = _citations(response)
            assert cited, f"{item.id}: the answer cites nothing: {response.text!r}"
            for citation in cited:
                assert citation["document_title"] == item.id, (item.id, citation)
                assert citation["cited_text"].strip() in text, (item.id, citation["cited_text"], text)
        else:
            # The emulated model quotes the last user turn's text: the document (its title, then its text) first.
            quoted = re.sub(r"\s+", " ", response.text)
            start = re.sub(r"\s+", " ", f"{item.id} {text}")[:60]
            assert start in quoted, f"{item.id}: the answer does not quote the converted text:\n{response!r}"


@then('the item\'s answer cites "{sentence}" from the document "{title}"')
def step_cites(context: Context, sentence: str, title: str) -> None:
    [item] = list(context.office_run)
    assert item.ok, item.error
    assert item.response is not None
    cited = _citations(item.response)
    assert any(c["cited_text"].strip() == sentence and c["document_title"] == title for c in cited), cited


@when('the actor plans a run of {many:d} jobs naming "{first}" and {few:d} naming "{second}", counting conversions')
def step_plan(context: Context, many: int, first: str, few: int, second: str) -> None:
    actor: Actor = context.built_actor
    folder = _folder(context)
    names = [first] * many + [second] * few
    jobs = [{"prompt": f"Summarise part {i}", "file": name} for i, name in enumerate(names)]
    counted: dict[str, int] = {}
    stop = count_conversions(counted)
    try:
        with contextlib.chdir(folder):
            plan = context.runner.run(actor.map(jobs, dry_run=True, progress="none"))
    finally:
        stop()
    assert isinstance(plan, RunPlan), plan
    context.office_plan = plan
    context.office_conversions = counted
    context.office_tokens = {name: -(-len(_converted_text(folder, name).encode()) // 3) for name in (first, second)}


@then('the plan says, before "{last}":')
def step_plan_says(context: Context, last: str) -> None:
    plan: RunPlan = context.office_plan
    lines = plan.lines()
    at = next((index for index, line in enumerate(lines) if line.startswith(last)), None)
    assert at is not None, lines
    expected = context.text or ""
    for name, tokens in context.office_tokens.items():  # "{report.docx}": the tokens of that file's converted text
        expected = expected.replace("{" + name + "}", f"{tokens:,}")
    wanted = expected.splitlines()
    assert lines[at - len(wanted) : at] == wanted, "\n".join(lines)
    listed = json.loads(json.dumps(plan.as_json()))["converted_files"]
    assert [entry["tokens"] for entry in listed] == list(context.office_tokens.values()), listed


@then("each file was converted once")
def step_converted_once(context: Context) -> None:
    counted: dict[str, Any] = context.office_conversions
    assert counted == {".docx": 1, ".xlsx": 1}, counted


def _path_message(prompt: str, block: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"role": "user", "content": [block, {"type": "text", "text": prompt}]}]


@when('the programs\' actor is asked "{prompt}" in {mode:w} mode after a document block with the path "{name}"')
def step_ask_by_path(context: Context, prompt: str, mode: str, name: str) -> None:
    w, r = world(context), _r(context)
    r.configuration["max_tokens"] = 1024
    block: dict[str, Any] = {"type": "document", "path": name}
    if r.provider in _CITING:
        block["citations"] = {"enabled": True}

    async def asking(actor: Actor) -> Any:
        return await actor.run(messages=_path_message(prompt, block), mode=mode)

    with contextlib.chdir(_folder(context)):
        context.office_answer = r.program(w, asking)


@then('the answer came from the converted text of "{name}", under its name')
def step_answer_from(context: Context, name: str) -> None:
    r = _r(context)
    response = context.office_answer
    text = _converted_text(_folder(context), name)
    if r.provider in _CITING:
        cited = _citations(response)
        assert cited, f"the answer cites nothing: {response.text!r}"
        for citation in cited:
            assert citation["document_title"] == name, citation
            assert citation["cited_text"].strip() in text, (citation["cited_text"], text)
    else:
        quoted = re.sub(r"\s+", " ", response.text)
        start = re.sub(r"\s+", " ", f"{name} {text}")[:60]
        assert start in quoted, f"the answer does not quote the converted text:\n{response!r}"


def _ask_built(context: Context, block: dict[str, Any], prompt: str) -> None:
    actor: Actor = context.built_actor
    context.office_block_error = None
    with contextlib.chdir(_folder(context)):
        try:
            context.office_request = actor.request(messages=_path_message(prompt, block))
            context.runner.run(actor.run(messages=_path_message(prompt, block)))
        except Exception as exc:  # what the call raised is what the scenario checks
            context.office_block_error = exc


@when('the actor is asked "{prompt}" after a document block with the path "{name}"')
def step_ask_built(context: Context, prompt: str, name: str) -> None:
    _ask_built(context, {"type": "document", "path": name}, prompt)


@when("the actor builds the request of a message whose first block is {block}")
def step_build_block(context: Context, block: str) -> None:
    actor: Actor = context.built_actor
    context.office_block_error = None
    with contextlib.chdir(_folder(context)):
        try:
            context.office_request = actor.request(messages=_path_message("Summarise it", json.loads(block)))
        except Exception as exc:  # what the call raised is what the scenario checks
            context.office_block_error = exc


@then("the call is refused before anything is recorded, with:")
def step_block_refused(context: Context) -> None:
    error = context.office_block_error
    assert isinstance(error, ConfigurationError), f"expected a ConfigurationError, got {error!r}"
    expected = (context.text or "").replace("{folder}", str(_folder(context).resolve()))
    assert str(error) == expected, f"the message is:\n{error}\n\nnot:\n{expected}"
    actor: Actor = context.built_actor
    assert actor.ledger.requests() == [], actor.ledger.requests()


@then('the request\'s first block is the text document of "{name}" titled "{title}", citations on, cache_control kept')
def step_block_made(context: Context, name: str, title: str) -> None:
    assert context.office_block_error is None, context.office_block_error
    request: ActorRequest = context.office_request
    content = request.messages[0].content
    assert isinstance(content, list)
    block = content[0]
    assert block == {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": _converted_text(_folder(context), name)},
        "title": title,
        "citations": {"enabled": True},
        "cache_control": {"type": "ephemeral"},
    }, block


@when('the input file "{name}" holds its first line alone, and the jobs are loaded from it')
def step_first_line_alone(context: Context, name: str) -> None:
    path = _folder(context) / name
    path.write_text(path.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    context.execute_steps(f'When the jobs are loaded from "{name}"')


@then('job 0\'s document block names "{path}"')
def step_block_names(context: Context, path: str) -> None:
    state = context.bulk_inputs
    world(context).succeeded()
    job = state.jobs[0]
    assert job.messages is not None, job
    content = job.messages[0].content
    assert isinstance(content, list), content
    assert content[0] == {"type": "document", "path": path.replace("{folder}", str(_folder(context)))}, content[0]


@when('"{name}" in the input folder is saved again, its text the same but its bytes not')
def step_saved_again(context: Context, name: str) -> None:
    """The file's zip archive with one more part no converter reads: the same text, another digest of its bytes."""
    path = _folder(context) / name
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr("docProps/custom-note.xml", "<note>saved again</note>")


@then("every item succeeded")
def step_all_succeeded(context: Context) -> None:
    items = list(context.office_run)
    assert all(item.ok for item in items), [(item.id, item.error) for item in items]


@then('the new program converted "{name}" and the files whose requests were not in the ledger yet, each once')
def step_converted_changed(context: Context, name: str) -> None:
    sent = context.office_sent_first
    assert name in sent, f"{name} was not sent before the stop: {sent}"
    wanted = {Path(file).suffix: 1 for file in _FILES if file not in sent or file == name}
    assert context.office_conversions == wanted, f"converted {context.office_conversions}; sent before: {sent}"


@when(
    'a program maps "{prompt}" over each of those files, each named by a document block, {count:d} a batch, 1 batch'
    ' at a time, as run "{run_id}", and stops once its first batch is out'
)
def step_map_blocks_stopped(context: Context, prompt: str, count: int, run_id: str) -> None:
    step_map_files_stopped(context, prompt, count, run_id, by_path=True)


@when(
    'a new program, which has converted nothing yet, maps "{prompt}" over each of those files, each named by a'
    ' document block, {count:d} a batch, as run "{run_id}"'
)
def step_map_blocks_resumed(context: Context, prompt: str, count: int, run_id: str) -> None:
    step_map_files_resumed(context, prompt, count, run_id, by_path=True)
