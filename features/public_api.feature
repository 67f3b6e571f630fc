Feature: The public API
  As a developer importing lowtide
  I want the package's `__all__` to list exactly what it exports, in order
  So that `from lowtide import *`, documentation and type checkers all see the same public API

  Scenario: lowtide.__all__ is sorted and matches what the package exports
    Then lowtide's __all__ is sorted
    And every name in lowtide's __all__ is exported
    And every public object lowtide exports is in its __all__
    And "from lowtide import *" imports exactly the names in __all__

  Scenario: lowtide reports the installed version
    Then lowtide.__version__ is the version of the installed distribution

  Scenario: Importing lowtide loads no provider's SDK until an actor of that provider needs it
    When a new Python process imports lowtide
    Then neither the anthropic nor the openai SDK was imported
    When a new Python process imports lowtide and asks it for ClaudeBatchProvider
    Then the anthropic SDK was imported, and the openai SDK was not

  Scenario: An Anthropic actor loads no OpenAI SDK, and an OpenAI actor no Anthropic SDK
    When a new Python process builds an Anthropic actor in batch mode and its provider
    Then the anthropic SDK was imported, and the openai SDK was not
    When a new Python process builds an OpenAI actor in batch mode and its provider
    Then the openai SDK was imported, and the anthropic SDK was not
