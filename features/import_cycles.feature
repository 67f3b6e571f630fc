Feature: No import cycle at run time
  As a maintainer of lowtide
  I want no module to import, by way of others, a module that imports it, whenever the import runs
  So that any module can be imported first, each one's place in the layers is plain, and a cycle is caught by its name

  An import counts when it runs: at a module's top level (in an `if`, `try`, `with` or class body too) or in a
  function's body. An import under `if TYPE_CHECKING:` never runs and does not count; a module loaded by name
  (`importlib.import_module`, an entry point) is a plugin's seam, not an import. Importing `a.b.c` runs the
  `__init__` of the packages `a` and `a.b` first, so those count too (`features/support/import_graph.py`).

  Scenario: lowtide's source has no import cycle
    Given the source of the package "src/lowtide"
    When its imports are drawn as a graph
    Then the graph has more than 200 modules
    And no module reaches itself through the graph

  Scenario Outline: The check fails on an import added to lowtide's source that closes a cycle: <what>
    Given a copy of the package "src/lowtide" in which "<module>" also runs "<statement>"
    When its imports are drawn as a graph
    Then the check for cycles fails, saying only that a cycle runs through "<name>", naming where the import added is

    Examples:
      | what                                 | module                  | statement                        | name                 |
      | a new cycle                          | lowtide/ledger/kinds.py | from lowtide.ledger import store | lowtide.ledger.kinds |
      | a module importing the layer above it | lowtide/core/spelling.py     | from lowtide.config import actors       | lowtide.config.actors       |

  Scenario: A cycle closed by an import inside a function is found, and named with where each import is written
    Given a package "loop" whose modules are:
      | module      | source                                                         |
      | __init__.py |                                                                |
      | a.py        | from loop.b import helper                                      |
      | b.py        | def helper():\n    from loop.a import thing\n    return thing |
    When its imports are drawn as a graph
    Then the cycles found are:
      """
      loop.a -> loop.b -> loop.a (loop/a.py:1, loop/b.py:2)
      """

  Scenario: An import under `if TYPE_CHECKING:` does not count; one in its `else` does
    Given a package "loop" whose modules are:
      | module      | source                                                                        |
      | __init__.py |                                                                               |
      | a.py        | from loop.b import helper                                                     |
      | b.py        | from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from loop.a import A |
      | c.py        | import loop.d                                                                 |
      | d.py        | if TYPE_CHECKING:\n    pass\nelse:\n    import loop.c                         |
    When its imports are drawn as a graph
    Then the cycles found are:
      """
      loop.c -> loop.d -> loop.c (loop/c.py:1, loop/d.py:4)
      """

  Scenario: A package's `__init__`, run by importing one of its modules, closes a cycle
    Given a package "loop" whose modules are:
      | module           | source               |
      | __init__.py      |                      |
      | a.py             | import loop.side.b   |
      | side/__init__.py | from loop.a import A |
      | side/b.py        |                      |
    When its imports are drawn as a graph
    Then the cycles found are:
      """
      loop.a -> loop.side -> loop.a (loop/a.py:1, loop/side/__init__.py:1)
      """

  Scenario: Relative imports, and a module's own package, draw no cycle
    Given a package "loop" whose modules are:
      | module           | source                                   |
      | __init__.py      | from loop.side import b                  |
      | side/__init__.py | from . import b                          |
      | side/b.py        | from .. import side\nfrom loop import a  |
      | a.py             | import importlib\nimportlib.import_module("loop.side.b") |
    When its imports are drawn as a graph
    Then no module reaches itself through the graph
