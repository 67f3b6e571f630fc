Feature: lowtide's own examples name current models
  As someone trying lowtide for the first time
  I want the demo and the README to use models that are current, priced and served
  So that copying an example does not start me on a deprecated model, or a cost lowtide cannot tell

  Scenario: The bundled demo's actors name current models
    Then every model the demo's actors name is served by the emulator, not deprecated, and priced by genai-prices

  Scenario: The README's examples name current models
    Then every model the README's examples set is served by the emulator, not deprecated, and priced by genai-prices
