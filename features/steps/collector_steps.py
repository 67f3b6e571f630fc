"""Steps about the garbage collector while many batch calls wait (`lowtide.batching.gc_tuning`)."""

from __future__ import annotations

import gc
from typing import Protocol

from _support import world
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.batching.gc_tuning import forget_foreign_freeze


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    freezes: dict[str, int]
    freeze_counts: list[int]


@given("the garbage collector's freezes are counted")
def step_count_freezes(context: Context) -> None:
    # The test run freezes what outlives each scenario (environment.py); a program that froze nothing is what
    # lowtide's collector expects by default, so the scenario starts from one, in a process that has not yet seen the
    # run's own freezing (lowtide, once it sees a program freezing for itself, leaves it alone for good).
    gc.unfreeze()
    forget_foreign_freeze()
    freeze, unfreeze, get_freeze_count = gc.freeze, gc.unfreeze, gc.get_freeze_count
    context.freeze_counts = []
    context.freezes = {"freeze": 0, "unfreeze": 0}

    def counted_freeze() -> None:
        context.freezes["freeze"] += 1
        freeze()

    def counted_unfreeze() -> None:
        context.freezes["unfreeze"] += 1
        unfreeze()

    gc.freeze, gc.unfreeze = counted_freeze, counted_unfreeze

    def counted_get_freeze_count() -> int:
        context.freeze_counts.append(get_freeze_count())
        return context.freeze_counts[-1]

    gc.get_freeze_count = counted_get_freeze_count

    def restore() -> None:
        gc.freeze, gc.unfreeze, gc.get_freeze_count = freeze, unfreeze, get_freeze_count

    context.add_cleanup(restore)


@given("the program froze its own objects for the garbage collector")
def step_program_froze(context: Context) -> None:
    gc.freeze()
    context.add_cleanup(gc.unfreeze)
    context.freezes = {"freeze": 0, "unfreeze": 0}  # counted from here on


@then("lowtide froze what was alive while the calls waited")
def step_froze_while_waiting(context: Context) -> None:
    assert context.freezes["freeze"] >= 1, "nothing was frozen"


@then("lowtide froze what the program made before the actor's first call")
def step_froze_before_calls(context: Context) -> None:
    assert context.freezes["freeze"] == 1, context.freezes
    assert gc.get_freeze_count() > 0, "nothing is frozen"


@then("the garbage collector sees every object again")
def step_nothing_frozen(context: Context) -> None:
    assert gc.get_freeze_count() == 0, f"{gc.get_freeze_count()} objects are still frozen"


@then("lowtide neither froze nor thawed anything")
def step_program_frozen_kept(context: Context) -> None:
    assert context.freezes == {"freeze": 0, "unfreeze": 0}, context.freezes
    assert gc.get_freeze_count() > 0, "the program's frozen objects were thawed"


@when("{count:d} more batch actors are made")
def step_more_batch_actors(context: Context, count: int) -> None:
    w = world(context)
    context.freeze_counts.clear()  # counted from here on
    for index in range(count):
        w.add_actor({"name": f"extra-{index}", "model": "claude-sonnet-5-5", "batch_processing": "batch"})


@then("lowtide did not count the frozen objects again")
def step_not_counted_again(context: Context) -> None:
    assert not context.freeze_counts, f"counted {len(context.freeze_counts)} times: {context.freeze_counts}"
