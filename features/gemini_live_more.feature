Feature: Gemini live calls: long answers streamed, pre-send checks, media by URL and file, safety ratings
  As a developer whose agent runs on Gemini models
  I want long answers streamed, calls Gemini would refuse refused before they cost anything, images and PDFs given
  however I hold them, and what Gemini says of an answer's safety kept with it
  So that a Gemini actor behaves as the other providers' do, and I lose nothing Gemini told me

  Every call below goes through the unmodified google-genai SDK to the emulator's Gemini API, in process.

  Background:
    Given an emulated Gemini API

  # -- streaming -------------------------------------------------------------------------------------------------

  Scenario Outline: An answer that may be long is streamed, and comes back the same as one answered whole: <case>
    Given a Gemini actor "long" with:
      """
      provider_options: {gemini: {include_thoughts: true}}
      """
    When the Gemini actor is asked a long question allowing 8000 tokens, then 4000, <case>
    Then the streamed answer is the one answered whole, but for its ids
    And the API received these calls:
      | call                           | count |
      | gemini.stream_generate_content | 1     |
      | gemini.generate_content        | 1     |

    Examples:
      | case          |
      | in text       |
      | calling a tool |
      | for JSON      |

  Scenario: A stream broken midway is retried, and the answer is whole
    Given a Gemini actor "long"
    And the Gemini emulator breaks the next streamed answer after its first chunk
    When the Gemini actor is asked a long question allowing 8000 tokens
    Then the Gemini answer is the emulated reply to the long question
    And the API received these calls:
      | call                           | count |
      | gemini.stream_generate_content | 2     |
      | gemini.generate_content        | 0     |

  Scenario Outline: A stream <how>, with no retries left, is a retryable connection error
    Given a Gemini actor "hasty" with:
      """
      live: {retries: {connection: 0}}
      """
    And <fault>
    When the Gemini actor is asked a long question allowing 8000 tokens
    Then an APIConnectionError is raised
    And the error is retryable

    Examples:
      | how                                  | fault                                                                          |
      | broken midway                        | the Gemini emulator breaks the next streamed answer after its first chunk      |
      | ended cleanly before its finish      | the Gemini emulator ends the next streamed answer cleanly after its first chunk |

  # -- the models list -------------------------------------------------------------------------------------------

  Scenario: An unknown model is refused before anything is generated, naming the models it may have meant
    Given a Gemini actor "typo" with:
      """
      model: gemini-2.5-flsh
      """
    When the actor is asked "Hello"
    Then a ConfigurationError is raised
    And the error names the field "model"
    And the error message contains "has no model 'gemini-2.5-flsh'. Did you mean 'gemini-2.5-flash'"
    And Gemini's API was asked about the model 1, listed its models 1, counted 0, generated 0
    When the actor is asked "Hello"
    Then a ConfigurationError is raised
    And Gemini's API was asked about the model 1, listed its models 1, counted 0, generated 0

  Scenario: A model is asked about once, however many calls name it
    Given a Gemini actor "known"
    When the actor is asked "Hello"
    And the actor is asked "Hello again"
    Then the Gemini call succeeded
    And Gemini's API was asked about the model 1, listed its models 0, counted 0, generated 2

  Scenario: A model nothing is near is refused without suggestions
    Given a Gemini actor "lost" with:
      """
      model: claude-tidal
      """
    When the actor is asked "Hello"
    Then a ConfigurationError is raised
    And the error message contains "has no model 'claude-tidal' (its models list names the models it serves)"

  Scenario: max_tokens beyond what the model may write is refused before anything is generated
    Given a Gemini actor "wordy" with:
      """
      model: gemini-2.0-flash
      max_tokens: 9000
      """
    When the actor is asked "Hello"
    Then a ConfigurationError is raised
    And the error names the field "max_tokens"
    And the error message contains "at most 8192 output tokens"
    And Gemini's API was asked about the model 1, listed its models 0, counted 0, generated 0

  Scenario: When the models endpoint fails, the check is skipped and the call goes on; it is asked again next time
    Given a Gemini actor "patient"
    And the Gemini emulator fails the next models.get call with status 500
    When the actor is asked "Hello"
    Then the Gemini call succeeded
    When the actor is asked "Hello again"
    Then Gemini's API was asked about the model 2, listed its models 0, counted 0, generated 2

  Scenario: A key the models endpoint refuses is the call's own error, and nothing is generated
    Given a Gemini actor "locked"
    And the Gemini emulator fails the next models.get call with status 403
    When the actor is asked "Hello"
    Then a PermissionDeniedError is raised
    And Gemini's API was asked about the model 1, listed its models 0, counted 0, generated 0

  Scenario: A key Gemini does not know is the call's own error from the model's look-up, and nothing is generated
    Given an emulated Gemini API that knows only the key "AIza-another-key"
    And a Gemini actor "stranger"
    When the actor is asked "Hello"
    Then an InvalidRequestError is raised
    And the error message contains "API key not valid"
    And Gemini's API was asked about the model 1, listed its models 0, counted 0, generated 0

  Scenario: A 400 of token counting that is not about the key skips the count, and the request goes on
    Given a Gemini actor "reader"
    And the Gemini emulator fails the next count_tokens call with status 400
    When the Gemini actor is asked "Hello" given an inline PDF
    Then the Gemini call succeeded
    And Gemini's API was asked about the model 1, listed its models 0, counted 1, generated 1

  Scenario: An unknown model whose endpoint cannot list its models is refused without suggestions
    Given a Gemini actor "typo" with:
      """
      model: gemini-2.5-flsh
      """
    And the Gemini emulator fails the next models.list call with status 503
    When the actor is asked "Hello"
    Then a ConfigurationError is raised
    And the error message contains "(its models list names the models it serves)"

  # -- token counting --------------------------------------------------------------------------------------------

  Scenario: Input tokens are counted only when the request's bytes could be over the model's window
    Given a Gemini actor "reader"
    When the actor is asked "Hello"
    Then Gemini's API was asked about the model 1, listed its models 0, counted 0, generated 1
    When the Gemini actor is asked a prompt of 1100000 characters
    Then the Gemini call succeeded
    And Gemini's API was asked about the model 1, listed its models 0, counted 1, generated 2

  Scenario: An input over the model's window is refused before it is sent
    Given a Gemini actor "reader"
    When the Gemini actor is asked a prompt of 4400000 characters
    Then a ConfigurationError is raised
    And the error names the field "messages.0"
    And the error message contains "reads at most 1,048,576 (its context window)"
    And Gemini's API was asked about the model 1, listed its models 0, counted 1, generated 0

  Scenario: A document's tokens are not bounded by its bytes: it is counted (system prompt and tools too), once
    Given a Gemini actor "reader" with:
      """
      system_prompt: You read tide tables.
      """
    When the Gemini actor is asked "Hello" given an inline PDF and a tool
    Then the Gemini call succeeded
    When the Gemini actor is asked about an inline PDF and a tool again
    Then Gemini's API was asked about the model 1, listed its models 0, counted 1, generated 2
    And Gemini counted a first turn holding the system prompt and the tool's declaration

  Scenario: Token counting that fails is skipped, and the request goes on
    Given a Gemini actor "reader"
    And the Gemini emulator fails the next count_tokens call with status 500
    When the Gemini actor is asked "Hello" given an inline PDF
    Then the Gemini call succeeded
    And Gemini's API was asked about the model 1, listed its models 0, counted 1, generated 1

  # -- media -----------------------------------------------------------------------------------------------------

  Scenario Outline: <case> reaches Gemini as it takes it
    Given a Gemini actor "viewer"
    When the Gemini actor is asked "Hello" given <case>
    Then the Gemini call succeeded
    And Gemini was sent, in its generateContent body:
      | path                    | value   |
      | contents.0.parts.0.<at> | <value> |

    Examples:
      | case                       | at         | value                                                                                  |
      | an image by URL            | fileData   | {"file_uri": "https://tides.example/chart.JPG?v=2", "mime_type": "image/jpeg"}         |
      | a PDF by URL               | fileData   | {"file_uri": "https://tides.example/tables.pdf", "mime_type": "application/pdf"}       |
      | an uploaded image          | fileData   | {"file_uri": "https://generativelanguage.googleapis.com/v1beta/files/chart-7x"}        |
      | an uploaded PDF by its URI | fileData   | {"file_uri": "https://generativelanguage.googleapis.com/v1beta/files/tables9", "mime_type": "application/pdf"} |
      | an inline image            | inlineData | {"mime_type": "image/png", "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="} |
      | an inline text document    | inlineData | {"mime_type": "text/plain", "data": "SGlnaCB0aWRlIGF0IDY="}                            |

  Scenario Outline: What Gemini cannot take of media is refused before anything is sent: <case>
    Given a Gemini actor "viewer"
    When the Gemini actor is asked "Hello" given <case>
    Then a ConfigurationError is raised
    And the error names the field "<field>"
    And the error message contains "<mention>"
    And nothing was sent to Gemini

    Examples:
      | case                                     | field                                      | mention                                          |
      | an image by a URL without its type       | messages[0].content[0].source.url          | must be told an image URL's type                 |
      | an image by a URL of a GIF               | messages[0].content[0].source.media_type   | cannot take an image of type 'image/gif'         |
      | an image by an FTP URL                   | messages[0].content[0].source.url          | http and https URLs only                         |
      | an inline GIF                            | messages[0].content[0].source.media_type   | cannot take an image of type 'image/gif'         |
      | an inline Word document                  | messages[0].content[0].source.media_type   | cannot take a document of type 'application/msword' |
      | another API's file id                    | messages[0].content[0].source.file_id      | not a Gemini file                                |
      | a file name Gemini never gives           | messages[0].content[0].source.file_id      | named files/<id>                                 |
      | an image whose data is a URL of no kind  | messages[0].content[0].source              | not base64 data with its media type              |

  # -- safety ratings --------------------------------------------------------------------------------------------

  Scenario: An answer's safety ratings are on its response, streamed or not
    Given a Gemini actor "rated"
    When the actor is asked "Is the harbour open?"
    Then the Gemini answer's provider details hold its safety ratings, each negligible
    When the Gemini actor is asked a long question allowing 8000 tokens
    Then the Gemini answer's provider details hold its safety ratings, each negligible

  Scenario: A live bulk run keeps each answer's safety ratings in the ledger
    Given a Gemini actor "rated"
    When the Gemini actor maps 3 prompts in live mode
    And the Gemini actor maps the same 3 prompts in live mode again
    Then each of the Gemini run's 3 results holds its safety ratings, read back from the ledger

  Scenario: An answer stored as the ledger stores a batch's result comes back with its provider details
    Then a Gemini answer with safety ratings, stored as a result and read back, keeps them; one without has none

  Scenario: What Gemini says of an answer beyond the neutral fields is kept as its provider details
    Then a Gemini body with these fields gives these provider details:
      | fields                                                                                                      | details                                                                                                   |
      | {}                                                                                                          |                                                                                                           |
      | {"candidate": {"citationMetadata": {"citationSources": [{"uri": "https://tides.example", "startIndex": 0}]}}} | {"citation_metadata": {"citationSources": [{"uri": "https://tides.example", "startIndex": 0}]}}            |
      | {"body": {"promptFeedback": {"safetyRatings": [{"category": "HARM_CATEGORY_HARASSMENT", "probability": "LOW"}]}}} | {"prompt_feedback": {"safetyRatings": [{"category": "HARM_CATEGORY_HARASSMENT", "probability": "LOW"}]}} |
      | {"candidate": {"safetyRatings": []}}                                                                         |                                                                                                           |

  Scenario: A stream's chunks are joined into the body Gemini would have sent whole
    Then these streamed Gemini chunks are joined into this body:
      | chunks | body | finished |
      | [{"candidates": [{"content": {"parts": [{"text": "Let ", "thought": true}]}}]}, {"candidates": [{"content": {"parts": [{"text": "me see", "thought": true, "thoughtSignature": "c2ln"}]}}]}, {"candidates": [{"content": {"parts": [{"text": "High "}]}}]}, {"candidates": [{"content": {"parts": [{"text": "tide"}]}, "finishReason": "STOP", "citationMetadata": {"citationSources": [{"uri": "u"}]}}], "usageMetadata": {"promptTokenCount": 3}, "modelVersion": "m", "responseId": "r"}] | {"candidates": [{"finishReason": "STOP", "content": {"role": "model", "parts": [{"text": "Let me see", "thought": true, "thoughtSignature": "c2ln"}, {"text": "High tide"}]}, "citationMetadata": {"citationSources": [{"uri": "u"}]}}], "usageMetadata": {"promptTokenCount": 3}, "modelVersion": "m", "responseId": "r"} | yes |
      | [{"candidates": [{"content": {"parts": [{"functionCall": {"name": "f"}}]}}]}, {"candidates": [{"content": {"parts": [{"functionCall": {"name": "g"}}]}}]}] | {"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "f"}}, {"functionCall": {"name": "g"}}]}}]} | no |
      | [{"promptFeedback": {"blockReason": "SAFETY"}}, {"promptFeedback": {"blockReason": "OTHER"}}] | {"promptFeedback": {"blockReason": "SAFETY"}} | yes |
      | [] | {} | no |

  # -- live limits -----------------------------------------------------------------------------------------------

  Scenario: A Gemini actor's configured requests per minute pace its calls, so none meets the API's 429
    Given an emulated Gemini API allowing 2 requests per minute per key
    And a Gemini actor "paced" with:
      """
      live: {rpm: 2}
      """
    When the Gemini actor maps 4 prompts in live mode, timed
    Then the Gemini run's 4 results are in input order, each the emulated reply to its prompt, each priced
    And the Gemini run took at least 60 seconds, and no call met a 429
