Feature: A user's first hour: bad input is refused with one clear line before anything is sent
  As a developer trying lowtide for the first time
  I want every mistake I can make from Python or the command line to be named plainly, before anything is paid for
  So that I fix it at once instead of reading a traceback, or finding out a day later from a failed batch

  Background:
    Given an emulated Anthropic API whose batches take 60 seconds
    And an actor "planner" in batch mode

  Scenario Outline: A call with <what> is refused before anything is recorded or sent
    When the actor's <method> is called with <arguments>
    Then a ConfigurationError naming "<field>" is raised, saying "<message>"
    And the API received no calls at all
    And the ledger holds no request

    Examples:
      | what                    | method | arguments                             | field        | message                                                |
      | an empty key            | run    | "Plan it", key=""                     | key          | key: a key must be a non-empty string naming the call (got str ''). |
      | a key of spaces         | submit | "Plan it", key="   "                  | key          | key: a key must be a non-empty string naming the call (got str '   '). |
      | a number for a key      | run    | "Plan it", key=123                    | key          | key: a key must be a non-empty string naming the call (got int 123). |
      | a number for a key      | submit | "Plan it", key=123                    | key          | (got int 123)                                          |
      | a negative budget       | run    | "Plan it", max_cost_usd=-1            | max_cost_usd | max_cost_usd: a budget must be a finite number of US dollars more than 0 (got int -1). |
      | a budget of nothing     | submit | "Plan it", max_cost_usd=0             | max_cost_usd | more than 0 (got int 0)                                |
      | a NaN budget            | run    | "Plan it", max_cost_usd=nan           | max_cost_usd | more than 0 (got float nan)                            |
      | an infinite budget      | run    | "Plan it", max_cost_usd=inf           | max_cost_usd | more than 0 (got float inf)                            |
      | a budget given as text  | run    | "Plan it", max_cost_usd="5"           | max_cost_usd | more than 0 (got str '5')                              |
      | an empty prompt         | run    | ""                                    | prompt       | prompt: the prompt is empty; the API refuses a message with no text. |
      | a prompt of whitespace  | run    | "  \n\t "                             | prompt       | the prompt is only whitespace                          |
      | a prompt of whitespace  | submit | "   "                                 | prompt       | the prompt is only whitespace                          |
      | an empty prompt, live   | run    | "", mode="live"                       | prompt       | the prompt is empty                                    |
      | an empty prompt, tools  | run    | "", tools=[]                          | prompt       | the prompt is empty                                    |
      | bytes for a prompt      | run    | b"Plan it"                            | prompt       | prompt: a prompt is text (a str), not bytes (decode it). |
      | a number for a prompt   | submit | 123                                   | prompt       | prompt: a prompt is text (a str), not int 123.         |
      | one string, not a list  | run_many | "abc"                               | requests     | requests must be a list of prompts or ActorRequests, not str 'abc' (one prompt: put it in a list). |
      | a number, not a list    | run_many | 3                                   | requests     | requests must be a list of prompts or ActorRequests, not int 3. |
      | a long string           | run_many | "Plan the whole trip to the coast, day by day" | requests | not str 'Plan the who...t, day by day' |
      | an unknown map option   | map    | ["Plan it"], colour="red"             | colour       | Unknown bulk run option(s): colour. The options are abort_mode, abort_on, cancel_grace |
      | a misspelt map option   | map    | ["Plan it"], time_limt=60             | time_limt    | Unknown bulk run option(s): time_limt. Did you mean 'time_limit'? |

  Scenario Outline: An Actor made from <what> is refused with a ConfigurationError, not a TypeError
    When an Actor is made from <configuration>
    Then a ConfigurationError naming "configuration" is raised, saying "An actor's configuration is an ActorConfiguration or a mapping of its settings (name, model, ...), not <type>."

    Examples:
      | what              | configuration | type     |
      | a file's name     | "actors.yaml" | str      |
      | nothing           | None          | NoneType |
      | a list            | [1, 2]        | list     |

  Scenario Outline: `lowtide <command>` with an impossible value says which, and exits with 2
    When the command "lowtide <command>" runs
    Then the command exits with 2
    And the command printed on stderr "<message>"

    Examples:
      | command                                 | message                                                            |
      | emulator --port 99999                   | Invalid value for '--port': a port is from 0 to 65535 (0 picks a free one), not 99999 |
      | emulator --port http                    | Invalid value for '--port': not a port number: 'http'                         |
      | emulator --processing-seconds -1        | Invalid value for '--processing-seconds': must be 0 seconds or more, not -1   |
      | emulator --cancel-seconds nan           | Invalid value for '--cancel-seconds': must be 0 seconds or more, not nan      |
      | emulator --processing-seconds soon      | Invalid value for '--processing-seconds': not a number of seconds: 'soon'     |
      | emulator --latency soon                 | Invalid value for '--latency': expected SECONDS or SECONDS,PER_TOKEN (two numbers of 0 or more), not 'soon' |
      | emulator --latency 1,2,3                | Invalid value for '--latency': expected SECONDS or SECONDS,PER_TOKEN (two numbers of 0 or more), not '1,2,3' |
      | emulator --latency -1                   | Invalid value for '--latency': expected SECONDS or SECONDS,PER_TOKEN (two numbers of 0 or more), not '-1' |
      | emulator --rpm -1                       | Invalid value for '--rpm': must be 0 or more, not -1               |
      | demo --bulk-items -5                    | Invalid value for '--bulk-items': must be 0 or more, not -5                   |
      | demo --bulk-items many                  | Invalid value for '--bulk-items': not a whole number: 'many'                  |
      | demo --processing-seconds -2            | Invalid value for '--processing-seconds': must be 0 seconds or more, not -2   |
      | emulator --host ''                      | Invalid value for '--host': not an interface to listen on: '' (127.0.0.1 for this machine alone, 0.0.0.0 for every interface) |
      | dashboard --host ' '                    | Invalid value for '--host': not an interface to listen on: ' ' (127.0.0.1 for this machine alone, 0.0.0.0 for every interface) |
      | serve --host 'http://0.0.0.0' --actor a.yaml | Invalid value for '--host': not an interface to listen on: 'http://0.0.0.0' (127.0.0.1 for this machine alone, 0.0.0.0 for every interface) |

  Scenario: `python -m lowtide` is the lowtide command
    When "python -m lowtide --version" runs in a new process
    Then it printed the installed version of lowtide and exited with 0

  Scenario: A ledger that is not there is one line, not a traceback, and reading it leaves no empty ledger behind
    When the command "lowtide status --ledger /proc/nope/ledger.sqlite3" runs
    Then the command exits with 2
    And the command printed on stderr "lowtide: There is no ledger at /proc/nope/ledger.sqlite3. Name the one your programs use with --ledger or $LOWTIDE_LEDGER."

  Scenario: A ledger whose pages are damaged is one line saying so, not a traceback
    Given a ledger with requests in it whose pages were then damaged
    When lowtide status reads that ledger
    Then the command exits with 2
    And the command printed on stderr "damaged.sqlite3 is not a lowtide ledger, or it is damaged (database disk image is malformed)"
    And the command printed on stderr "Do not start a new ledger and run your programs again"
    And the command printed on stderr "lowtide ledger rebuild --ledger"
    And the command printed nothing on stderr that looks like a traceback

  Scenario Outline: actor.map with <what> is refused naming the input, before anything is recorded or sent
    When the actor's map is called with <inputs>
    Then a ConfigurationError naming "inputs" is raised, saying "<message>"
    And the API received no calls at all
    And the ledger holds no request

    Examples:
      | what                  | inputs                                 | message                                                            |
      | None among prompts    | ["Plan it", None]                      | inputs[1] is None; each input is a prompt (a non-empty string), a Job, or a mapping |
      | a number              | ["Plan it", 3]                         | inputs[1] is int 3; each input is a prompt                         |
      | bytes                 | [b"Plan it"]                           | inputs[0] is bytes (a prompt is text: decode it)                   |
      | an empty mapping      | ["Plan it", {}]                        | inputs[1] is an empty mapping                                      |
      | a list                | [["Plan it"]]                          | inputs[0] is list ['Plan it']                                      |
      | an empty prompt       | ["Plan it", ""]                        | inputs[1]: prompt: the prompt is empty                             |
      | a key no job has      | [{"prompt": "Plan it", "colour": "red"}] | inputs[0]: unknown Messages parameter 'colour'                   |
      | a number for a prompt | [{"prompt": 3}]                        | inputs[0]: prompt: Input should be a valid string                  |
      | no prompt             | [{"id": "a"}]                          | inputs[0]: give a prompt or messages                               |
      | a word for max_tokens | [{"prompt": "Plan it", "max_tokens": "lots"}] | inputs[0]: max_tokens: Input should be a valid integer      |
      | one string            | "Plan it"                              | inputs must be a list of prompts, Jobs or mappings, not str 'Plan it' (one prompt: put it in a list). |
      | nothing               | None                                   | inputs must be a list of prompts, Jobs or mappings, not None.      |

  Scenario Outline: actor.map with <what> is refused naming the option, before anything is recorded or sent
    When the actor's map is called with ["Plan it"], <option>
    Then a ConfigurationError naming "<field>" is raised, saying "<message>"
    And the API received no calls at all

    Examples:
      | what                  | option                     | field                | message                                                            |
      | a time limit of NaN   | time_limit=nan             | time_limit           | time_limit must be more than 0 seconds, not nan.                   |
      | an endless time limit | time_limit=inf             | time_limit           | time_limit must be more than 0 seconds, not inf.                   |
      | a negative grace      | cancel_grace=-1            | cancel_grace         | cancel_grace must be 0 seconds or more, not -1.                    |
      | a fraction of a batch | items_per_batch=2.5        | items_per_batch      | items_per_batch must be a whole number between 1 and 100,000, not 2.5. |
      | true for a count      | max_parallel_batches=True  | max_parallel_batches | max_parallel_batches must be a whole number at least 1, not True.  |

  Scenario Outline: An actor file that <what> is refused in one line, exit 2, before anything is sent
    Given the actor file "<file>" holds "<content>"
    And the file "prompts.jsonl" in the scenario's folder holds:
      """
      {"prompt": "Is the harbour open?"}
      """
    When "lowtide run prompts.jsonl --actor <file> --dry-run" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "<message>"
    And the command printed nothing on stderr holding "secret"
    And the command printed no traceback

    Examples:
      | what                         | file       | content                                                                  | message                                                                               |
      | names a key twice            | bad.yaml   | name: a\nmodel: claude-haiku-5-5\nmodel: claude-sonnet-5-5                | bad.yaml is not valid YAML: duplicate key 'model' (first at line 2) at line 3, column 1 |
      | names an actor twice         | bad.yaml   | actors:\n  a: {model: m}\n  a: {model: n}                               | bad.yaml is not valid YAML: duplicate key 'a' (first at line 2) at line 3, column 3  |
      | sets a TOML key twice        | bad.toml   | name = "a"\nmodel = "m"\nmodel = "n"                                     | bad.toml is not valid TOML: Cannot overwrite a value (at line 3, column 12)          |
      | is empty                     | bad.yaml   |                                                                          | bad.yaml is empty; an actor file holds one actor's settings (name: ..., model: ...), or several under `actors:` with shared `defaults:`. |
      | holds only a comment         | bad.yaml   | # the planner, one day                                                   | bad.yaml is empty; an actor file holds one actor's settings                          |
      | is an empty TOML file        | bad.toml   |                                                                          | bad.toml is empty                                                                     |
      | holds a list                 | bad.yaml   | - name: a\n- name: b                                                     | bad.yaml holds a list at its top level; an actor file holds one actor's settings     |
      | holds one word               | bad.yaml   | planner                                                                  | bad.yaml holds a single value (str) at its top level                                 |
      | says yes for a number        | bad.yaml   | name: a\nmodel: claude-haiku-5-5\nmax_tokens: yes                        | max_tokens: expected a number, not true                                              |
      | waits forever between looks  | bad.yaml   | name: a\nmodel: claude-haiku-5-5\nbatch: {poll_interval: .inf}           | batch.poll_interval: Input should be a finite number (got inf)                       |
      | writes 1e999 for a timeout   | bad.yaml   | name: a\nmodel: claude-haiku-5-5\ntimeout: 1e999                         | timeout: Input should be a finite number (got '1e999')                               |
      | counts retries with a word   | bad.yaml   | name: a\nmodel: claude-haiku-5-5\nlive: {retries: {server: true}}        | live.retries: server: expected a number, not true                                    |
      | gives a malformed base URL   | bad.yaml   | name: a\nmodel: claude-haiku-5-5\nbase_url: htp://api.example            | base_url: is not an http:// or https:// URL (its scheme is 'htp')                    |
      | names a ledger of no kind    | bad.yaml   | name: a\nmodel: claude-haiku-5-5\nledger: mysql://u:secret@h/db          | ledger: names no kind of ledger lowtide has (mysql:); use a SQLite file              |
      | holds two actors, no --name  | bad.yaml   | actors:\n  a: {model: m}\n  b: {model: n}                               | bad.yaml holds 2 actors (a, b); say which one, as in --name a.                       |
      | lists an actor with no name  | bad.yaml   | actors:\n  - model: m                                                    | name: Field required                                                                  |
      | names an unknown setting     | bad.yaml   | name: a\nmodel: claude-haiku-5-5\nmax_token: 5                           | max_token: not a known setting; did you mean 'max_tokens'?                           |
      | gives a word for max_tokens  | bad.yaml   | name: a\nmodel: claude-haiku-5-5\nmax_tokens: lots                       | max_tokens: Input should be a valid integer                                          |
      | gives a blank model          | bad.yaml   | name: a\nmodel: "  "                                                     | model: a model name has no spaces or blank lines at its ends (got '  ')               |
      | gives a model with a space   | bad.yaml   | name: a\nmodel: "claude-haiku-5-5 "                                      | model: a model name has no spaces or blank lines at its ends (got 'claude-haiku-5-5 ') |

  Scenario Outline: `lowtide <command>` with <what> says which and exits with 2, nothing sent
    Given a valid actor file and a file of prompts in the scenario's folder
    When "lowtide <command>" runs without a ledger
    Then the command exits with 2
    And the command printed on stderr "<message>"
    And the command printed nothing on stderr holding "secret"

    Examples:
      | what                       | command                                                               | message                                                                   |
      | a time limit of NaN        | run prompts.jsonl --actor actor.yaml --time-limit nan                 | --time-limit must be more than 0 seconds, not nan.                        |
      | a negative progress period | run prompts.jsonl --actor actor.yaml --progress-interval -1           | --progress-interval must be 0 seconds or more, not -1.0.                  |
      | a ledger of no kind        | run prompts.jsonl --actor actor.yaml --ledger mysql://u:secret@h/db   | Invalid value for '--ledger': 'mysql://u:***@h/db' names no kind of ledger lowtide has (mysql:); use a SQLite file (a path, sqlite:///absolute/path or sqlite:relative/path), postgresql://user@host/database or memory: (this process only) |
      | a SQLite file elsewhere    | status --ledger sqlite://elsewhere/ledger.sqlite3                     | 'sqlite://elsewhere/ledger.sqlite3' names a file on 'elsewhere', but a SQLite ledger is a file on this machine |
      | a SQLite location, no file | runs --ledger sqlite:                                                 | Invalid value for '--ledger': 'sqlite:' names no file                     |
      | a memory ledger to read    | status --ledger memory:                                               | memory: is a ledger in one process's memory, gone when it ends: there is none here to read |
      | an unknown log level       | --log-level loud status                                               | Invalid value for '--log-level': 'loud' is not one of 'debug', 'info', 'warning', 'error'. |

  Scenario Outline: $<variable> naming <what> is refused in one line, exit 2
    Given a valid actor file and a file of prompts in the scenario's folder
    And the environment variable "<variable>" is "<value>"
    When "lowtide runs" runs without a ledger
    Then the command exits with 2
    And the command printed on stderr "<message>"

    Examples:
      | variable          | what               | value          | message                                                                          |
      | LOWTIDE_LOG_LEVEL | no log level       | loud           | lowtide: $LOWTIDE_LOG_LEVEL is 'loud', which is not a log level; use one of debug, info, warning, error. |
      | LOWTIDE_LEDGER    | a ledger of no kind | redis://cache | lowtide: $LOWTIDE_LEDGER 'redis://cache' names no kind of ledger lowtide has (redis:) |

  Scenario: `--ledger sqlite:///absolute/path` and `sqlite:relative/path` name SQLite files; no folder "sqlite:" is made
    Given a valid actor file and a file of prompts in the scenario's folder
    When "lowtide run prompts.jsonl --actor actor.yaml --dry-run --ledger sqlite:///FOLDER/absolute.sqlite3" runs in the scenario's folder, FOLDER being its path
    Then the command exits with 0
    And the scenario's folder holds the ledger "absolute.sqlite3", and nothing named "sqlite:"
    When "lowtide run prompts.jsonl --actor actor.yaml --dry-run --ledger sqlite:relative.sqlite3" runs in the scenario's folder, FOLDER being its path
    Then the command exits with 0
    And the scenario's folder holds the ledger "relative.sqlite3", and nothing named "sqlite:"
    When "lowtide runs --ledger sqlite:relative.sqlite3" runs in the scenario's folder, FOLDER being its path
    Then the command exits with 0
    And the command printed "relative.sqlite3: 0 run(s) shown"

  Scenario: A ledger opened read-only is read, and nothing is written to it or beside it
    `lowtide status` and `lowtide runs` open so a ledger they cannot write (a read-only file, folder or file system).
    Tests run as root, whom no permission stops: the read-only opening is asked for directly here; the command itself,
    as a user who cannot write there, is in robot/cli.robot.

    Given a ledger file "kept.sqlite3" holding 3 requests, closed
    When "kept.sqlite3" is opened read-only and its status read
    Then the status shows 3 requests
    And the file "kept.sqlite3" has the bytes and modification time it had, and no "-wal" beside it holds anything
    And a write to it is refused with a LedgerError

  Scenario: Where not even SQLite's -wal file can be made, a ledger is read as an immutable file
    Given a ledger file "kept.sqlite3" holding 2 requests, closed
    And no "-wal" file can be made beside "kept.sqlite3" (a folder of that name stands there)
    When "kept.sqlite3" is opened read-only and its status read
    Then the status shows 2 requests
    And the file "kept.sqlite3" has the bytes and modification time it had, and no "-wal" beside it holds anything
