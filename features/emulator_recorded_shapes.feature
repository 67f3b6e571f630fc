Feature: The emulated Anthropic API answers as the real one was recorded answering
  As a developer whose tests trust the emulator
  I want the emulator's batches, results and errors in the shapes the real API was recorded sending
  So that code that passes against the emulator reads the real API's answers too

  # The recordings, and where each came from: features/data/recorded/README.md.

  Background:
    Given the emulator runs on a manual clock with 60 processing seconds

  Scenario: An ended batch's results have the recorded lines' shapes and values
    Given the emulator ends request "image_url" as errored with "invalid_request_error" saying "Unable to download the file. Please verify the URL and try again."
    When I create emulator batches like the recorded ones and they end
    Then every emulated line has the shape of its recorded line in "anthropic/batch_results.jsonl"
    And the emulated lines carry the recorded values:
      | custom_id | field                                  | value                                 |
      | ok-1      | result.message.model                   | "claude-haiku-4-5-20251001"           |
      | ok-1      | result.message.usage.service_tier      | "batch"                               |
      | ok-1      | result.message.usage.inference_geo     | "not_available"                       |
      | bad-model | result.error.error.type                | "not_found_error"                     |
      | bad-model | result.error.error.message             | "model: claude-does-not-exist-9"      |
      | bad-model | result.error.error.details             | {"error_visibility": "user_facing"}   |
      | bad-model | result.error.request_id                | null                                  |
      | image_url | result.error.error.details             | {"error_visibility": "user_facing"}   |
      | image_url | result.error.request_id                | workerreq_*                           |
      | c-1       | result                                 | {"type": "canceled"}                  |

  Scenario: A batch in progress: a hint of when to ask again, and the recorded errors for its results and its deletion
    When I create an emulator batch of 2 requests
    And I send the emulator a raw "GET" to "/v1/messages/batches/<id>"
    Then the emulator raw answer carries "retry-after: 10"
    When I send the emulator a raw "GET" to "/v1/messages/batches/<id>/results"
    Then the emulator raw answer is the recorded error "results_in_progress"
    When I send the emulator a raw "DELETE" to "/v1/messages/batches/<id>"
    Then the emulator raw answer is the recorded error "delete_in_progress"
    When the emulator clock advances 60 seconds
    And I send the emulator a raw "GET" to "/v1/messages/batches/<id>"
    Then the emulator raw answer carries no "retry-after" header
    When I send the emulator a raw "GET" to "/v1/messages/batches/<id>/results"
    Then the emulator raw answer carries "content-type: application/x-jsonl"

  Scenario: An unknown batch is the recorded 404
    When I send the emulator a raw "GET" to "/v1/messages/batches/msgbatch_01RecordedRedactedD"
    Then the emulator raw answer is the recorded error "unknown_batch"

  Scenario Outline: Every answer, an error too, names the account's organization and workspace
    When I send the emulator a raw "<method>" to "<path>"
    Then the emulator raw answer names the account's organization and workspace

    Examples:
      | method | path                                   |
      | GET    | /v1/messages/batches                   |
      | GET    | /v1/models                             |
      | GET    | /v1/messages/batches/msgbatch_unknown  |
      | POST   | /v1/messages/batches                   |
