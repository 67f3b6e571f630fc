"""Steps for docs_pages.feature: the length of each page, and where its relative links lead."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Protocol

from step_context import Context as StepContext
from step_context import given, then

_ROOT = Path(__file__).resolve().parents[2]
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^(```|~~~)")


class Context(StepContext, Protocol):
    docs_pages: list[Path]


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but hyphens and underscores dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*?|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _prose(page: Path) -> list[str]:
    """The page's lines outside fenced code blocks."""
    lines: list[str] = []
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if _FENCE.match(line.strip()):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def _anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    anchors: set[str] = set()
    for line in _prose(page):
        if line.startswith("#"):
            base = _anchor(line.lstrip("#"))
            count = seen.get(base, 0)
            seen[base] = count + 1
            anchors.add(base if count == 0 else f"{base}-{count}")
    return anchors


def broken_links(pages: list[Path]) -> list[str]:
    """Every relative link of the pages whose file does not exist, or whose anchor is no heading of its file."""
    broken: list[str] = []
    for page in pages:
        for line in _prose(page):
            for target in _LINK.findall(line):
                if re.match(r"[a-z]+:", target):
                    continue
                path, _, anchor = target.partition("#")
                file = (page.parent / path).resolve() if path else page
                missing = not file.exists()
                if missing or (anchor and file.suffix == ".md" and anchor not in _anchors(file)):
                    broken.append(f"{page.name}: {target}")
    return broken


@given('the Markdown pages of "{folder}"')
def step_pages(context: Context, folder: str) -> None:
    context.docs_pages = sorted((_ROOT / folder).glob("*.md"))
    assert len(context.docs_pages) > 5, context.docs_pages


@given('the Markdown pages of "{folder}" and the README')
def step_pages_and_readme(context: Context, folder: str) -> None:
    step_pages(context, folder)
    context.docs_pages.append(_ROOT / "README.md")


@then("none is over {lines:d} lines")
def step_short(context: Context, lines: int) -> None:
    long = {p.name: n for p in context.docs_pages if (n := len(p.read_text(encoding="utf-8").splitlines())) > lines}
    assert not long, f"over {lines} lines: {long}"


@then("every relative link leads to a file that exists, and its anchor to a heading of that file")
def step_links(context: Context) -> None:
    broken = broken_links(context.docs_pages)
    assert not broken, "links that lead nowhere:\n" + "\n".join(broken)


@given('a page that links to "{first}" and to "{second}"')
def step_bad_page(context: Context, first: str, second: str) -> None:
    folder = _ROOT / "build" / "docs-pages-check"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "benchmarks.md").write_text("# Benchmarks\n\n## A section\n", encoding="utf-8")
    bad = folder / "page.md"
    bad.write_text(
        f"# A page\n\nSee [one]({first}), [two]({second}) and [fine](benchmarks.md#a-section).\n\n"
        "```\n[not a link](in-a-code-block.md)\n```\n",
        encoding="utf-8",
    )
    context.docs_pages = [bad]


@then('the check of links names "{first}" and "{second}"')
def step_named(context: Context, first: str, second: str) -> None:
    broken = broken_links(context.docs_pages)
    assert broken == [f"page.md: {first}", f"page.md: {second}"], broken
