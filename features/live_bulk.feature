@stores
Feature: Live bulk runs: many inputs answered by live calls at the rate limits, durably
  As an operator whose bulk work cannot wait for batches
  I want `actor.map(inputs, mode="live")` and `lowtide run --mode live` to answer every input by a live call at the
  actor's limits, with everything bulk runs have (results in order, progress, limits, retry, resume)
  So that a crash halfway never pays twice, an abort loses nothing, and I can see the plan before paying

  Time is virtual: the emulator answers each call in the time given, on the same clock as the run.

  Background:
    Given a live API emulated on a virtual clock for bulk runs, answering each call in 2 seconds

  Scenario: A live run answers every input once, in input order, at the configured rate, with usage and cost summed
    Given the emulated API allows 30 requests per minute per key
    And a live bulk actor with:
      """
      live: {rpm: 30, max_concurrency: 8}
      """
    When the actor maps 40 prompts in live mode, with a results directory
    Then the run's 40 results are in input order, each the emulated reply to its prompt
    And the API answered each of the 40 prompts exactly once, and no call with 429
    And the run took between 20 and 30 seconds
    And progress was reported with calls in flight and ended at 40 of 40 items
    And the results directory holds 40 lines in input order, each with its usage and cost
    And the run's summary says "40 succeeded; live;" with its cost and tokens summed over the items
    And the actor's observers saw each of the 40 items finish after its answer was stored, and the run's progress up to 40 of 40

  Scenario: A run killed midway and started again calls the API only for the items without a stored answer
    Given each live answer takes 0.01 seconds longer than the one before
    And a live bulk actor with:
      """
      live: {max_concurrency: 4, ramp_start: 4}
      """
    When the actor maps 20 prompts in live mode and the process dies after 9 answers
    Then the ledger holds a stored answer for at least 9 of the 20 items
    When the actor maps the same 20 prompts in live mode again
    Then all 20 items succeeded
    And the second go called the API only for the items that had no stored answer
    And the second go's progress began from the stored answers, its ETA unknown until it had answers of its own
    And the API answered each of the 20 prompts exactly once, and no call with 429

  Scenario Outline: <signal> during a live run lets the calls in flight finish and stores their answers; started again, the run pays for nothing twice
    Given each live answer takes 0.01 seconds longer than the one before
    And a live bulk actor with:
      """
      live: {max_concurrency: 4, ramp_start: 4}
      """
    When the actor maps 20 prompts in live mode and <signal> arrives after 9 answers
    Then the run ended "interrupted by <signal>", exit status <status>, once its calls in flight were answered
    And every answer the API gave is stored in the ledger
    And the items never started were recorded not run with "not attempted: interrupted by <signal>"
    When the actor maps the same 20 prompts in live mode again
    Then all 20 items succeeded
    And the second go called the API only for the items that had no stored answer
    And the API answered each of the 20 prompts exactly once, and no call with 429

    Examples:
      | signal  | status |
      | SIGINT  | 130    |
      | SIGTERM | 143    |

  Scenario: A second Ctrl-C cancels the calls in flight instead of waiting; started again, the run sends them
    Given each live answer takes 0.01 seconds longer than the one before
    And a live bulk actor with:
      """
      live: {max_concurrency: 4, ramp_start: 4}
      """
    When the actor maps 20 prompts in live mode and SIGINT arrives twice after 9 answers
    Then the run ended "interrupted by SIGINT", its calls in flight canceled with "canceled in flight: interrupted twice (by SIGINT)"
    And every answer the API gave is stored in the ledger
    When the actor maps the same 20 prompts in live mode again
    Then all 20 items succeeded
    And the API answered each of the 20 prompts exactly once, and no call with 429

  Scenario: An authentication error aborts the run; draining lets the calls in flight finish, and retry loses nothing
    Given a live bulk actor with:
      """
      live: {max_concurrency: 4, ramp_start: 4}
      """
    And the emulated API fails the next live call with 401
    When the actor maps 12 prompts in live mode, aborting on "authentication" by draining
    Then 3 items succeeded, 1 failed with "AuthenticationError" and 8 were not run with "not attempted: the run aborted on an error of class authentication"
    When the run is retried
    Then all 12 items succeeded
    And the API answered each of the 12 prompts exactly once, and no call with 429

  Scenario: Cancelling on abort fails the calls in flight with the reason; nothing submitted is lost on retry
    Given a live bulk actor with:
      """
      live: {max_concurrency: 4, ramp_start: 4}
      """
    And the emulated API fails the next live call with 401
    When the actor maps 12 prompts in live mode, aborting on "authentication" by cancelling
    Then 0 items succeeded, 4 failed with "AuthenticationError|canceled in flight: the run aborted on an error of class authentication" and 8 were not run with "not attempted: the run aborted on an error of class authentication"
    And no answer was stored for the calls cancelled in flight
    When the run is retried
    Then all 12 items succeeded
    And the API answered each of the 12 prompts exactly once, and no call with 429

  Scenario: A run started again after an abort keeps the stored failure and calls only the items not attempted
    Given a live bulk actor with:
      """
      live: {max_concurrency: 4, ramp_start: 4}
      """
    And the emulated API fails the next 2 live calls with 401
    When the actor maps 12 prompts in live mode, aborting on "authentication" by draining
    Then 2 items succeeded, 2 failed with "AuthenticationError" and 8 were not run with "not attempted: the run aborted on an error of class authentication"
    When the actor maps the same 12 prompts in live mode again
    Then 10 items succeeded, 2 failed with "AuthenticationError" and 0 were not run with "-"
    And the second go called the API only for the items that had no stored answer

  Scenario Outline: Each error class aborts the run when chosen: <class>
    Given a live bulk actor with:
      """
      live: {max_concurrency: 4, ramp_start: 4, retries: {overloaded: 0, server: 0}}
      """
    And the emulated API fails the next live call with <status>
    When the actor maps 12 prompts in live mode, aborting on "<class>" by draining
    Then 3 items succeeded, 1 failed with "<error>" and 8 were not run with "not attempted: the run aborted on an error of class <class>"

    Examples:
      | status | class           | error                 |
      | 401    | authentication  | AuthenticationError   |
      | 403    | permission      | PermissionDeniedError |
      | 404    | not_found       | NotFoundError         |
      | 400    | invalid_request | InvalidRequestError   |
      | 529    | overloaded      | OverloadedError       |
      | 500    | server          | ServerError           |

  Scenario: A call past its per-item deadline fails its item; aborting on "deadline" stops the run, and a run started again calls the rest
    Given a live bulk actor with:
      """
      live: {max_concurrency: 4, ramp_start: 4, deadline: 1}
      """
    When the actor maps 12 prompts in live mode, aborting on "deadline" by draining
    Then 0 items succeeded, 4 failed with "DeadlineExceededError" and 8 were not run with "not attempted: the run aborted on an error of class deadline"
    When the actor maps the same 12 prompts in live mode again
    Then 0 items succeeded, 12 failed with "DeadlineExceededError" and 0 were not run with "-"
    And the second go called the API only for the items that had no stored answer

  Scenario Outline: Live options are checked before anything is sent: <option>
    Given a live bulk actor with:
      """
      live: {max_concurrency: 4}
      """
    When the actor maps 3 prompts with <option>
    Then the map is refused with "<message>"
    And the API was not called, and the ledger holds no run

    Examples:
      | option                                     | message                                                        |
      | mode "stream"                              | mode must be 'batch' or 'live', not 'stream'                   |
      | mode "live" and abort_mode "wait"          | abort_mode must be 'drain' or 'cancel', not 'wait'             |
      | mode "live" and abort_on "auth"            | abort_on: unknown error class(es) auth; choose from            |
      | mode "live" and post_process_timeout "0"   | post_process_timeout must be more than 0 seconds               |
      | mode "batch" and abort_on "authentication" | abort_on and post_process are for live runs (mode='live')      |
      | mode "live" and items_per_batch "10"       | items_per_batch and max_parallel_batches are for batch runs    |
      | mode "live" and max_parallel_batches "2"   | items_per_batch and max_parallel_batches are for batch runs    |

  Scenario: An error class not chosen does not abort the run
    Given a live bulk actor with:
      """
      live: {max_concurrency: 4, ramp_start: 4}
      """
    And the emulated API fails the next live call with 401
    When the actor maps 12 prompts in live mode, aborting on "permission" by draining
    Then 11 items succeeded, 1 failed with "AuthenticationError" and 0 were not run with "-"

  Scenario: The whole-run deadline cancels the calls in flight and leaves the rest not attempted
    Given the emulated API answers each live call in 10 seconds
    And a live bulk actor with:
      """
      live: {max_concurrency: 4, ramp_start: 4}
      """
    When the actor maps 16 prompts in live mode with a time limit of 25 seconds
    Then 8 items succeeded, 4 failed with "canceled in flight: time limit of 25s passed" and 4 were not run with "not attempted: time limit of 25s passed"
    And the run took between 25 and 26 seconds
    When the run is retried
    Then all 16 items succeeded

  Scenario: A post-processor runs on each answer; its failure or timeout fails the item, the answer kept, and retry runs it again without a second call
    Given a live bulk actor with:
      """
      live: {max_concurrency: 4, ramp_start: 4}
      """
    And a post-processor that fails on prompt 2 and takes 60 seconds on prompt 5, with a timeout of 5 seconds
    When the actor maps 8 prompts in live mode with the post-processor
    Then 6 items succeeded, 2 failed with "post-processor" and 0 were not run with "-"
    And item 2 failed with "post-processor failed: ValueError: cannot file prompt 2" and kept its answer
    And item 5 failed with "post-processor did not finish within 5s" and kept its answer
    And the post-processor saw the answers of the 6 other items
    When the actor maps the same 8 prompts in live mode again
    Then 6 items succeeded, 2 failed with "post-processor" and 0 were not run with "-"
    And the second go called the API only for the items that had no stored answer
    When the post-processor is mended and the run is retried with it
    Then all 8 items succeeded
    And the API answered each of the 8 prompts exactly once, and no call with 429

  Scenario: An answer that does not fit the response model fails its item; it is kept, and never paid for again
    Given a live bulk actor with:
      """
      live: {max_concurrency: 4, ramp_start: 4}
      """
    When the actor maps 4 prompts in live mode into a response model no answer fits
    Then every item failed with the answer that did not fit kept, and its cost counted
    And the second go called the API only for the items that had no stored answer
    When the actor maps the same 4 prompts in live mode into that model again
    Then every item failed with the answer that did not fit kept, and its cost counted
    And the second go called the API only for the items that had no stored answer

  Scenario: The cost limit is hard: a call starts only if its worst case fits beside those in flight
    Given a live bulk actor with:
      """
      max_tokens: 1000
      live: {max_concurrency: 4, ramp_start: 4}
      """
    When the actor maps 6 prompts in live mode with a cost limit of $0.02
    Then all 6 items succeeded
    And the run's real cost is within $0.02
    And at most 1 call was in flight at once
    When the actor maps 3 prompts in live mode with a cost limit of $0.01
    Then 0 items succeeded, 0 failed with "-" and 3 were not run with "cost limit $0.01"
    And the API answered each of the 6 prompts exactly once, and no call with 429

  Scenario: A live dry run prints the plan and sends nothing
    Given a live bulk actor with:
      """
      max_tokens: 100
      live: {rpm: 30, output_tpm: 2000, max_concurrency: 8}
      """
    When the actor plans 60 prompts in live mode
    Then the plan has 60 items to call, their estimated input tokens, 6000 output tokens at most and a cost range
    And the plan expects about 3m00s at the configured limits, bound by output_tpm
    And the API was not called, and the ledger holds no run

  Scenario: A live dry run under a cost limit says what would not run; without limits it gives no time
    Given a live bulk actor with:
      """
      max_tokens: 1000
      live: {max_concurrency: 8}
      """
    When the actor plans 10 prompts in live mode with a cost limit of $0.05
    Then the live plan says "4 to call", "cost limit: $0.05" and "6 item(s) would not run"
    And the live plan says "expected time: unknown", "limits: none configured" and "nothing was sent"
    And the API was not called, and the ledger holds no run

  Scenario: lowtide run --mode live answers every row by a live call; --dry-run prints the plan and sends nothing
    Given an emulated Anthropic API served on a socket, whose batches take 0 seconds
    And an actor file "actor.yaml" for that API, with the key in "LOWTIDE_SCENARIO_KEY":
      """
      name: reviewer
      model: claude-sonnet-5-5
      max_tokens: 64
      live: {rpm: 600, max_concurrency: 4}
      """
    And a CSV file "reviews.csv" of 7 reviews
    When "lowtide run reviews.csv --actor actor.yaml --template 'Summarize: {review}' --id-column id --run-id rv --mode live --dry-run" runs in the scenario's folder
    Then the command exits with 0
    And the command printed "run rv (live): 7 item(s), 0 already answered, 7 to call"
    And the command printed "limits: rpm 600; at most 4 call(s) in flight"
    And the command printed "nothing was sent"
    And the socket API served no live call
    When "lowtide run reviews.csv --actor actor.yaml --template 'Summarize: {review}' --id-column id --run-id rv --mode live --out out.jsonl --progress none" runs in the scenario's folder
    Then the command exits with 0
    And the command printed "run rv: 7 item(s): 7 succeeded; live;"
    And the socket API served 7 live calls
    When "lowtide run reviews.csv --actor actor.yaml --template 'Summarize: {review}' --id-column id --run-id rv --mode live --progress none" runs in the scenario's folder
    Then the command exits with 0
    And the socket API served 7 live calls
    When "lowtide status rv" runs in the scenario's folder
    Then the command exits with 0
    And the command printed "run rv (actor reviewer): 7 item(s): 7 succeeded"
    And the command printed "0 batch(es); live calls; $"

  Scenario: lowtide run --mode live --abort-on stops at a bad key, exiting 3; lowtide retry then sends what was not answered
    The API refused a call (the key): exit status 3, as for every command, and the last line says so.

    Given an emulated Anthropic API served on a socket, whose batches take 0 seconds
    And an actor file "actor.yaml" for that API, with the key in "LOWTIDE_SCENARIO_KEY":
      """
      name: reviewer
      model: claude-sonnet-5-5
      max_tokens: 64
      live: {max_concurrency: 1, ramp_start: 1}
      """
    And a CSV file "reviews.csv" of 6 reviews
    And the socket API fails the next live call with 401
    When "lowtide run reviews.csv --actor actor.yaml --template 'Summarize: {review}' --run-id rv --mode live --abort-on authentication --progress none" runs in the scenario's folder
    Then the command exits with 3
    And the command printed on stderr "lowtide: the API refused or failed a call: invalid x-api-key"
    And the command printed on stderr "send the rest with lowtide retry rv once the cause is fixed."
    And the command printed "run rv: 6 item(s): 1 failed, 5 not-run; live;"
    And the command printed "5 item(s): not attempted: the run aborted on an error of class authentication"
    And the command printed "send the failed, expired and not attempted items again with: lowtide retry rv"
    When "lowtide retry rv --progress none" runs in the scenario's folder
    Then the command exits with 0
    And the command printed "run rv: 6 item(s): 6 succeeded; live;"
    And the socket API served 7 live calls, answering 6

  Scenario: --abort-on is for live runs, and names only known error classes; batch options are refused in a live run
    Given an emulated Anthropic API served on a socket, whose batches take 0 seconds
    And an actor file "actor.yaml" for that API, with the key in "LOWTIDE_SCENARIO_KEY":
      """
      name: reviewer
      model: claude-sonnet-5-5
      max_tokens: 64
      """
    And a CSV file "reviews.csv" of 3 reviews
    When "lowtide run reviews.csv --actor actor.yaml --template 'Summarize: {review}' --abort-on authentication" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "are for live runs (--mode live)"
    When "lowtide run reviews.csv --actor actor.yaml --template 'Summarize: {review}' --mode live --abort-on authentification" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "unknown error class(es) authentification"
    When "lowtide run reviews.csv --actor actor.yaml --template 'Summarize: {review}' --mode live --max-parallel-batches 2" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "--items-per-batch and --max-parallel-batches are for batch runs"
