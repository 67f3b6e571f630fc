"""Steps of memory_ledger.feature: actors whose ledger is a `MemoryLedger`, end to end on the emulator."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from _support import world, yaml_doc
from step_context import Context, given, then, when

from lowtide import MemoryLedger


def _settings(name: str, text: str | None) -> dict[str, Any]:
    return {"name": name, "model": "claude-sonnet-5-5", **yaml_doc(text)}


@given('an actor "{name}" on a ledger in memory, with:')
def step_actor_in_memory(context: Context, name: str) -> None:
    w = world(context)
    w.store = MemoryLedger()
    w.add_actor(_settings(name, context.text), ledger=w.store)


@when('an actor "{name}" on a new ledger in memory is asked "{prompt:Q}" with the key "{key}"')
def step_other_memory_actor(context: Context, name: str, prompt: str, key: str) -> None:
    w = world(context)
    other = w.add_actor(w.current_actor().configuration.model_dump(), ledger=MemoryLedger())
    assert other.ledger is not w.store
    w.response = w.attempt_async(lambda: other.run(prompt, key=key))
    w.succeeded()


@then("no SQLite ledger file was made")
def step_no_sqlite_file(context: Context) -> None:
    w = world(context)
    folders: list[Path] = [context.state_dir, *([w.tmp] if w.tmp is not None else [])]
    made = [p for folder in folders for p in folder.rglob("*") if p.is_file()]
    assert not made, made
    assert w.current_actor().ledger is w.store, w.current_actor().ledger
    assert w.current_actor().ledger.location == "memory"


@then('the memory ledger holds the run "{run_id}": {count:d} items in order, {done:d} succeeded, {failed:d} failed')
def step_memory_run(context: Context, run_id: str, count: int, done: int, failed: int) -> None:
    w = world(context)
    assert w.store is not None
    store = w.store.run_store
    run = store.run(run_id)
    assert run is not None, [r.id for r in store.runs()]
    assert run.item_count == count, run
    items = store.items(run_id)
    assert [i.index for i in items] == list(range(count)), [i.index for i in items]
    states = Counter(i.request_state.value if i.request_state is not None else None for i in items)
    assert states == Counter({"succeeded": done, "failed": failed}), states
    assert store.outstanding_batches(run_id) == [], store.outstanding_batches(run_id)
    assert len(store.batches(run_id)) == 2, store.batches(run_id)
