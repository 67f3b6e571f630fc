Feature: The emulator is one folder per API, composed from a list, and outside the runtime
  As a maintainer adding a provider to lowtide
  I want a provider's emulated API to be a folder with an entry point, and nothing in lowtide's product to import the emulator
  So that a new provider's emulation touches no other code, and the runtime never depends on the test double

  Rule: Nothing outside the emulator imports it, but the commands and the demo that start it

    Scenario: The imports of every module, read from its source, keep out of the emulator
      When the imports of every module of lowtide are read from its source, in functions too
      Then no module outside lowtide.emulator imports it, but these:
        | module                      |
        | lowtide.cli.other_commands  |
        | lowtide.cli.demo                |
      And no module of lowtide.emulator.core imports an emulation of lowtide.emulator
      And no emulation of lowtide.emulator imports another emulation, but these built on another API's:
        | emulation    | built on |
        | azure_openai | openai   |
        | fireworks    | openai   |
        | groq         | openai   |
        | openrouter   | openai   |
        | together     | openai   |
        | vertex       | anthropic |
        | vertex       | gemini   |
        | xai          | openai   |
      And the plugin emulation "lowtide_tidepool_emulation" imports of the emulator what lowtide.emulator exports alone

  Rule: The emulator serves the emulations of the entry-point group, each a folder

    Scenario: The built-in APIs are the entry points of lowtide.emulators
      Then the installed emulations are "anthropic, azure_openai, bedrock, fireworks, gemini, groq, mistral, openai, openrouter, together, vertex, xai", each a folder of lowtide.emulator
      And the emulator's route names are those of its emulations, each armable as a fault

    Scenario: An emulation plugged in through the entry-point group is served beside the built-in ones
      Given an emulator of the installed emulations and the plugin emulation "tidepool = lowtide_tidepool_emulation:TidepoolEmulation"
      When a tidepool caller creates the tide "spring"
      Then the tidepool caller is answered 200 with the tide "spring", 1 so far
      And the plugged emulator's calls counted "tidepool.tides.create" 1 time
      And the plugged emulator's stats count 1 tidepool tide
      And the tidepool emulation is the emulator's handle of its class, holding the tide "spring"

    Scenario: A path several APIs serve goes to the API whose client sent the call
      Given an emulator of the installed emulations and the plugin emulation "tidepool = lowtide_tidepool_emulation:TidepoolEmulation"
      When a tidepool caller lists the models
      Then the tidepool caller is answered 200 with the tidepool models "tide-1, tide-2"
      And the Anthropic SDK still lists the Anthropic models on the same emulator
      And the OpenAI SDK still lists the OpenAI models on the same emulator

    Scenario: A plugin emulation's faults, errors and unknown paths come back in its own shape
      Given an emulator of the installed emulations and the plugin emulation "tidepool = lowtide_tidepool_emulation:TidepoolEmulation"
      And a fault fails the plugged emulator's next "tidepool.tides.create" call with status 529
      When a tidepool caller creates the tide "neap"
      Then the tidepool caller is answered 529 with the tidepool error "Overloaded"
      And the plugged emulator's calls counted "tidepool.tides.create" 1 time
      When a tidepool caller creates a tide with no name
      Then the tidepool caller is answered 422 with the tidepool error "a tide needs a name"
      When a caller with no tidepool key creates the tide "neap"
      Then the tidepool caller is answered 401 with the tidepool error "x-tidepool-key is required"
      When a tidepool caller asks for the path "/v1/tides/unknown"
      Then the tidepool caller is answered 404 with the tidepool error "no such tide path"

    Scenario: A plugin emulation keeps its state in the emulator's state file, and is reset with the rest
      Given an emulator on a state file of the installed emulations and the plugin emulation "tidepool = lowtide_tidepool_emulation:TidepoolEmulation"
      When a tidepool caller creates the tide "spring"
      And the plugged emulator is made again on its state file
      Then the tidepool emulation holds the tide "spring"
      And the plugged emulator's calls counted "tidepool.tides.create" 1 time
      When the plugged emulator is reset
      Then the tidepool emulation holds no tide

    Scenario: An emulator of some of the APIs serves those alone, and says which it lacks
      Given an emulator of the Anthropic emulation and the plugin emulation "tidepool = lowtide_tidepool_emulation:TidepoolEmulation" alone
      When a caller with no key of either lists the models
      Then the answer is the emulator's own 404 for an unknown route
      And asking the emulator for its OpenAI emulation raises EmulationError mentioning "serves no OpenAIEmulation (it serves: anthropic, tidepool)"

    Scenario Outline: An emulation that cannot be composed is refused, naming it
      Then composing the emulator with the entry point "<entry point>" raises EmulationError mentioning "<mention>"

      Examples:
        | entry point                                           | mention                               |
        | tidepool = lowtide_tidepool_emulation:NotAnEmulation  | 'tidepool' (lowtide_tidepool_emulation:NotAnEmulation) is not an Emulation class |
        | tidepool = lowtide_no_such_module:Emulation           | 'tidepool' (lowtide_no_such_module:Emulation) could not be loaded |
        | anthropic = lowtide_tidepool_emulation:TidepoolEmulation, tides = lowtide_tidepool_emulation:TidepoolEmulation | two emulations are named 'tidepool' |
