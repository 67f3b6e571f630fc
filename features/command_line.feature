Feature: The lowtide command behaves like a well-kept CLI
  As someone meeting lowtide at the command line for the first time
  I want help with examples, the exit statuses spelled out, lists I can narrow, pipes, JSON, log levels and completion
  So that it fits the habits I have from the tools I already use, and never answers me with a traceback

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
    And a JSONL file "jobs.jsonl" of 5 prompts

  Scenario: `lowtide --help` lists every command and spells out the exit statuses
    When "lowtide --help" runs without a ledger
    Then the command exits with 0
    And the command printed "Usage: lowtide [OPTIONS] COMMAND [ARGS]..."
    And the command printed a line for each of the commands run, retry, status, runs, collect, cancel, demo, emulator, completion
    And the command printed "2    a usage, configuration or environment error (a malformed base URL, a key holding whitespace, ...):"
    And the command printed "said at once, nothing was sent"
    And the command printed "3    the provider's API refused or failed a call (key, connection, server): what was sent is in the"
    And the command printed "130  interrupted (143: terminated): what was sent is in the ledger; run the same command again to resume"

  Scenario: `lowtide` with no command shows the help on stderr and exits with 2, as a command line missing its command
    When "lowtide" runs without a ledger
    Then the command exits with 2
    And the command printed on stderr what "lowtide --help" prints, and nothing else
    And the command printed nothing on stdout

  Scenario Outline: `lowtide <command> --help` says what the command does and shows how it is used
    When "lowtide <command> --help" runs without a ledger
    Then the command exits with 0
    And the command printed "Usage: lowtide <command> [OPTIONS]"
    And the command printed "<what>"
    And the command printed "Examples:"
    And the command printed an example that starts with "lowtide <command>"

    Examples:
      | command    | what                                                                 |
      | run        | Run every input of a JSONL or CSV file (or standard input, '-')      |
      | retry      | Send a run's failed and expired items again                          |
      | status     | Show requests, batches, states and costs from the ledger             |
      | runs       | List the bulk runs in the ledger, newest first                       |
      | collect    | Fetch the results of ended batches into the ledger                   |
      | cancel     | Exits 1 when the batch has already ended                             |
      | demo       | Run the main job on the built-in emulator: no key, no network.      |
      | emulator   | Serve offline, on one socket, the APIs of all eight built-in providers |
      | completion | Print the shell code that completes lowtide's commands and options. |

  Scenario Outline: A misspelt command or option is named with what was meant, and exits with 2
    When "<command>" runs without a ledger
    Then the command exits with 2
    And the command printed on stderr "<message>"

    Examples:
      | command                                                      | message                                                                                 |
      | lowtide stauts                                               | lowtide: No such command 'stauts'. Did you mean 'status'? (see 'lowtide --help')         |
      | lowtide frobnicate                                           | lowtide: No such command 'frobnicate'. (see 'lowtide --help')                             |
      | lowtide run jobs.jsonl --actor actor.yaml --itmes-per-batch 5 | lowtide: No such option '--itmes-per-batch'. (Did you mean one of: '--items-per-batch', |
      | lowtide status --limit -1                                    | lowtide: Invalid value for '--limit': must be 0 or more, not -1 (see 'lowtide status --help') |

  Scenario Outline: Messages name what was given on the command line by its flag, with what was most likely meant
    Given the file "team.yaml" in the scenario's folder holds:
      """
      actors:
        reviewer: {model: claude-sonnet-5-5, max_tokens: 64}
        planner: {model: claude-sonnet-5-5, max_tokens: 64}
      """
    When "<command>" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "<message>"
    And the API received no calls at all

    Examples:
      | command                                                             | message                                                                  |
      | lowtide run jobs.jsonl --actor team.yaml                            | team.yaml holds 2 actors (reviewer, planner); say which one, as in --name reviewer. |
      | lowtide run jobs.jsonl --actor team.yaml --name planer              | team.yaml has no actor named 'planer'. Did you mean 'planner'?           |
      | lowtide run jobs.jsonl --actor actor.yaml --max-parallel-batches 0  | lowtide: --max-parallel-batches must be a whole number at least 1, not 0. |
      | lowtide run jobs.jsonl --actor actor.yaml --time-limit -3           | lowtide: --time-limit must be more than 0 seconds, not -3.0.            |

  Scenario: Inputs piped in and results piped out: the results alone on stdout, in order, the summary on stderr
    When "lowtide run - --actor actor.yaml --run-id piped --out - --progress none" runs in the scenario's folder with "jobs.jsonl" piped in
    Then the command exits with 0
    And stdout holds exactly 5 JSON lines, in input order, all succeeded
    And the command printed on stderr "run piped: 5 item(s): 5 succeeded"

  Scenario: A CSV piped in, with a prompt template
    Given a CSV file "reviews.csv" of 4 reviews
    When "lowtide run - --actor actor.yaml --template 'Summarize: {review}' --id-column id --out - --progress none" runs in the scenario's folder with "reviews.csv" piped in
    Then the command exits with 0
    And stdout holds exactly 4 JSON lines, in input order, all succeeded
    And the results on stdout have the ids "r0", "r1", "r2", "r3"

  Scenario: `lowtide run -` with nothing piped in says how to pipe, rather than waiting on the terminal
    When "lowtide run - --actor actor.yaml" runs in the scenario's folder with a terminal as its input
    Then the command exits with 2
    And the command printed on stderr "lowtide: INPUT is '-' (standard input) but nothing is piped in; pipe the inputs, as in `cat inputs.jsonl | lowtide run - ...`."
    And the API received no calls at all

  Scenario: `lowtide runs` lists the ledger's runs, newest first, and `--limit` and `--json` shape the list
    When "lowtide run jobs.jsonl --actor actor.yaml --run-id first --progress none" runs in the scenario's folder
    And "lowtide run jobs.jsonl --actor actor.yaml --run-id second --items-per-batch 2 --progress none" runs in the scenario's folder
    And "lowtide runs" runs in the scenario's folder
    Then the command exits with 0
    And the command printed the scenario's ledger on its first line
    And the runs listed are "second", "first", in that order
    And the command printed "actor reviewer: 5 item(s): 5 succeeded; $0.000"
    When "lowtide runs --limit 1 --json" runs in the scenario's folder
    Then the command printed JSON in which "runs.0.run_id" is "second"
    And the command printed JSON in which "runs.0.finished" is true
    And the command printed JSON in which "runs" has 1 entries

  Scenario: `lowtide status` says which ledger it read, shows the newest requests, and narrows by state, actor and batch
    Given a JSONL file "many.jsonl" of 30 prompts
    When "lowtide run many.jsonl --actor actor.yaml --run-id many --items-per-batch 25 --progress none" runs in the scenario's folder
    And "lowtide status" runs in the scenario's folder
    Then the command exits with 0
    And the command printed the scenario's ledger on its first line
    And the command listed 20 requests
    And the command printed "(10 older request(s) and 0 batch(es) not shown: --limit 0 shows all; --state, --actor and --batch narrow the list)"
    When "lowtide status --limit 0" runs in the scenario's folder
    Then the command listed 30 requests
    When "lowtide status --state failed" runs in the scenario's folder
    Then the command listed 0 requests
    When "lowtide status --actor nobody" runs in the scenario's folder
    Then the command listed 0 requests
    When "lowtide status --limit 3 --json" runs in the scenario's folder
    Then the command printed JSON in which "requests" is 30
    And the command printed JSON in which "tickets" has 3 entries
    And the command printed JSON in which "batches" has 2 entries
    When "lowtide status --batch nowhere" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "No batch 'nowhere' in the ledger"

  Scenario Outline: A dashboard beyond loopback refuses a token short enough to guess by trying, before it opens anything
    When "lowtide dashboard --host <host> --token <token> --port 0" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "lowtide: --token has <length> character(s): a dashboard listening beyond loopback (<host>) needs a token of at least 16, or none (one is then made and printed)."
    And there is still no ledger file

    Examples:
      | host      | token           | length |
      | 0.0.0.0   | a               | 1      |
      | 192.0.2.7 | fifteen-chars15 | 15     |

  Scenario Outline: A command that reads the ledger says so when there is none, and leaves none behind
    When "lowtide <command>" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "lowtide: There is no ledger at "
    And the command printed on stderr ". Name the one your programs use with --ledger or $LOWTIDE_LEDGER."
    And there is still no ledger file

    Examples:
      | command          |
      | status           |
      | status some-run  |
      | runs             |
      | collect          |
      | cancel some-key  |
      | retry some-run   |

  Scenario: An unknown run in a ledger that has runs names the latest ones
    When "lowtide run jobs.jsonl --actor actor.yaml --run-id rv --progress none" runs in the scenario's folder
    And "lowtide status missing-run" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "has no run 'missing-run' (latest runs: rv)."
    When "lowtide retry missing-run" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "has no run 'missing-run'; see lowtide runs."

  Scenario: `lowtide collect --json` and `lowtide cancel --json` print JSON; cancel of an ended batch exits 1, not 2
    When "lowtide run jobs.jsonl --actor actor.yaml --run-id rv --progress none" runs in the scenario's folder
    And "lowtide collect --json --api-key-env LOWTIDE_SCENARIO_KEY" runs in the scenario's folder
    Then the command exits with 0
    And the command printed JSON in which "batches" has 1 entries
    And the command printed JSON in which "batches.0.state" is "collected"
    And the command printed JSON in which "batches.0.requests" is 5
    When "lowtide cancel rv-0 --json --api-key-env LOWTIDE_SCENARIO_KEY" runs in the scenario's folder
    Then the command exits with 1
    And the command printed JSON in which "canceled" is false
    And the command printed on stderr "only a batch the API is processing can be canceled."

  Scenario: -v tells what the machinery does, --debug adds the traceback of an error, -q hides warnings
    When "lowtide run jobs.jsonl --actor actor.yaml --progress none -v" runs in the scenario's folder
    Then the command exits with 0
    And the command printed on stderr "lowtide: info: Batch "
    And the command printed on stderr " with 5 request(s)."
    When "lowtide -q run notes.txt --actor actor.yaml" runs in the scenario's folder
    Then the command exits with 2
    And the command printed nothing on stderr that looks like a traceback
    When "lowtide run notes.txt --actor actor.yaml --debug" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "Traceback (most recent call last)"
    And on stderr, the last line is "lowtide: notes.txt: unknown input kind '.txt'; use .jsonl or .csv, or say which with --input-format."

  Scenario: LOWTIDE_LOG_LEVEL sets the level when no option does
    Given the environment variable "LOWTIDE_LOG_LEVEL" is "debug"
    When "lowtide run notes.txt --actor actor.yaml" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "Traceback (most recent call last)"

  Scenario: A deprecated model's warning is one line on stderr, and -q silences it
    Given an actor file "old.yaml" for that API, with the key in "LOWTIDE_SCENARIO_KEY":
      """
      name: reviewer
      model: claude-sonnet-4-5
      max_tokens: 64
      batch_processing: batch
      batch: {poll_interval: 0.05}
      """
    When "lowtide run jobs.jsonl --actor old.yaml --progress none" runs in the scenario's folder
    Then the command exits with 0
    And the command printed on stderr "lowtide: warning: Model 'claude-sonnet-4-5' is deprecated (end of life: 2026-11-30); use 'claude-sonnet-5-5' instead."
    And the command printed that warning on stderr once
    Given lowtide has forgotten which models it warned about
    When "lowtide run jobs.jsonl --actor old.yaml --run-id quiet --progress none -q" runs in the scenario's folder
    Then the command exits with 0
    And the command printed "run quiet: 5 item(s): 5 succeeded"
    And the command printed nothing on stderr

  Scenario: Shell completion comes from the command itself
    When "lowtide completion bash" runs without a ledger
    Then the command exits with 0
    And the command printed "_LOWTIDE_COMPLETE=bash_complete"
    When the shell asks lowtide to complete "lowtide sta"
    Then the completions offered are "status"
    When the shell asks lowtide to complete "lowtide run jobs.jsonl --items"
    Then the completions offered are "--items-per-batch"
