Feature: Providers behind one address and one key never mix
  As an operator running several providers' actors through one gateway (or `lowtide emulator`) with one key
  I want each provider's calls sent to its own API, in batches of its own
  So that no request is ever created, and paid for, at the wrong provider

  Background:
    Given every provider's API emulated behind one address, whose batches take 1 second

  Scenario: An Anthropic, a Mistral and a Gemini actor with one address and one key each send their own batch
    Given a batch-mode "anthropic" actor "claude" of the model "claude-haiku-4-5" that reaches it with the key in "SHARED_KEY"
    And a batch-mode "mistral" actor "tides" of the model "mistral-small-latest" that reaches it with the key in "SHARED_KEY"
    And a batch-mode "gemini" actor "gem" of the model "gemini-2.5-flash" that reaches it with the key in "SHARED_KEY"
    When these calls are made at once:
      | actor  | prompt           | key |
      | claude | When is high tide? | a1  |
      | tides  | When is low tide?  | m1  |
      | gem    | Is it neap tide?   | g1  |
      | claude | Is the bar safe?   | a2  |
      | tides  | Where is the buoy? | m2  |
      | gem    | Who keeps the log? | g2  |
    Then the answer to "a1" is the emulated reply to "When is high tide?"
    And the answer to "a2" is the emulated reply to "Is the bar safe?"
    And the answer to "m1" is the emulated reply to "When is low tide?"
    And the answer to "m2" is the emulated reply to "Where is the buoy?"
    And the answer to "g1" is the emulated reply to "Is it neap tide?"
    And the answer to "g2" is the emulated reply to "Who keeps the log?"
    And the "anthropic" API created 1 batch, holding the requests of "claude" keyed "a1, a2"
    And the "mistral" API created 1 batch, holding the requests of "tides" keyed "m1, m2"
    And the "gemini" API created 1 batch, holding the requests of "gem" keyed "g1, g2"

  Scenario: Two Anthropic actors reaching one emulator at two addresses with one key send a batch each
    Given a batch-mode "anthropic" actor "near" of the model "claude-haiku-4-5" that reaches it with the key in "SHARED_KEY"
    And a batch-mode "anthropic" actor "far" of the model "claude-haiku-4-5" that reaches it as "localhost" with the key in "SHARED_KEY"
    When these calls are made at once:
      | actor | prompt             | key |
      | near  | When is high tide? | n1  |
      | far   | When is low tide?  | f1  |
      | near  | Is the bar safe?   | n2  |
    Then the answer to "n1" is the emulated reply to "When is high tide?"
    And the answer to "f1" is the emulated reply to "When is low tide?"
    And the answer to "n2" is the emulated reply to "Is the bar safe?"
    And the "anthropic" API created 2 batches, one holding the requests of "near" keyed "n1, n2", one those of "far" keyed "f1"

  Scenario: Two third-party providers whose quota scopes read alike keep quotas of their own
    Given two live plugin providers "east" and "west" that both name their quota scope "gateway:shared-key"
    And a live actor of each, allowed 1 call in flight at a time
    When each actor makes a call that waits until the other's call has started
    Then both calls were answered
