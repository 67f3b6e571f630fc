"""Steps of step_index.feature: behave's step lookup through `features/support/step_index.py` against its own."""

from __future__ import annotations

from typing import Any, Protocol

from _support import FEATURES
from behave.matchers import Matcher
from behave.model import Step
from behave.parser import parse_file
from behave.runner import Runner
from behave.step_registry import AmbiguousStep, StepRegistry
from step_context import Context as StepContext
from step_context import given, then, when
from step_index import BEHAVE_FIND_STEP_DEFINITION


class Context(StepContext, Protocol):
    step_texts: list[tuple[str, str]]
    """(step type, text) of the steps looked up."""
    disagreements: list[str]
    unmatched: list[str]
    registry: StepRegistry
    refusal: AmbiguousStep | None
    found: Matcher | None
    step_function: Any
    _runner: Runner
    """behave's runner: its registry is the run's (behave's module-level one is made anew once the steps are loaded)."""


def _the_step(context: Context, text: str) -> None:
    """A step function of the scenario's own registry (never run)."""


def _step(step_type: str, text: str) -> Step:
    return Step("<step_index.feature>", 0, step_type.capitalize(), step_type, text)


@given("the step texts of one in {files:d} of the suite's feature files, one in {texts:d} of them")
def step_texts(context: Context, files: int, texts: int) -> None:
    seen: dict[tuple[str, str], None] = {}
    for path in sorted(FEATURES.glob("*.feature"))[::files]:  # the integrations' files have steps of their own
        feature = parse_file(str(path))
        if feature is None:
            continue
        steps = list(feature.background.steps) if feature.background else []
        for scenario in feature.walk_scenarios():
            steps.extend(scenario.steps)
        for each in steps:
            seen.setdefault((each.step_type, each.name), None)
    context.step_texts = list(seen)[::texts]


@when("each is looked up through the index and through behave's own lookup")
def step_look_up_both(context: Context) -> None:
    registry: StepRegistry = context._runner.step_registry
    context.disagreements, context.unmatched = [], []
    for step_type, text in context.step_texts:
        step = _step(step_type, text)
        indexed = registry.find_step_definition(step)
        behaves = BEHAVE_FIND_STEP_DEFINITION(registry, step)
        if indexed is not behaves:
            context.disagreements.append(f"{step_type} {text!r}: {indexed} against behave's {behaves}")
        if behaves is None:
            context.unmatched.append(f"{step_type} {text!r}")


@then("both find the same definition for each, and more than 100 texts were looked up")
def step_same(context: Context) -> None:
    assert not context.disagreements, "\n".join(context.disagreements)
    assert len(context.step_texts) > 100, len(context.step_texts)


@then("none of them is matched by no definition")
def step_none_unmatched(context: Context) -> None:
    assert not context.unmatched, "\n".join(context.unmatched)


@given('a new step registry holding the definition "{pattern}"')
def step_new_registry(context: Context, pattern: str) -> None:
    context.registry = StepRegistry()
    context.step_function = _the_step
    context.registry.add_step_definition("given", pattern, _the_step)


@given('a new step registry holding the keyword-less definition "{pattern}"')
def step_new_registry_any_keyword(context: Context, pattern: str) -> None:
    context.registry = StepRegistry()
    context.registry.add_step_definition("step", pattern, _the_step)


@given('the registry also holds the definition "{pattern}"')
def step_also_holds(context: Context, pattern: str) -> None:
    context.registry.add_step_definition("given", pattern, lambda context: None)


@given('the registry also holds the "{keyword}" definition "{pattern}"')
def step_also_holds_keyword(context: Context, keyword: str, pattern: str) -> None:
    context.registry.add_step_definition(keyword, pattern, lambda context: None)


@when('the definition "{pattern}" is added to it')
def step_add(context: Context, pattern: str) -> None:
    context.refusal = None
    try:
        context.registry.add_step_definition("given", pattern, lambda context: None)
    except AmbiguousStep as refused:
        context.refusal = refused


@when('the same function is registered again for "{pattern}"')
def step_register_again(context: Context, pattern: str) -> None:
    context.registry.add_step_definition("given", pattern, context.step_function)


@when('the step "{text}" is looked up')
def step_look_up(context: Context, text: str) -> None:
    context.found = context.registry.find_step_definition(_step("given", text))


@when('the then-step "{text}" is looked up')
def step_look_up_then(context: Context, text: str) -> None:
    context.found = context.registry.find_step_definition(_step("then", text))


@then('the addition is refused as ambiguous, naming "{pattern}"')
def step_refused(context: Context, pattern: str) -> None:
    assert context.refusal is not None, "the ambiguous definition was added"
    assert pattern in str(context.refusal), str(context.refusal)


@then('the definition found is "{pattern}"')
def step_found(context: Context, pattern: str) -> None:
    assert context.found is not None, "no definition found"
    assert context.found.pattern == pattern, context.found.pattern


@then("the registry holds {count:d} definition")
def step_holds(context: Context, count: int) -> None:
    assert len(context.registry.steps["given"]) == count, context.registry.steps["given"]
