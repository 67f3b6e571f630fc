"""Behave's step registry looked up by each step's first words: the same answers as behave's own, without trying
every definition on every step.

Behave (1.3) keeps each keyword's step definitions in one list. Registering a definition compares it with every one
already registered (is it the same, is it ambiguous?), and finding a step tries every definition's pattern in turn
until one matches. With this suite's 3,400 definitions that is 5.7 million comparisons while the steps load: about
half of a behave process's start (6 of 12 s of CPU; twice that under coverage, whose tracer sees each comparison's
calls) and some 10 ms a step once running. A parse pattern that begins with words before its first field (`the batch
{id} ends`) can match only a text that begins with those words, so each list gets an index by a pattern's first
words, up to three (lowercased: parse patterns ignore case), and a text is compared only with the definitions filed
under its own first one, two or three words or under none (a field first, a regular expression), in the order behave
registered them: behave's first match, its `AmbiguousStep` and its skip of a definition registered twice are
unchanged.

`install()` replaces the registry's three methods on its class; features/environment.py calls it as behave loads
it, before the step modules (`features/step_index.feature` checks the answers against behave's own).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator
from typing import Any

from behave.matchers import Match, Matcher, ParseMatcher, make_step_matcher
from behave.model import Step
from behave.step_registry import AmbiguousStep, StepRegistry

WORDS = 3
"""How many of a pattern's first words it is filed under."""


def _first_words(text: str) -> tuple[str, ...]:
    """The text's first WORDS words, lowercased."""
    return tuple(text.lower().split(None, WORDS)[:WORDS])


def _filed_under(definition: Matcher) -> tuple[str, ...]:
    """The first words (up to WORDS) that every text this definition matches begins with: the words of a parse
    pattern before its first field, each followed by a space or the pattern's end. None (the empty tuple) where the
    text could begin with any word: a pattern that is not parse's, or not plain ASCII (where lowercasing and a regular
    expression's ignoring of case may differ)."""
    pattern = definition.pattern
    if not isinstance(definition, ParseMatcher) or not pattern.isascii():
        return ()
    literal = pattern.split("{", 1)[0]
    words = literal.lower().split()
    if "{" in pattern and literal and not literal[-1].isspace():
        words = words[:-1]  # the last word runs into a field: `id{n}`
    if any("}" in word for word in words):
        return ()
    return tuple(words[:WORDS])


class _Index:
    """One keyword's list of definitions, filed by first words; it follows the list as behave appends to it."""

    def __init__(self, definitions: list[Matcher]) -> None:
        self.definitions = definitions
        self.count = 0
        self.by_words: dict[tuple[str, ...], list[tuple[int, Matcher]]] = {}
        self.last: Matcher | None = None
        self.follow()

    def current(self, definitions: list[Matcher]) -> bool:
        """Whether this index still describes `definitions` (the same list, grown only by appending)."""
        return (
            self.definitions is definitions
            and self.count <= len(definitions)
            and (self.count == 0 or self.last is definitions[self.count - 1])
        )

    def follow(self) -> None:
        """File what was appended to the list since last time."""
        for position in range(self.count, len(self.definitions)):
            definition = self.definitions[position]
            self.by_words.setdefault(_filed_under(definition), []).append((position, definition))
        self.count = len(self.definitions)
        self.last = self.definitions[-1] if self.definitions else None

    def candidates(self, text: str) -> Iterator[Matcher]:
        """The definitions that could match `text`, in the list's order."""
        words = _first_words(text)
        filed = [self.by_words.get(words[:count], []) for count in range(len(words) + 1)]
        for _, definition in heapq.merge(*filed, key=lambda entry: entry[0]):
            yield definition


def _index(registry: StepRegistry, step_type: str) -> _Index:
    """The registry's index of one keyword's list, made or brought up to date."""
    indexes: dict[str, _Index] = registry.__dict__.setdefault("_lowtide_step_index", {})
    definitions: list[Matcher] = registry.steps[step_type]
    index = indexes.get(step_type)
    if index is None or not index.current(definitions):
        index = indexes[step_type] = _Index(definitions)
    else:
        index.follow()
    return index


def _candidates(registry: StepRegistry, step: Step) -> Iterator[Matcher]:
    """What behave would try for `step`, in its order: the step's keyword's definitions, then the keyword-less ones."""
    yield from _index(registry, step.step_type).candidates(step.name)
    if step.step_type != "step":
        yield from _index(registry, "step").candidates(step.name)


def add_step_definition(self: StepRegistry, keyword: str, step_text: str, func: Callable[..., Any]) -> None:
    """Behave's `add_step_definition`, comparing the new definition only with those that could match its text."""
    step_type = keyword.lower()
    new = make_step_matcher(func, str(step_text), step_type)
    if not self.is_good_step_definition(new):
        return
    index = _index(self, step_type)
    for existing in index.candidates(str(step_text)):
        if self.same_step_matcher(existing, new):
            return  # the same function registered again (a step module imported by another)
        if existing.matches(str(step_text)):
            message = "%s has already been defined in\n  existing step %s"
            raise AmbiguousStep(message % (new.describe(), existing.describe(existing.SCHEMA_AT_LOCATION)))
    self.steps[step_type].append(new)
    index.follow()


def find_step_definition(self: StepRegistry, step: Step) -> Matcher | None:
    """Behave's `find_step_definition`: the first definition whose pattern matches the step."""
    for definition in _candidates(self, step):
        if definition.match(step.name):
            return definition
    return None


def find_match(self: StepRegistry, step: Step) -> Match | None:
    """Behave's `find_match`: the first definition's match of the step."""
    for definition in _candidates(self, step):
        result = definition.match(step.name)
        if result:
            return result
    return None


BEHAVE_FIND_STEP_DEFINITION = StepRegistry.find_step_definition
"""Behave's own lookup, kept to check this one against (`features/step_index.feature`)."""


def install() -> None:
    """Put the indexed methods on behave's registry class (every registry, the one already made included)."""
    StepRegistry.add_step_definition = add_step_definition  # type: ignore[method-assign]
    StepRegistry.find_step_definition = find_step_definition  # type: ignore[method-assign]
    StepRegistry.find_match = find_match  # type: ignore[method-assign]
