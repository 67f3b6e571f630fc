@integration
Feature: The README's examples under agent frameworks run as written
  As a developer reading the README to put lowtide under my agent framework
  I want its pydantic-ai and LangChain examples to run as they are printed
  So that my first hour is spent on my agent, not on mending the documentation's code

  @pydantic_ai
  Scenario: The pydantic-ai example runs as written against the emulator
    When I run the README's examples that need pydantic-ai
    Then each of those examples ended as the README says

  @langchain
  Scenario: The LangChain example runs as written against the emulator
    When I run the README's examples that need langchain
    Then each of those examples ended as the README says
