Feature: What the real APIs were recorded sending is read right by lowtide's codecs
  As a user whose batches run against the real APIs, not only the emulator
  I want every shape the APIs were recorded answering with read into the right outcome
  So that a real answer is never lost or misread, and a failed request keeps the id its support asks for

  # The recorded lines, and where each came from: features/data/recorded/README.md.

  Scenario: A Message Batch's recorded results: an answer by a dated model, two kinds of error, a cancel
    When the recorded lines "anthropic/batch_results.jsonl" are read by the "anthropic" provider's codec
    Then the recorded outcomes are:
      | custom_id | outcome              | model                     | text | input | output | error type            | request id                    |
      | ok-1      | ActorResponse        | claude-haiku-4-5-20251001 | 1    | 16    | 5      |                       |                               |
      | bad-model | BatchRequestErrored  |                           |      |       |        | not_found_error       | none                          |
      | image_url | BatchRequestErrored  |                           |      |       |        | invalid_request_error | workerreq_01RecordedRedactedB |
      | c-1       | BatchRequestCanceled |                           |      |       |        |                       |                               |

  Scenario: The Batch API's documented output line is an answer
    When the recorded lines "openai/batch_output.jsonl" are read by the "openai" provider's codec
    Then the recorded outcomes are:
      | custom_id | outcome       | model       | text            | input | output |
      | request-2 | ActorResponse | gpt-4o-mini | 2 + 2 equals 4. | 24    | 15     |
