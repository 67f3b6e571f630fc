@stores
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
    And in "out.jsonl" every cost_usd is a JSON number, or null where no answer came
    When "lowtide run reviews.csv --actor actor.yaml --template 'Summarize: {review}' --id-column id --run-id rv --progress none --json" runs in the scenario's folder
    Then the command printed JSON whose "cost_usd" is the JSON number 0.00048, and whose "batches" is 1
    When "lowtide status rv --json" runs in the scenario's folder
    Then the command printed JSON whose "cost_usd" is the JSON number 0.00048, and whose "finished" is true

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

  Scenario: A dry run refuses a prompt past the model's context window, naming the item, and asks the API nothing
    Given a JSONL file "big.jsonl" of 1 prompt of 5000000 bytes
    When "lowtide run big.jsonl --actor actor.yaml --dry-run" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "Job 0: about 1,250,0"
    And the command printed on stderr "past the 1,000,000-token context window of 'claude-sonnet-5-5'"
    When "lowtide run big.jsonl --actor actor.yaml --mode live --dry-run" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "context window of 'claude-sonnet-5-5'"
    And the API received no calls at all

  Scenario: A dry run says which model it could not check, and that it asked the API nothing
    Given a file "jobs.jsonl" containing:
      """
      {"prompt": "Summarize: the tide is out"}
      {"prompt": "Summarize: the tide is in", "id": "typo", "model": "claude-sonet-5-5"}
      """
    When "lowtide run jobs.jsonl --actor actor.yaml --dry-run" runs in the scenario's folder
    Then the command exits with 0
    And the command printed "model 'claude-sonet-5-5': not in lowtide's catalogue of Anthropic's models (the closest it lists: 'claude-sonnet-5-5'"
    And the command printed "not checked (a dry run asks the API nothing): that the API serves each model, and exact token counts"
    And the API received no calls at all

  Scenario: A dry run refuses a blank model name, naming the item
    Given a file "jobs.jsonl" containing:
      """
      {"prompt": "Summarize: the tide is out", "id": "blank", "model": "  "}
      """
    When "lowtide run jobs.jsonl --actor actor.yaml --dry-run" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "Job 0 (blank): model: a model name has no spaces or blank lines at its ends (got '  ')."

  Scenario: A dry run with a deadline prints each venue's expected time and price, and the route, sending nothing
    Given a JSONL file "jobs.jsonl" of 5 prompts
    When "lowtide run jobs.jsonl --actor actor.yaml --deadline 2h --dry-run" runs in the scenario's folder
    Then the command exits with 0
    And the command printed "-> live: about 30s"
    And the command printed "batch: about 24h00m (no history in this ledger"
    And the command printed "route: live, expected 30s"
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
      | lowtide run reviews.csv --actor actor.yaml --template '{review}' --ledger /proc/nope/l.sqlite3 | The ledger cannot be opened at /proc/nope/l.sqlite3: No such file or directory. |
      | lowtide run reviews.csv --actor actor.yaml --template '{review}' --deadline 2020-01-01T06:00+00:00 | deadline '2020-01-01T06:00+00:00' is in the past |
      | lowtide run reviews.csv --actor actor.yaml --template '{review}' --deadline soon          | deadline must be a clock time (06:00), a duration |
      | lowtide run reviews.csv --actor actor.yaml --template '{review}' --deadline 2h --time-limit 60 | not both |
      | lowtide run reviews.csv --actor actor.yaml --template '{review}' --items-per-batch 0      | --items-per-batch must be a whole number between 1 and 100,000, not 0. |
      | lowtide run reviews.csv --actor actor.yaml --template '{review}' --out /proc/nope/r.jsonl  | --out: cannot write the results to /proc/nope/r.jsonl: its folder /proc/nope does not exist. |
      | lowtide run reviews.csv --actor actor.yaml --template '{review}' --results-dir actor.yaml | is a file, not a folder; name a folder for the results. |
      | lowtide run reviews.csv --actor actor.yaml --template '{review}' --results-dir actor.yaml/results | --results-dir: cannot make the folder actor.yaml/results: Not a directory. |

    @sqlite
    Examples: with no ledger file there
      | command                                                                                   | message                                   |
      | lowtide status missing-run                                                                | There is no ledger at                     |
      | lowtide retry missing-run                                                                 | There is no ledger at                     |

  Scenario: A JSONL job whose text is not valid Unicode is refused with exit 2, naming the job, before anything is sent
    Given a file "odd.jsonl" containing:
      """
      {"prompt": "A fine review"}
      {"prompt": "A review cut mid-character \ud83d"}
      """
    When "lowtide run odd.jsonl --actor actor.yaml --progress none" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "Job 1: prompt: the text is not valid Unicode: a lone surrogate (U+D83D) at character 27"
    And the API received no calls at all

  @sqlite
  Scenario: A new run of a JSONL input that cannot be read leaves no ledger where there was none
    Given a file "torn.jsonl" containing:
      """
      {"prompt": "A fine review"}
      {"prompt": "A review torn off
      """
    When "lowtide run torn.jsonl --actor actor.yaml --progress none" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "torn.jsonl, line 2"
    And there is still no ledger file

  Scenario: A job naming a damaged Word document is refused, naming the file and the converter's reason, before anything is sent
    Given the file "minutes.docx" in the scenario's folder holds the bytes b'PK\x03\x04 word/document.xml <w:t>Minutes</w:t>'
    And the file "minutes.jsonl" in the scenario's folder holds:
      """
      {"prompt": "What was decided?"}
      {"prompt": "Summarise the minutes", "file": "minutes.docx"}
      """
    When "lowtide run minutes.jsonl --actor actor.yaml --progress none" runs in the scenario's folder
    Then the command exits with 2
    And the command printed nothing, and on stderr exactly:
      """
      lowtide: minutes.jsonl, line 2: file 'minutes.docx' is a Word document (.docx) that could not be converted to text: File is not a zip file
      """
    And the API received no calls at all

  Scenario: A file of Message Batches requests runs as it is: each result keeps its custom_id, each request its params
    Given the file "requests.jsonl" in the scenario's folder holds:
      """
      {"custom_id": "tide-1", "params": {"model": "claude-sonnet-4-5", "max_tokens": 40, "messages": [{"role": "user", "content": "When is high water?"}]}}
      {"custom_id": "tide-2", "params": {"model": "claude-sonnet-4-5", "max_tokens": 64, "system": "Be brief.", "messages": [{"role": "user", "content": "Name a tide."}]}}
      """
    When "lowtide run requests.jsonl --actor actor.yaml --run-id tides --out out.jsonl --progress none" runs in the scenario's folder
    Then the command exits with 0
    And the command printed "run tides: 2 item(s): 2 succeeded"
    And "out.jsonl" holds, in order, the ids "tide-1" and "tide-2", answered with the emulated replies to "When is high water?" and "Name a tide."
    And item 0 of the run "tides" was sent with max_tokens 40 and no system prompt, item 1 with max_tokens 64 and the system prompt "Be brief."

  Scenario: A cost limit the first batch's worst case crowds does not stop the run: batches go on while the real cost leaves room
    Given an actor file "thorough.yaml" for that API, with the key in "LOWTIDE_SCENARIO_KEY":
      """
      name: reviewer
      model: claude-sonnet-4-5
      max_tokens: 1024
      batch_processing: batch
      batch: {poll_interval: 0.05, max_attempts: 1}
      """
    And a CSV file "rows.csv" of 20 reviews
    When "lowtide run rows.csv --actor thorough.yaml --template 'Summarize: {review}' --run-id roomy --max-cost-usd 0.03 --items-per-batch 5 --progress none" runs in the scenario's folder
    Then the command exits with 0
    And the command printed exactly:
      """
      run roomy: 20 item(s): 20 succeeded; 7 batch(es); $0.002400 at batch prices (live: $0.004800)
      """
    And the API received 7 batches, of 3, 3, 3, 3, 3, 3 and 2 requests

  Scenario: What the cost limit leaves unsent is not run, and the reason states what the run really spent
    Given an actor file "thorough.yaml" for that API, with the key in "LOWTIDE_SCENARIO_KEY":
      """
      name: reviewer
      model: claude-sonnet-4-5
      max_tokens: 1024
      batch_processing: batch
      batch: {poll_interval: 0.05, max_attempts: 1}
      """
    And a CSV file "rows.csv" of 20 reviews
    When "lowtide run rows.csv --actor thorough.yaml --template 'Summarize: {review}' --run-id tight --max-cost-usd 0.009 --items-per-batch 5 --progress none" runs in the scenario's folder
    Then the command exits with 1
    And the command printed exactly:
      """
      run tight: 20 item(s): 11 succeeded, 9 not-run; 11 batch(es); $0.001320 at batch prices (live: $0.002640)
        9 item(s): cost limit $0.009: the run has spent $0.001320, and the worst case of this request ($0.007725) would cross the limit
      """
    And the API received 11 batches, of 1 request each

  Scenario: A run stopped half-way and run again writes every line from the ledger, in input order, as a run never stopped does
    Given an actor file "thorough.yaml" for that API, with the key in "LOWTIDE_SCENARIO_KEY":
      """
      name: reviewer
      model: claude-sonnet-4-5
      max_tokens: 1024
      batch_processing: batch
      batch: {poll_interval: 0.05, max_attempts: 1}
      """
    And a CSV file "rows.csv" of 20 reviews, with review 5 ending as errored
    When "lowtide run rows.csv --actor thorough.yaml --template 'Summarize: {review}' --id-column id --run-id whole --items-per-batch 5 --out whole.jsonl --progress none" runs in the scenario's folder
    Then the command exits with 1
    When "lowtide run rows.csv --actor thorough.yaml --template 'Summarize: {review}' --id-column id --run-id halves --max-cost-usd 0.009 --items-per-batch 5 --out halves.jsonl --progress none" runs in the scenario's folder
    Then the command exits with 1
    And the command printed "run halves: 20 item(s): 11 succeeded, 1 failed, 8 not-run;"
    When "lowtide run rows.csv --actor thorough.yaml --template 'Summarize: {review}' --id-column id --run-id halves --items-per-batch 5 --out halves.jsonl --progress none" runs in the scenario's folder
    Then the command exits with 1
    And the command printed "run halves: 20 item(s): 19 succeeded, 1 failed;"
    And "halves.jsonl" and "whole.jsonl" hold the same 20 lines in input order, but for what names their runs
    When "lowtide run rows.csv --actor thorough.yaml --template 'Summarize: {review}' --id-column id --run-id halves --items-per-batch 5 --out - --progress none" runs in the scenario's folder
    Then the command exits with 1
    And the command's standard output is exactly the lines of "halves.jsonl"

  Scenario Outline: A run stopped half-way keeps its answered lines beside its results; a line torn by a kill is made again from the ledger (spools read <reading>)
    # Where the system has no os.pread (Windows), a spool's lines are read back by seeking the file instead.
    Given the spools are read <reading>
    And an actor file "thorough.yaml" for that API, with the key in "LOWTIDE_SCENARIO_KEY":
      """
      name: reviewer
      model: claude-sonnet-4-5
      max_tokens: 1024
      batch_processing: batch
      batch: {poll_interval: 0.05, max_attempts: 1}
      """
    And a CSV file "rows.csv" of 20 reviews, with review 5 ending as errored
    When "lowtide run rows.csv --actor thorough.yaml --template 'Summarize: {review}' --id-column id --run-id whole --items-per-batch 5 --out whole.jsonl --progress none" runs in the scenario's folder
    Then the command exits with 1
    And no spool of the run "whole" is left beside "whole.jsonl"
    When "lowtide run rows.csv --actor thorough.yaml --template 'Summarize: {review}' --id-column id --run-id halves --max-cost-usd 0.009 --items-per-batch 5 --out halves.jsonl --progress none" runs in the scenario's folder
    Then the command exits with 1
    And the command printed "run halves: 20 item(s): 11 succeeded, 1 failed, 8 not-run;"
    And a spool of the run "halves" beside "halves.jsonl" holds the lines of 11 of its 20 items
    When the last line of the spool of the run "halves" beside "halves.jsonl" is torn, as a killed process leaves it
    And "lowtide run rows.csv --actor thorough.yaml --template 'Summarize: {review}' --id-column id --run-id halves --items-per-batch 5 --out halves.jsonl --progress none" runs in the scenario's folder
    Then the command exits with 1
    And the command printed "run halves: 20 item(s): 19 succeeded, 1 failed;"
    And the command printed the cost the lines of "halves.jsonl" add up to
    And "halves.jsonl" and "whole.jsonl" hold the same 20 lines in input order, but for what names their runs
    And no spool of the run "halves" is left beside "halves.jsonl"

    Examples:
      | reading                                                |
      | by position (os.pread)                                 |
      | by seeking, as where os.pread is missing (Windows)     |

  Scenario: A run resumed from the same bytes and settings checks only the jobs it still has to send; a changed input or setting is refused as before
    Given an actor file "thorough.yaml" for that API, with the key in "LOWTIDE_SCENARIO_KEY":
      """
      name: reviewer
      model: claude-sonnet-4-5
      max_tokens: 1024
      batch_processing: batch
      batch: {poll_interval: 0.05, max_attempts: 1}
      """
    And an actor file "shorter.yaml" for that API, with the key in "LOWTIDE_SCENARIO_KEY":
      """
      name: reviewer
      model: claude-sonnet-4-5
      max_tokens: 512
      batch_processing: batch
      batch: {poll_interval: 0.05, max_attempts: 1}
      """
    And a CSV file "rows.csv" of 20 reviews, with review 5 ending as errored
    And the jobs each run checks are counted
    When "lowtide run rows.csv --actor thorough.yaml --template 'Summarize: {review}' --id-column id --run-id halves --max-cost-usd 0.009 --items-per-batch 5 --out halves.jsonl --progress none" runs in the scenario's folder
    Then the command printed "run halves: 20 item(s): 11 succeeded, 1 failed, 8 not-run;"
    And the run checked 20 of its 20 jobs
    When "lowtide run rows.csv --actor shorter.yaml --template 'Summarize: {review}' --id-column id --run-id halves --items-per-batch 5 --out halves.jsonl --progress none" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "Run 'halves' in"
    And the command printed on stderr "was made with other inputs or actor settings; resume it with the same ones, or give this run a new id."
    When "lowtide run rows.csv --actor thorough.yaml --template 'Summarize: {review}' --id-column id --run-id halves --items-per-batch 5 --out halves.jsonl --progress none" runs in the scenario's folder
    Then the command printed "run halves: 20 item(s): 19 succeeded, 1 failed;"
    And the run checked 8 of its 20 jobs
    Given a CSV file "rows.csv" of 21 reviews, with review 5 ending as errored
    When "lowtide run rows.csv --actor thorough.yaml --template 'Summarize: {review}' --id-column id --run-id halves --items-per-batch 5 --out halves.jsonl --progress none" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "was made with other inputs or actor settings; resume it with the same ones, or give this run a new id."
    And the run checked 21 of its 21 jobs

  Scenario: A run resumed without a run id is known by its input's bytes too: it checks only the jobs it still has to send
    Given a JSONL file "prompts.jsonl" of 12 prompts
    And the jobs each run checks are counted
    When "lowtide run prompts.jsonl --actor actor.yaml --max-cost-usd 0.0004 --items-per-batch 4 --out prompts-out.jsonl --progress none" runs in the scenario's folder
    Then the run checked 12 of its 12 jobs
    When "lowtide run prompts.jsonl --actor actor.yaml --items-per-batch 4 --out prompts-out.jsonl --progress none" runs in the scenario's folder
    Then the command exits with 0
    And "prompts-out.jsonl" has 12 lines in order, all succeeded
    And the run checked fewer than 12 of its 12 jobs

  Scenario: A run resumed from the same bytes parses only the lines of the jobs it still has to send, and of those that hold an id
    Given a JSONL file "named.jsonl" of 12 prompts, prompt 1 with the id "second"
    And the jobs each run checks are counted
    And the lines each run parses are counted
    When "lowtide run named.jsonl --actor actor.yaml --run-id named --max-cost-usd 0.0008 --items-per-batch 4 --out named-out.jsonl --progress none" runs in the scenario's folder
    Then the run parsed 12 lines of its input
    When "lowtide run named.jsonl --actor actor.yaml --run-id named --items-per-batch 4 --out named-out.jsonl --progress none" runs in the scenario's folder
    Then the command exits with 0
    And "named-out.jsonl" has 12 lines in order, all succeeded
    And line 2 of "named-out.jsonl" holds the id "second", and no other line an id
    And the run checked 4 of its 12 jobs
    And the run parsed 5 lines of its input
    Given the file "named.jsonl" in the scenario's folder holds:
      """
      {"prompt": "Prompt 0"}
      {"prompt": "Prompt 1", "id": "second"
      """
    When "lowtide run named.jsonl --actor actor.yaml --run-id named --items-per-batch 4 --out named-out.jsonl --progress none" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "line 2: is not valid JSON"
    And the run parsed 2 lines of its input
    Given a JSONL file "named.jsonl" of 13 prompts, prompt 1 with the id "second"
    When "lowtide run named.jsonl --actor actor.yaml --run-id named --items-per-batch 4 --out named-out.jsonl --progress none" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "was made with other inputs or actor settings; resume it with the same ones, or give this run a new id."
    And the run parsed 13 lines of its input

  Scenario: Expired rows are counted as expired, not failed: in the summary, its JSON and the progress lines
    Given a CSV file "tides.csv" of 5 reviews, with review 1 ending as errored and review 3 as expired
    When "lowtide run tides.csv --actor actor.yaml --template 'Summarize: {review}' --run-id tides --progress plain" runs in the scenario's folder
    Then the command exits with 1
    And the command printed "run tides: 5 item(s): 3 succeeded, 1 failed, 1 expired;"
    And the command printed "send the failed and expired items again with: lowtide retry tides"
    And the command printed on stderr "run tides: 5/5 items (3 ok, 1 failed, 1 expired, 0 canceled, 0 not run)"
    When "lowtide run tides.csv --actor actor.yaml --template 'Summarize: {review}' --run-id tides --progress none --json" runs in the scenario's folder
    Then the command exits with 1
    And the command printed JSON whose "counts" are {"succeeded": 3, "failed": 1, "canceled": 0, "expired": 1, "not-run": 0, "waiting": 0, "pending": 0}

  Scenario: The batches a run used are counted for real: a request expiring on every attempt travels in 3 batches
    Given an actor file "patient.yaml" for that API, with the key in "LOWTIDE_SCENARIO_KEY":
      """
      name: reviewer
      model: claude-sonnet-4-5
      max_tokens: 64
      batch_processing: batch
      batch: {poll_interval: 0.05, max_attempts: 3}
      """
    And a CSV file "tides.csv" of 5 reviews, with review 4 ending as errored and review 2 as expired
    When "lowtide run tides.csv --actor patient.yaml --template 'Summarize: {review}' --run-id tides --progress plain" runs in the scenario's folder
    Then the command exits with 1
    And the command printed "run tides: 5 item(s): 3 succeeded, 1 failed, 1 expired; 3 batch(es); $"
    And the last progress line on stderr says "5/5 items (3 ok, 1 failed, 1 expired, 0 canceled, 0 not run) · batches 3/3 done, 0 in flight"
    And the API received 3 batches, of 5, 1 and 1 requests

  Scenario: With plain progress, the final line is printed once
    When "lowtide run reviews.csv --actor actor.yaml --template 'Summarize: {review}' --run-id rv --progress plain --progress-interval 0" runs in the scenario's folder
    Then the command exits with 1
    And on stderr, the first line is "run rv: 0/7 items (0 ok, 0 failed, 0 expired, 0 canceled, 0 not run) · batches 0/1 done, 0 in flight · $0.00 spent · ETA unknown"
    And on stderr, exactly one line says "run rv: 7/7 items (6 ok, 1 failed, 0 expired, 0 canceled, 0 not run) · batches 1/1 done, 0 in flight · $0.0005 spent · done in", and it is the last
