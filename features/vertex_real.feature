Feature: The real Vertex AI answers as the emulator does (opt-in: it spends money)
  As a maintainer
  I want the same calls the emulator answers sent once to the real Vertex AI, when I ask for it
  So that the emulator's reading of Vertex AI is checked against the API itself

  Skipped unless `LOWTIDE_VERTEX_REAL_PROJECT` names a Google Cloud project (and, for batch mode,
  `LOWTIDE_VERTEX_REAL_BUCKET` a bucket the credentials may write); the credentials are the machine's Application
  Default Credentials; the Claude scenarios also need `LOWTIDE_VERTEX_REAL_CLAUDE_MODEL`, a Claude model the project
  has enabled in Model Garden (`claude-sonnet-4-5@20250929`). A batch job may take up to a day: that scenario waits
  for it.

  Background:
    Given the real Vertex AI, when a run opts in with a project (and, for batch mode, a bucket) it may spend on

  Scenario: A live call is answered by a Gemini model on Vertex AI
    Given a real Vertex actor "real-live" with:
      """
      max_tokens: 50
      """
    When the actor is asked "Reply with the single word: tide."
    Then a real answer came back from Vertex AI, priced

  Scenario: A batch call is answered through a batch prediction job, its files in the bucket
    Given a real Vertex actor "real-batch" with:
      """
      batch_processing: batch
      max_tokens: 50
      batch: {poll_interval: 60, max_wait: 86400}
      """
    When the actor is asked "Reply with the single word: tide."
    Then a real answer came back from Vertex AI, priced

  Scenario: A live call is answered by a Claude model on Vertex AI (LOWTIDE_VERTEX_REAL_CLAUDE_MODEL names it)
    Given a real Vertex Claude actor "real-claude" with:
      """
      max_tokens: 50
      """
    When the actor is asked "Reply with the single word: tide."
    Then a real answer came back from Claude on Vertex AI, priced

  Scenario: A batch call is answered by a Claude model through a batch prediction job, its files in the bucket
    Given a real Vertex Claude actor "real-claude-batch" with:
      """
      batch_processing: batch
      max_tokens: 50
      batch: {poll_interval: 60, max_wait: 86400}
      """
    When the actor is asked "Reply with the single word: tide."
    Then a real answer came back from Claude on Vertex AI, priced
