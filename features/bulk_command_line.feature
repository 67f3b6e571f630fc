Feature: Bulk runs from the command line: lowtide run, retry and status RUN
  As an operator with a file of inputs
  I want `lowtide run` to send every row through batches and write one result line per row, in order
  So that I can process a data set, resume it, retry what failed and see where it stands, without writing a program

  Background:
    Given an emulated Anthropic API served on a socket, whose batches take 0 seconds
    And an actor file "actor.yaml" for that API, with the key in "LOWTIDE_SCENARIO_KEY":
      """
      name: reviewer
      model: claude-sonnet-5-5
      max_tokens: 64
      batch_processing: batch
      batch: {poll_interval: 0.05, max_attempts: 1}
      """
    And a CSV file "reviews.csv" of 7 reviews, with review 3 ending as errored

  Scenario: A CSV through a prompt template: one line per row, in order, and exit 1 when a row failed
    When "lowtide run reviews.csv --actor actor.yaml --template 'Summarize: {review}' --id-column id --run-id rv --out out.jsonl --progress none" runs in the scenario's folder
    Then the command exits with 1
    And the command printed "run rv: 7 item(s): 6 succeeded, 1 failed"
    And the command printed "lowtide retry rv"
    And "out.jsonl" has 7 lines in order, with ids "r0" to "r6", line 3 failed and the others the emulated replies to "Summarize: ..."

  Scenario: lowtide retry sends the failed rows again; the run then ends with every row answered
    Given a CSV file "clean.csv" of 7 reviews
    And the API will end request "rv-3" as errored with overloaded_error in the first batch only
    When "lowtide run clean.csv --actor actor.yaml --template 'Summarize: {review}' --run-id rv --out out.jsonl --progress none" runs in the scenario's folder
    Then the command exits with 1
    When "lowtide retry rv --progress none" runs in the scenario's folder
    Then the command exits with 0
    And the command printed "run rv: 7 item(s): 7 succeeded"
    And the API received a batch with only the request "rv-3-a2"
    And "out.jsonl" has 7 lines in order, all succeeded
    When "lowtide status rv" runs in the scenario's folder
    Then the command exits with 0
    And the command printed "run rv (actor reviewer): 7 item(s): 7 succeeded"

  Scenario: A JSONL input with a dry run prints the plan as JSON and sends nothing
    Given a JSONL file "jobs.jsonl" of 5 prompts
    When "lowtide run jobs.jsonl --actor actor.yaml --items-per-batch 2 --dry-run --json" runs in the scenario's folder
    Then the command exits with 0
    And the command printed a JSON plan of 3 batches with 2, 2 and 1 requests
    And the API received no calls at all

  Scenario Outline: Mistakes are refused with a clear message and exit 2, before anything is sent
    When "<command>" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "<message>"
    And the API received no calls at all

    Examples:
      | command                                                                                   | message                                   |
      | lowtide run reviews.csv --actor actor.yaml                                                | A CSV input needs --template              |
      | lowtide run reviews.csv --actor actor.yaml --template 'Say {nope}'                        | nope                                      |
      | lowtide run notes.txt --actor actor.yaml                                                  | unknown input kind '.txt'                 |
      | lowtide run jobs.jsonl --actor actor.yaml --template 'x {y}'                              | --template, --file-column and --id-column are for CSV inputs |
      | lowtide run reviews.csv --actor actor.yaml --template '{review}' --response-model nowhere | module:Class                              |
      | lowtide run reviews.csv --actor actor.yaml --template '{review}' --run-id 'no good'       | Run id 'no good' must be                  |
      | lowtide status missing-run                                                                | has no run 'missing-run'                  |
      | lowtide retry missing-run                                                                 | has no run 'missing-run'                  |
