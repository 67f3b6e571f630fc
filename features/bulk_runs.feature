@stores
Feature: Bulk runs: many inputs through batches, in order, resumable, within limits
  As a developer with a data set to process at half price
  I want to hand an actor thousands of inputs and get one result per input back, in order and grouped
  So that a run survives restarts without paying twice, keeps to my cost and time limits, and tells me what it did

  Background:
    Given an emulated Anthropic API whose batches take 60 seconds
    And an actor "reader" with:
      """
      batch_processing: batch
      max_tokens: 64
      batch: {poll_interval: 10, max_attempts: 1}
      """

  Scenario: Results come back one per input, in input order, and grouped by how they ended
    Given 12 prompts "Review {n}", with prompt 4 ending as errored and prompt 9 as expired
    When the actor maps the prompts with 5 items per batch
    Then the run has 12 results, each the emulated reply to its own prompt, in input order
    And the run's groups are 10 completed, 1 failed, 1 expired, 0 canceled and 0 not run
    And 2 items are to retry, the failed one and the expired one
    And result 4 failed with BatchRequestErrored
    And result 9 is expired
    And the API received 3 batches of 5, 5 and 2 requests

  Scenario Outline: Items are split by count: at and around the limit of a batch
    When <items> items of <size> bytes are split with at most <count> per batch and <bytes> bytes
    Then the batches hold <sizes> items

    Examples:
      | items  | size | count  | bytes     | sizes        |
      | 10     | 100  | 5      | 256000000 | 5, 5         |
      | 11     | 100  | 5      | 256000000 | 5, 5, 1      |
      | 100000 | 10   | 100000 | 256000000 | 100000       |
      | 100001 | 10   | 100000 | 256000000 | 100000, 1    |
      | 4      | 100  | 100000 | 400       | 4            |
      | 5      | 100  | 100000 | 400       | 4, 1         |
      | 3      | 256000000 | 100000 | 256000000 | 1, 1, 1 |

  Scenario Outline: A split that cannot be made is refused with the reason
    When <items> items of <size> bytes are split with at most <count> per batch and <bytes> bytes
    Then a ConfigurationError is raised
    And the error message contains "<message>"

    Examples:
      | items | size | count  | bytes     | message                                                                 |
      | 1     | 100  | 0      | 256000000 | items_per_batch must be between 1 and 100,000, not 0.                   |
      | 1     | 100  | 100001 | 256000000 | items_per_batch must be between 1 and 100,000, not 100001.              |
      | 1     | 100  | 5      | 0         | A batch may hold at most 256,000,000 bytes, not 0.                      |
      | 1     | 100  | 5      | 256000001 | A batch may hold at most 256,000,000 bytes, not 256,000,001.            |
      | 2     | 500  | 5      | 400       | Item 0 is 500 bytes as a batch request, more than a batch may hold (400). |

  Scenario: Items are split by bytes in a real run, each batch under the configured size
    Given an actor "reader" with:
      """
      batch_processing: batch
      max_tokens: 64
      batch: {poll_interval: 10, max_attempts: 1, max_batch_bytes: 2048}
      """
    And 9 prompts "A long review, padded to about five hundred bytes {n}" padded to 500 bytes
    When the actor maps the prompts, reporting progress to a callback
    Then every one of the 9 results succeeded
    And the API received 3 batches of 3, 3 and 3 requests
    And the progress counted 3 batches from the first report to the last, ending with 3 of 3 done
    And the run's result says it used 3 batches

  Scenario: An item too large for any batch is refused before anything is sent
    Given an actor "reader" with:
      """
      batch_processing: batch
      batch: {max_batch_bytes: 1024}
      """
    And 3 prompts "Review {n}", with prompt 2 padded to 2000 bytes
    When the actor maps the prompts with 1 items per batch
    Then a ConfigurationError is raised
    And the error message contains "Job 2 is about"
    And the error message contains "more than a batch may hold (1,024)"
    And the API received no calls at all

  Scenario: A run started again resumes: stored answers cost nothing and nothing is sent twice
    Given 6 prompts "Review {n}"
    When the actor maps the prompts with 3 items per batch
    And the actor maps the prompts with 3 items per batch again
    Then the second run has the same id and the same 6 answers as the first
    And the API received 2 batches of 3 and 3 requests

  Scenario: A run stopped while its batches were out picks them up again, in a new program
    Given 6 prompts "Review {n}"
    When a program starts mapping the prompts with 3 items per batch as run "reviews" and stops once its batches are out
    And a new program maps the prompts with 3 items per batch as run "reviews"
    Then the run has 6 results, each the emulated reply to its own prompt, in input order
    And the API received 2 batches of 3 and 3 requests

  Scenario: A resumed run counts the batches it finds out, those done before, and those it still has to send
    Given 9 prompts "Review {n}"
    When a program starts mapping the prompts with 3 items per batch, 1 batch at a time, as run "reviews" and stops once its first batch is out
    And a new program maps the prompts with 3 items per batch as run "reviews", reporting progress to a callback
    Then the first report said "batches 0/3 done, 1 in flight" and the last "batches 3/3 done, 0 in flight"
    When a new program maps the prompts with 3 items per batch as run "reviews", reporting progress to a callback
    Then the first report said "batches 3/3 done, 0 in flight" and the last "batches 3/3 done, 0 in flight"
    And the run's result says it used 3 batches

  Scenario: A run id names one set of inputs: other inputs under it are refused before anything is sent
    Given 3 prompts "Review {n}"
    When the actor maps the prompts as run "reviews"
    And the actor maps the prompts "Something else" as run "reviews"
    Then a ConfigurationError is raised
    And the error message contains "was made with other inputs or actor settings"
    And the API received 1 batch of 3 requests

  Scenario: The cost limit: batches go on while what was really spent, plus one more worst case, fits; the rest is not run, with the true spend
    Given 9 prompts "Review {n}"
    When the actor maps the prompts with 3 items per batch and a cost limit of 1.5 items' worst case
    Then the run's groups are 3 completed, 0 failed, 0 canceled and 6 not run
    And every item not run says the run has spent what its 3 answers cost, and one more worst case would cross the limit
    And the API received 3 batches of 1, 1 and 1 requests

  Scenario: A batch whose worst case does not fit beside the first is sent in part, and the rest leads the next batch
    Given 9 prompts "Review {n}"
    When the actor maps the prompts with 3 items per batch and a cost limit of 2.5 items' worst case
    Then the run's groups are 9 completed, 0 failed, 0 canceled and 0 not run
    And the API received 7 batches of 2, 2, 1, 1, 1, 1 and 1 requests

  Scenario: Jobs of a prompt alone are recorded as the jobs they stand for, and the run's id names the run as before
    Given 3 prompts "Résumez l'avis \"{n}\" — en bref 🌊"
    When the actor runs the prompts as run "mixed": alone, with the id "avis-é", with max_tokens 50
    Then the run has 3 results, each the emulated reply to its own prompt, in input order
    And the ledger holds the run's fingerprint and jobs as each job written out on its own gives them
    And the API received 1 batch of 3 requests

  Scenario: A run resumed with a batch out counts that batch at its worst case until it settles
    Given 9 prompts "Review {n}"
    When a program starts mapping the prompts with 3 items per batch, 1 batch at a time, as run "reviews" and stops once its first batch is out
    And a new program maps the prompts with 3 items per batch and a cost limit of 4 items' worst case, as run "reviews"
    Then the run's groups are 9 completed, 0 failed, 0 canceled and 0 not run
    And the API received 4 batches of 3, 3, 2 and 1 requests
    And no batch was created before the one the first program left out had ended

  Scenario: The cost limit counts batches out at their worst case, and waits for them to settle at their real cost
    Given 9 prompts "Review {n}"
    When the actor maps the prompts with 3 items per batch, 3 batches at a time, and a cost limit of 5 items' worst case
    Then the run's groups are 9 completed, 0 failed, 0 canceled and 0 not run
    And the API received 3 batches of 3, 3 and 3 requests

  Scenario: The time limit: outstanding batches are canceled, answers already in are kept, the rest fail with the reason
    Given 9 prompts "Review {n}"
    When the actor maps the prompts with 3 items per batch, 1 batch at a time, and a time limit of 100 seconds
    Then every item was answered with the emulated reply to its prompt, or failed saying "its batch was canceled" or "passed before it was sent"
    And at least the last 3 items failed saying "passed before it was sent", and no item before a sent one did
    And every batch the API received ended, or was canceled

  Scenario: A time limit that passes while a batch waits for room under the cost limit fails it as never sent
    Given 9 prompts "Review {n}"
    When the actor maps the prompts with 3 items per batch, a cost limit of 4 items' worst case and a time limit of 30 seconds
    Then every item was answered with the emulated reply to its prompt, or failed saying "its batch was canceled" or "passed before it was sent"
    And at least the last 6 items failed saying "passed before it was sent", and no item before a sent one did
    And the API received at most 1 batch, of 3 requests
    And every batch the API received ended, or was canceled

  Scenario: A dry run prints the plan and sends nothing
    Given 7 prompts "Review {n}"
    When the actor plans the prompts with 3 items per batch and a cost limit of $5
    Then the plan has 3 batches of 3, 3 and 1 requests, and a cost range from low to high
    And the plan says "dry run: nothing was sent"
    And the API received no calls at all
    And the ledger has no run

  Scenario: Retry sends only the failed and expired items again, under new keys
    Given 5 prompts "Review {n}", with prompt 1 ending as errored and prompt 3 as expired, in the first batch only
    When the actor maps the prompts as run "reviews"
    And the run "reviews" is retried
    Then the run's groups are 5 completed, 0 failed, 0 canceled and 0 not run
    And the API received 2 batches of 5 and 2 requests
    And the run's result says it used 2 batches
    And the second batch held only items 1 and 3

  Scenario: Structured output: answers are parsed, and one that does not validate is a failed item, not a crash
    Given 3 prompts "Review {n}"
    When the actor maps the prompts for a Verdict
    Then every one of the 3 results succeeded, parsed as a Verdict
    When the actor maps the prompts for a Permit
    Then the run's groups are 0 completed, 3 failed, 0 canceled and 0 not run
    And result 0 failed with StructuredOutputError

  Scenario: Progress goes to a callback as results arrive, ending with every item done
    Given 6 prompts "Review {n}"
    When the actor maps the prompts with 3 items per batch, reporting progress to a callback
    Then the callback saw items done rise to 6 of 6, and batches done rise to 2 of 2

  Scenario Outline: A batch run's ETA comes from its batches' pace: the batches still out and those still to send
    Given 12 prompts "Review {n}"
    When the actor maps the prompts with 3 items per batch, <parallel> batches at once, reporting progress
    Then every one of the 12 results succeeded
    And every report before its first batch was done said the ETA was unknown
    And when its first batch was done, with 3 of 12 items, the ETA was <waves> times the time that batch took, give or take a poll

    # The time a batch takes is measured, not assumed: in virtual time it is whatever the clock shows when its results
    # are in, and a scenario's sleeps move that clock on while a create waits for the SDK's worker thread.
    Examples: all four batches out at once end together; two at once leave a second wave, one batch's time
      | parallel | waves |
      | 4        | 0     |
      | 2        | 1     |

  Scenario: The results directory: raw lines per batch and one processed line per input, in order, with no secret
    Given 5 prompts "Review {n}", with prompt 2 ending as errored
    When the actor maps the prompts with 2 items per batch into the results directory "out"
    Then "out/raw" holds 3 files with 5 result lines in all
    And "out/results.jsonl" has 5 lines with indexes 0 to 4 in order, line 2 failed
    And in "out/results.jsonl" each answered line's cost_usd is a JSON number with the exact digits of its cost, and line 2's is null
    And no file under "out" contains the API key

  Scenario: A result holding an integer beyond 64 bits is written whole, its cost still an exact JSON number
    When an item answered with the parsed value {"tide": 1180591620717411303424}, costing $0.0001125, is written to "out.jsonl"
    Then the line in "out.jsonl" reads the parsed value {"tide": 1180591620717411303424} and the cost 0.0001125, both as JSON numbers

  Scenario: Jobs with files: a text document with citations, and an image
    Given a text file "harbour.txt" with "The harbour opens at dawn. Boats leave at noon."
    And an image file "chart.png"
    When the actor maps jobs: "harbour.txt" with "When does it open?" and citations, and "chart.png" with "Describe it."
    Then every one of the 2 results succeeded
    And the first request sent a document block with citations enabled, the second an image block
    And result 0 has citations quoting "harbour.txt"

  Scenario: lowtide status RUN shows the run from the ledger
    Given 4 prompts "Review {n}", with prompt 0 ending as errored
    When the actor maps the prompts as run "reviews"
    And "lowtide status reviews" runs on the scenario's ledger
    Then the command exits with 0
    And the command printed "run reviews (actor reader): 4 item(s): 3 succeeded, 1 failed"
    When "lowtide status" runs on the scenario's ledger
    Then the command exits with 0
    And the command printed "latest bulk runs (lowtide runs lists them all; lowtide status RUN shows one):"
    And the command printed "actor reader: 4 item(s): 3 succeeded, 1 failed; $"

  Scenario: Items a stopped program claimed but never put in a batch are sent in the run's own batches
    Given 6 prompts "Review {n}"
    And a program that died had claimed items 0 to 3 of run "reviews" for the prompts, before any batch existed
    When the actor maps the prompts with 3 items per batch as run "reviews"
    Then the run has 6 results, each the emulated reply to its own prompt, in input order
    And the API received 2 batches of 3 and 3 requests
    And every request of the run was created exactly once

  # Made by changing the SQLite file's rows by hand.
  @sqlite
  Scenario: A batch whose results were all stored before a stop is closed on resume without downloading them again
    Given 6 prompts "Review {n}"
    When the actor maps the prompts with 3 items per batch as run "reviews"
    And the ledger is left as if the program had stopped after storing the results of one batch, before closing it
    And the actor maps the prompts with 3 items per batch as run "reviews"
    Then every batch of the run "reviews" is collected in the ledger
    And the API sent the results of 2 batches

  Scenario: Citations with a response model: each field gets the citations whose cited text supports it
    Given a text file "harbour.txt" with "The harbour opens at dawn. Boats leave at noon."
    When the actor maps a job "harbour.txt" with "When does it open?" and citations, for an Opening
    Then every one of the 1 results succeeded, parsed as an Opening
    And result 0 maps citations to the field "answer", each quoting "harbour.txt" text that holds its value

  Scenario: A file too large for any batch is refused before anything is sent, even far down the input
    Given an actor "reader" with:
      """
      batch_processing: batch
      batch: {max_batch_bytes: 4096}
      """
    And an image file "chart.png" of 6000 bytes
    When the actor maps 5 prompts "Review {n}" and then "Describe it." with "chart.png", 1 item per batch
    Then a ConfigurationError is raised
    And the error message contains "Job 5 is about"
    And the API received no calls at all

  Scenario Outline: A response model named on the command line is imported, or refused with the reason
    When the response model "<path>" is imported
    Then <outcome>

    Examples:
      | path                       | outcome                                                          |
      | lowtide.types:Usage        | it is the class Usage                                            |
      | lowtide.types              | it is refused, saying "named as module:Class"                     |
      | lowtide.nowhere:Thing      | it is refused, saying "Cannot import 'lowtide.nowhere'"           |
      | lowtide.types:Nothing      | it is refused, saying "'lowtide.types' has no 'Nothing'"         |
      | lowtide.types:ContentBlock | it is refused, saying "is not a pydantic model"                   |

  Scenario: A run stopped by its cost limit is resumed with a higher one: only what was not run is sent
    Given 9 prompts "Review {n}"
    When the actor maps the prompts with 3 items per batch and a cost limit of 1.5 items' worst case, as run "reviews"
    And "lowtide status reviews" runs on the scenario's ledger
    Then the command printed "9 item(s): 3 succeeded, 6 not-run"
    When the run "reviews" is retried
    Then the run's groups are 3 completed, 0 failed, 0 canceled and 6 not run
    When the actor maps the prompts with 3 items per batch as run "reviews"
    Then the run's groups are 9 completed, 0 failed, 0 canceled and 0 not run
    And the API received 5 batches of 1, 1, 1, 3 and 3 requests

  Scenario: A request the API canceled is grouped as canceled
    Given 3 prompts "Review {n}"
    And the API will end request "reviews-1" as canceled
    When the actor maps the prompts as run "reviews"
    Then the run's groups are 2 completed, 0 failed, 1 canceled and 0 not run

  Scenario: The builder: jobs added one by one, as prompts or messages with their own parameters, run without a loop
    When a run is built with the prompt "Review 0" at 50 max tokens and the messages "Review 1", and run synchronously
    Then the synchronous run answered both, the first with at most 50 max tokens

  Scenario Outline: Bad run options are refused before anything is sent
    When a run is built with <option>
    Then a ConfigurationError is raised
    And the error message contains "<message>"

    Examples:
      | option                   | message                                        |
      | items_per_batch 0        | items_per_batch must be a whole number between 1 and 100,000 |
      | items_per_batch 100001   | items_per_batch must be a whole number between 1 and 100,000 |
      | max_parallel_batches 0   | max_parallel_batches must be a whole number at least 1 |
      | max_cost_usd 0           | max_cost_usd: a budget must be a finite number of US dollars more than 0 (got int 0). |
      | time_limit 0             | time_limit must be more than 0 seconds        |
      | run_id "-bad"            | must be 1 to 48 letters, digits               |
