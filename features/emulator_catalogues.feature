Feature: The emulator serves the models the official SDKs' own READMEs name
  As a developer trying lowtide against `lowtide emulator` with the model names I copied from an SDK's README
  I want the emulator to serve those models, as the real API does
  So that a test double never teaches me to pin old models, and a new SDK release naming a model it lacks is caught here

  The chat models each installed SDK's README names (its package metadata: `model="..."` in its examples), less the
  kinds of model lowtide does not call (embeddings, speech, images, video) and placeholders, are asked for through that
  SDK's own models endpoint, against the emulator on a loopback socket.

  Scenario Outline: Every chat model the <sdk> SDK's README names is served, asked through that SDK
    Given the emulator on a loopback socket
    When the <sdk> SDK asks it for each chat model its README names
    Then the emulator serves every one of them, and there is at least one

    Examples:
      | sdk          |
      | anthropic    |
      | openai       |
      | google-genai |
      | mistralai    |
      | groq         |
      | together     |
