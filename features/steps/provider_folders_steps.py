"""Steps for the rule that a provider is its folder: a scan of neutral code (`_neutral_code`)."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from _neutral_code import Finding, findings, neutral_modules
from _support import world
from step_context import Context as StepContext
from step_context import given, then, when

import lowtide


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    fake_package: Path
    found_words: list[Finding]


_PACKAGE = Path(lowtide.__file__).parent


@when("the code of lowtide's neutral modules is searched for these words:")
def step_search_neutral(context: Context) -> None:
    words = [row["word"] for row in context.table]
    context.found_words = findings(_PACKAGE, neutral_modules(_PACKAGE), words)


@then("they are found only here:")
def step_found_only_here(context: Context) -> None:
    allowed = {(row["module"], row["text"]) for row in context.table}
    found: list[Finding] = context.found_words
    unexpected = [f"{f.module}:{f.line}: {f.text!r}" for f in found if (f.module, f.text) not in allowed]
    assert not unexpected, "neutral code names a provider:\n" + "\n".join(unexpected)
    # An allowance that matches nothing any more is stale: the table must say what is, not what was.
    stale = allowed - {(f.module, f.text) for f in found}
    assert not stale, f"allowed but not found (remove them from the table): {sorted(stale)}"


@given("a neutral module that says:")
def step_neutral_module(context: Context) -> None:
    path = world(context).path("package/prices.py")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(context.text + "\n", encoding="utf-8")
    context.fake_package = path.parent


@when('the code of that module is searched for the words "{first}" and "{second}"')
def step_search_module(context: Context, first: str, second: str) -> None:
    package: Path = context.fake_package
    context.found_words = findings(package, neutral_modules(package), [first, second])


@then('"{text}" is found on its line {line:d}, and nothing else')
def step_found_once(context: Context, text: str, line: int) -> None:
    found: list[Finding] = context.found_words
    assert found == [Finding("prices.py", line, text)], found
