Feature: The emulator's xAI batches: requests it cannot take refused as xAI's API refuses them, and kept across restarts
  As an engineer testing an xAI batch client against the emulator
  I want each malformed create, add, page or id answered with OpenAI-shaped errors that name the field at fault,
  and the batches made kept in the emulator's state file
  So that my client's error handling is exercised as the real API would exercise it, and a restart loses no batch

  Background:
    Given an emulator of xAI's batches taking 600 seconds, keeping its state in a file

  Scenario Outline: A request the xAI batch API cannot take is refused with a 400 or 404 naming what is wrong
    Given an xAI batch "night run" holding the request "r1"
    When the xAI emulator is sent <method> "<path>" with the body <body>
    Then the xAI emulator answered <status> with the message "<message>"
    And the xAI batch "night run" still holds the requests "r1"

    Examples:
      | method | path                                        | body                                                                                     | status | message                                                                      |
      | POST   | /xai/v1/batches                             | {}                                                                                       | 400    | Missing required parameter: 'name'.                                          |
      | POST   | /xai/v1/batches                             | {"name": ""}                                                                             | 400    | Missing required parameter: 'name'.                                          |
      | GET    | /xai/v1/batches/batch_nope                  | -                                                                                        | 404    | No such batch object: batch_nope                                             |
      | POST   | /xai/v1/batches/<batch>/requests            | {}                                                                                       | 400    | Missing required parameter: 'batch_requests'.                                |
      | POST   | /xai/v1/batches/<batch>/requests            | {"batch_requests": []}                                                                   | 400    | Missing required parameter: 'batch_requests'.                                |
      | POST   | /xai/v1/batches/<batch>/requests            | {"batch_requests": [{"batch_request": {"chat_get_completion": {}}}]}                    | 400    | Missing required parameter: 'batch_requests[0].batch_request_id'.            |
      | POST   | /xai/v1/batches/<batch>/requests            | {"batch_requests": [{"batch_request_id": "r2", "batch_request": {"image": {}}}]}         | 400    | batch_requests[0]: only chat_get_completion requests are emulated.           |
      | POST   | /xai/v1/batches/<batch>/requests            | {"batch_requests": [{"batch_request_id": "r1", "batch_request": {"chat_get_completion": {}}}]} | 400 | batch_requests[0]: batch_request_id 'r1' is in the batch already.    |
      | GET    | /xai/v1/batches?pagination_token=abc        | -                                                                                        | 400    | Invalid 'pagination_token': 'abc'.                                           |
      | GET    | /xai/v1/batches?limit=0                     | -                                                                                        | 400    | Invalid 'limit': '0'. Expected 1 to 100.                                     |
      | GET    | /xai/v1/batches/<batch>/requests?limit=many | -                                                                                        | 400    | Invalid 'limit': 'many'. Expected 1 to 100.                                  |

  Scenario: The same request id twice in one add is refused whole: neither is added
    Given an xAI batch "night run" holding the request "r1"
    When the xAI emulator is sent POST "/xai/v1/batches/<batch>/requests" with the body {"batch_requests": [{"batch_request_id": "r2", "batch_request": {"chat_get_completion": {}}}, {"batch_request_id": "r2", "batch_request": {"chat_get_completion": {}}}]}
    Then the xAI emulator answered 400 with the message "batch_requests[1]: batch_request_id 'r2' is in the batch already."
    And the xAI batch "night run" still holds the requests "r1"

  Scenario: A cancelled batch refuses new requests, and is shown cancelled with its request counted
    Given an xAI batch "night run" holding the request "r1"
    When the xAI emulator is sent POST "/xai/v1/batches/<batch>:cancel" with the body -
    And the xAI emulator is sent POST "/xai/v1/batches/<batch>/requests" with the body {"batch_requests": [{"batch_request_id": "r2", "batch_request": {"chat_get_completion": {}}}]}
    Then the xAI emulator answered 400 with the message "Batch <batch> was cancelled: no request can be added to it."
    And the xAI batch "night run" still holds the requests "r1"
    And the xAI batch "night run" shows a cancel time and 1 request cancelled

  Scenario: The batches made are kept in the state file: a new emulator on it shows them, with their names and requests
    Given an xAI batch "night run" holding the request "r1"
    And an xAI batch "day run" holding the request "r2"
    When the xAI emulator is sent POST "/xai/v1/batches/<batch>:cancel" with the body -
    And a new xAI emulator starts on the same state file
    Then the xAI batch "night run" still holds the requests "r1"
    And the xAI batch "day run" still holds the requests "r2"
    And the xAI batch "day run" shows a cancel time and 1 request cancelled
