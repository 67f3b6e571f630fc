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
    And the command printed on stderr "damaged"
    And the command printed on stderr "sqlite3 FILE .recover"
    And the command printed nothing on stderr that looks like a traceback
