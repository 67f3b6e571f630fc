Feature: Steps looked up by their first words
  As an engineer running the suite
  I want behave's step lookup indexed by each pattern's first words, with behave's answers unchanged
  So that a behave process starts in half the time, and no step runs a definition other than behave's own choice

  Behave tries every one of the suite's 3,400 step definitions on each step, and compares each new definition with
  every one registered before it; features/support/step_index.py files them by the words their patterns begin with.

  Scenario: Every step of the suite's feature files finds the definition behave's own lookup finds
    Given the step texts of one in 3 of the suite's feature files, one in 4 of them
    When each is looked up through the index and through behave's own lookup
    Then both find the same definition for each, and more than 100 texts were looked up
    And none of them is matched by no definition

  Scenario: A definition that another already matches is refused as ambiguous, as behave refuses it
    Given a new step registry holding the definition "the batch {id} ends"
    When the definition "the batch 7 ends" is added to it
    Then the addition is refused as ambiguous, naming "the batch {id} ends"

  Scenario: A definition whose first words hold a field is found for any first word, in the order registered
    Given a new step registry holding the definition "{who} sends {count:d} prompts"
    And the registry also holds the definition "lowtide sends {count:d} prompts"
    When the step "lowtide sends 3 prompts" is looked up
    Then the definition found is "{who} sends {count:d} prompts"

  Scenario: The same function registered twice is kept once, as behave keeps it
    Given a new step registry holding the definition "the ledger is empty"
    When the same function is registered again for "the ledger is empty"
    Then the registry holds 1 definition

  Scenario: A keyword-less definition is found after the keyword's own, as behave finds it
    Given a new step registry holding the keyword-less definition "a batch of {count:d} ends"
    And the registry also holds the "then" definition "a batch of 2 ends"
    When the then-step "a batch of 2 ends" is looked up
    Then the definition found is "a batch of 2 ends"
    When the then-step "a batch of 5 ends" is looked up
    Then the definition found is "a batch of {count:d} ends"
