Feature: A Ctrl-C while the lowtide command is still starting
  As a developer who pressed Ctrl-C a moment after starting a run by mistake
  I want the command to stop at once with one line and the interrupted status, whatever it was loading
  So that a traceback of its imports never makes me think something broke, or was sent

  Scenario: Ctrl-C while the command's modules load ends it with status 130 and one line, and nothing is sent
    Given an input file "items.jsonl" with 3 items and an Anthropic batch actor file "reviewer.yaml"
    When "lowtide run items.jsonl --actor reviewer.yaml" is interrupted with Ctrl-C while it imports lowtide.cli
    Then it exited with status 130
    And its only line of output is "lowtide: interrupted while starting; nothing was sent."
    And no ledger was created
