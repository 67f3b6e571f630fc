Feature: Docs a newcomer can finish
  As a newcomer reading lowtide's docs
  I want every page short enough to finish and every link between the pages to lead somewhere
  So that no page is a wall, and no link drops me on a missing page or the top of one that lacks the section named

  A link counts when it is relative (not http, https or mailto): its file must exist beside the page, and its anchor,
  if any, must be a heading of that file as GitHub makes anchors of headings (lower case, punctuation but hyphens
  dropped, spaces to hyphens).

  Scenario: No page of docs/ is over 1,000 lines
    Given the Markdown pages of "docs"
    Then none is over 1000 lines

  Scenario: Every relative link of docs/ and the README leads to a file that exists, and to a heading it has
    Given the Markdown pages of "docs" and the README
    Then every relative link leads to a file that exists, and its anchor to a heading of that file

  Scenario: The check of links finds a link to a heading a page does not have
    Given a page that links to "benchmarks.md#no-such-section" and to "missing.md"
    Then the check of links names "benchmarks.md#no-such-section" and "missing.md"
