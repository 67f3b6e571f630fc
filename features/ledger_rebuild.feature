Feature: A lost or damaged ledger is rebuilt from the providers' APIs, and nothing is paid for twice
  As an operator whose ledger file was deleted, lost with its -wal, or damaged, half-way through a run
  I want `lowtide ledger rebuild` to record every batch the providers still hold of that ledger in a new one
  So that running the same program again collects what was sent instead of sending (and paying for) it again

  The lost ledger's identity is in every custom id it gave (`<key>_<identity>`, or, for a key the provider's id rule
  does not take as it is, a digest of both): a rebuild lists the identities the account's batches carry, records the
  batches of the one chosen, and the new ledger takes that identity, so that the rerun's claims make the same custom
  ids. The per-provider scenarios run the emulator on a loopback socket, each program an actor of its own built from
  its configuration (base URL and key variable, the SDK's own HTTP), on the scenario's clock; the rebuild lists the
  account's batches one a page, so that every page of a listing is read.

  Scenario Outline: A ledger deleted half-way through a run on <provider> is rebuilt, and the run finishes paying nothing twice
    Given the emulator on a socket, whose batches take 100 seconds
    And the programs' actor sends its batches to the <provider> API<options>
    When a program asks questions 1 to 4 with the keys "k-1" to "k-4", and they are answered
    And a program parks questions 5 to 8 with the keys "k-5" to "k-8", their batches created and still running
    And the ledger's file is deleted with its -wal and -shm, half-way through the run
    And the ledger is rebuilt from the API into a new file with the lost ledger's identity, <waiting>
    Then the rebuilt ledger has the lost ledger's identity, and records 8 requests: <answered> answered, <running> in batches still running
    When a program asks questions 1 to 12 with the keys "k-1" to "k-12"
    Then each of the 12 questions was answered with the emulated reply to it
    And the API created each of the 12 keys exactly once

    # Anthropic's Message Batches, a Gemini job and a Mistral job sent inline show their requests only in their
    # results: their batches still running are waited for (`--wait`), then recorded answered.
    Examples:
      | provider     | options             | waiting                                      | answered | running |
      | anthropic    |                     | waiting for the batches it cannot read yet   | 8        | 0       |
      | openai       |                     | waiting for nothing                          | 4        | 4       |
      | azure_openai |                     | waiting for nothing                          | 4        | 4       |
      | groq         |                     | waiting for nothing                          | 4        | 4       |
      | together     |                     | waiting for nothing                          | 4        | 4       |
      | openai_compatible |                | waiting for nothing                          | 4        | 4       |
      | gemini       |                     | waiting for the batches it cannot read yet   | 8        | 0       |
      | bedrock      |                     | waiting for nothing                          | 4        | 4       |
      | mistral      |                     | waiting for the batches it cannot read yet   | 8        | 0       |
      | mistral      | , sending files     | waiting for nothing                          | 4        | 4       |

  Scenario: Calls keyed by their requests are rebuilt too: the running batch's bodies, read back from its input, are the ones the ledger stored
    Given the emulator on a socket, whose batches take 100 seconds
    And the programs' actor sends its batches to the azure_openai API
    When a program asks questions 1 to 4 without keys, and they are answered
    And a program parks questions 5 to 8 without keys, their batches created and still running
    And the ledger's file is deleted with its -wal and -shm, half-way through the run
    And the ledger is rebuilt from the API into a new file with the lost ledger's identity, waiting for nothing
    Then the rebuilt ledger has the lost ledger's identity, and records 8 requests: 4 answered, 4 in batches still running
    And the rebuilt requests in the running batch hold the bodies their keys were derived from
    When a program asks questions 1 to 12 without keys
    Then each of the 12 questions was answered with the emulated reply to it
    And the API created each of the 12 keys exactly once

  Scenario: Without --wait, a batch still running whose requests cannot be read stops the rebuild before anything is written
    Given the emulator on a socket, whose batches take 100 seconds
    And the programs' actor sends its batches to the anthropic API
    When a program asks questions 1 to 4 with the keys "k-1" to "k-4", and they are answered
    And a program parks questions 5 to 8 with the keys "k-5" to "k-8", their batches created and still running
    And the ledger's file is deleted with its -wal and -shm, half-way through the run
    And the operator runs `lowtide ledger rebuild --actors actors.yaml --identity IDENTITY`
    Then the command exits with 1
    And on stderr, the command names each running batch of the API and its request count
    And the rebuild printed on stderr "Nothing was written: run again with --wait"
    And no SQLite ledger file was made at the scenario's ledger

  Scenario: Without an identity, the rebuild lists the identities found, with their batches, requests and newest time, and writes nothing
    Given the emulator on a socket, whose batches take 0 seconds
    And the programs' actor sends its batches to the openai API
    When a program asks questions 1 to 4 with the keys "k-1" to "k-4", and they are answered
    And a program on the ledger "other.sqlite3" asks questions 5 to 6 with the keys "o-5" to "o-6", and they are answered
    And the ledger's file is deleted with its -wal and -shm, half-way through the run
    And the operator runs `lowtide ledger rebuild --actors actors.yaml`
    Then the command exits with 0
    And the command listed the lost ledger's identity with 4 requests, and the other ledger's with 2, each with its newest batch's time
    And the rebuild printed "Nothing was written. Choose the lost ledger's identity and run again with --identity ID."
    And no SQLite ledger file was made at the scenario's ledger
    When the operator runs `lowtide ledger rebuild --actors actors.yaml --identity IDENTITY`
    Then the command exits with 0
    And the rebuild printed "Recorded 1 batch(es), 4 request(s) and 4 result(s)"
    And the rebuild printed "Left alone: the batches of other ledgers"
    When a program asks questions 1 to 4 with the keys "k-1" to "k-4"
    Then each of the 4 questions was answered with the emulated reply to it
    And the API created each of the 6 keys exactly once

  Scenario: A batch the API still validates is listed with the requests its input holds, though its counts say none yet
    # OpenAI's request_counts say 0 until a batch is validated (the emulator's does so for the first tenth of its
    # processing time): the listing counts what the input file, read to tell whose the batch is, holds.
    Given the emulator on a socket, whose batches take 1000 seconds
    And the programs' actor sends its batches to the openai API
    When a program parks questions 1 to 4 with the keys "k-1" to "k-4", their batches created and still running
    And the ledger's file is deleted with its -wal and -shm, half-way through the run
    And the operator runs `lowtide ledger rebuild --actors actors.yaml`
    Then the command exits with 0
    And the command listed the lost ledger's identity with 1 batches and 4 requests

  Scenario: A dry run says what it would record, and writes nothing
    Given the emulator on a socket, whose batches take 100 seconds
    And the programs' actor sends its batches to the openai API
    When a program asks questions 1 to 4 with the keys "k-1" to "k-4", and they are answered
    And a program parks questions 5 to 8 with the keys "k-5" to "k-8", their batches created and still running
    And the ledger's file is deleted with its -wal and -shm, half-way through the run
    And the operator runs `lowtide ledger rebuild --actors actors.yaml --identity IDENTITY --dry-run`
    Then the command exits with 0
    And the rebuild printed "The rebuild of the ledger IDENTITY would record:"
    And the rebuild printed "8 request(s) in 2 batch(es): 4 answered, 4 in batches still running"
    And the rebuild named each batch of the API with its status and request count
    And the rebuild printed "Nothing was written (--dry-run)."
    And no SQLite ledger file was made at the scenario's ledger
    When the operator runs `lowtide ledger rebuild --actors actors.yaml --identity IDENTITY --dry-run --json`
    Then the command exits with 0
    And the JSON printed says a dry run of IDENTITY: 2 batches (1 ended, 1 running), 4 answered, 4 waiting, nothing left out
    And no SQLite ledger file was made at the scenario's ledger

  Scenario: A rebuild into a ledger of another identity that holds requests says so, and writes nothing
    Given the emulator on a socket, whose batches take 0 seconds
    And the programs' actor sends its batches to the openai API
    When a program asks questions 1 to 4 with the keys "k-1" to "k-4", and they are answered
    And the ledger's file is deleted with its -wal and -shm, half-way through the run
    And a program on a new ledger at the same place asks questions 5 to 6 with the keys "k-5" to "k-6", and they are answered
    And the operator runs `lowtide ledger rebuild --actors actors.yaml --identity IDENTITY`
    Then the command exits with 2
    And the rebuild printed on stderr "has identity NEW_IDENTITY and holds 2 request(s) and 1 batch(es), but the batches to rebuild carry identity IDENTITY"
    And the rebuild printed on stderr "Nothing was written."
    And the scenario's ledger holds 2 requests, as before

  Scenario Outline: A rebuild told too little, or told wrongly, says what to write instead, before any API is read
    When "lowtide ledger rebuild <arguments>" runs without a ledger
    Then the command exits with 2
    And the command printed on stderr "lowtide: <message>"

    Examples:
      | arguments                                                     | message                                                                                         |
      |                                                               | Name the accounts to read: --actors with the actor file your programs use, or --provider NAME.  |
      | --provider openai --identity 0123456789AB                     | --identity: a ledger's identity is 12 lowercase hex digits (as the listing shows), not '0123456789AB'. |
      | --provider openai:OPENAI_API_KEY                              | --provider: write NAME or NAME=KEY_VARIABLE, not 'openai:OPENAI_API_KEY'.                       |
      | --provider openia                                             | No provider named 'openia'. Did you mean 'openai'?                                              |
      | --provider openai=LOWTIDE_NO_SUCH_KEY                         | No OpenAI API key: set the LOWTIDE_NO_SUCH_KEY environment variable                             |
      | --provider openai=LOWTIDE_NO_SUCH_KEY --identity 0123456789ab | No OpenAI API key: set the LOWTIDE_NO_SUCH_KEY environment variable                             |

  Scenario: A rebuild into a ledger in one process's memory is refused before the API is read, and names what to write instead
    Given the emulator on a socket, whose batches take 0 seconds
    And the programs' actor sends its batches to the openai API
    When a program asks questions 1 to 2 with the keys "k-1" to "k-2", and they are answered
    And the operator runs `lowtide ledger rebuild --actors actors.yaml --identity IDENTITY --wait --ledger memory:`
    Then the command exits with 2
    And the rebuild printed on stderr "memory: is a ledger in one process's memory, gone when this command ends: name the ledger your programs use with --ledger or $"
    And the API was not asked for its batches by the rebuild

  Scenario: An account whose key the API refuses stops the listing with the API's error, exit status 3
    Given the emulator on a socket, whose batches take 0 seconds
    And the programs' actor sends its batches to the openai API
    When a program asks questions 1 to 2 with the keys "k-1" to "k-2", and they are answered
    And the API will refuse the next "openai.batches.list" call with status 401
    And the operator runs `lowtide ledger rebuild --actors actors.yaml`
    Then the command exits with 3
    And the rebuild printed on stderr "lowtide: Incorrect API key provided."
    And the rebuild printed on stderr "| status 401 | request id req_"
    And the command printed one line on stderr, and nothing on stdout

  Scenario: A batch another tool made on the same account, whose custom ids name no ledger, is neither listed nor recorded
    Given the emulator on a socket, whose batches take 0 seconds
    And the programs' actor sends its batches to the openai API
    When a program asks questions 1 to 4 with the keys "k-1" to "k-4", and they are answered
    And another tool of the account runs an OpenAI batch of 3 requests with custom ids of its own, which ends
    And the ledger's file is deleted with its -wal and -shm, half-way through the run
    And the operator runs `lowtide ledger rebuild --actors actors.yaml`
    Then the command exits with 0
    And the command listed the lost ledger's identity with 1 batches and 4 requests
    And the command printed one identity, and no batch of unknown owner
    When the operator runs `lowtide ledger rebuild --actors actors.yaml --identity IDENTITY`
    Then the command exits with 0
    And the rebuild printed "Recorded 1 batch(es), 4 request(s) and 4 result(s)"

  Scenario: An identity whose batches the API does not hold has nothing to rebuild
    Given the emulator on a socket, whose batches take 0 seconds
    And the programs' actor sends its batches to the openai API
    When a program asks questions 1 to 2 with the keys "k-1" to "k-2", and they are answered
    And the operator runs `lowtide ledger rebuild --actors actors.yaml --identity 0123456789ab --ledger fresh.sqlite3`
    Then the command exits with 1
    And the rebuild printed "No batch of the ledger 0123456789ab is held by the providers' APIs"
    And no file "fresh.sqlite3" was made

  Scenario: A request whose last attempt expired, with attempts left, is left for the rerun, which sends it once more
    Given the emulator on a socket, whose batches take 100 seconds
    And the programs' actor sends its batches to the openai API, with 2 attempts a request
    And the API will let the request "k-2" expire
    When a program parks questions 1 to 4 with the keys "k-1" to "k-4", their batches created and still running
    And the API's batches end
    And the ledger's file is deleted with its -wal and -shm, half-way through the run
    And the ledger is rebuilt from the API into a new file with the lost ledger's identity, waiting for nothing
    Then the rebuilt ledger has the lost ledger's identity, and records 3 requests: 3 answered, 0 in batches still running
    And the rebuild left 1 request for the rerun to send, its last attempt one that may be made again
    When a program asks questions 1 to 4 with the keys "k-1" to "k-4"
    Then each of the 4 questions was answered with the emulated reply to it
    And the API created the keys "k-1", "k-3" and "k-4" once each, and "k-2" twice

  Scenario: An ended batch whose results the API no longer holds is said to be unrecoverable, before anything is written
    Given the emulator on a socket, whose batches take 100 seconds
    And the programs' actor sends its batches to the openai API
    When a program parks questions 1 to 4 with the keys "k-1" to "k-4", their batches created and still running
    And the API's batches end
    And the API no longer holds the results files of its batches
    And the ledger's file is deleted with its -wal and -shm, half-way through the run
    And the operator runs `lowtide ledger rebuild --actors actors.yaml --identity IDENTITY --dry-run`
    Then the command exits with 0
    And the rebuild printed "Cannot be recovered: the 4 request(s) of 1 ended batch(es) of this ledger whose results the API no longer holds"
    And the rebuild printed "0 request(s) in 0 batch(es)"

  Scenario: A damaged ledger is a LedgerError saying to rebuild it, in the API and in the CLI, and the rebuild into its place works
    Given the emulator on a socket, whose batches take 0 seconds
    And the programs' actor sends its batches to the openai API
    When a program asks questions 1 to 40 with the keys "k-1" to "k-40", and they are answered
    And the pages of the ledger's file are overwritten
    And a program asks questions 1 to 40 with the keys "k-1" to "k-40"
    Then each of the 40 questions failed with a LedgerError saying "Rebuild it from the providers' APIs instead: lowtide ledger rebuild"
    When the operator runs `lowtide status`
    Then the command exits with 2
    And the rebuild printed on stderr "lowtide: The ledger LEDGER "
    And on stderr, the command says "damaged (database disk image is malformed)" and "Do not start a new ledger and run your programs again"
    And the rebuild printed on stderr "lowtide ledger rebuild --ledger LEDGER --actors ACTOR_FILE"
    And the command printed one line on stderr, and nothing on stdout
    When the operator runs `lowtide ledger rebuild --actors actors.yaml --identity IDENTITY`
    Then the command exits with 0
    And on stderr, the command says "The damaged ledger was moved aside to" and ".damaged-"
    And the rebuild printed "Recorded 1 batch(es), 40 request(s) and 40 result(s)"
    When a program asks questions 1 to 40 with the keys "k-1" to "k-40"
    Then each of the 40 questions was answered with the emulated reply to it
    And the API created each of the 40 keys exactly once

  Scenario: Keys too long for the provider's custom ids are hashed, recorded by custom id, and taken over by the rerun's claims
    Given the emulator on a socket, whose batches take 100 seconds
    And the programs' actor sends its batches to the anthropic API
    When a program asks questions 1 to 3 with keys of 80 characters, and they are answered
    And a program asks questions 4 to 5 with the keys "k-4" to "k-5", and they are answered
    And the ledger's file is deleted with its -wal and -shm, half-way through the run
    And the ledger is rebuilt from the API into a new file with the lost ledger's identity, waiting for nothing
    Then the rebuilt ledger has the lost ledger's identity, and records 5 requests: 5 answered, 0 in batches still running
    And 3 of the rebuilt requests are keyed by their custom ids alone, and 1 batch holds only hashed custom ids
    When a program asks questions 1 to 3 with keys of 80 characters
    Then each of the 3 questions was answered with the emulated reply to it
    And the API created 5 requests in all, each once
    And the rebuilt ledger holds no request keyed by its custom id alone any more

  # The memory store holds a ledger for one process: lost when it ends, and rebuilt into any store, itself included.
  @stores
  Scenario: A ledger lost with the program that held it is rebuilt into the scenario's store, whose claims take over its hashed requests
    Given an emulated Anthropic API whose batches take 100 seconds
    When a program whose ledger is in its memory asks questions 1 to 3 with keys of 80 characters and questions 4 to 5 with the keys "k-4" to "k-5", all answered
    And that program parks questions 6 to 8 with the keys "k-6" to "k-8", their batch created and still running, and ends, its ledger gone with it
    And the lost ledger is rebuilt into the scenario's ledger, waiting for the batches it cannot read yet
    Then the scenario's ledger has the lost ledger's identity, and records 8 requests, 3 of them keyed by their custom ids alone
    When a program on the scenario's ledger asks questions 1 to 3 with keys of 80 characters and questions 4 to 10 with the keys "k-4" to "k-10"
    Then each of the 10 questions was answered with the emulated reply to it, from the same API batches for the first 8
    And the Anthropic API created 10 requests in all, each once
    And the scenario's ledger holds no request keyed by its custom id alone any more

  Scenario: A lost ledger is rebuilt into a ledger in memory, which answers the rerun
    Given an emulated Anthropic API whose batches take 100 seconds
    When a program whose ledger is the scenario's file asks questions 1 to 3 with keys of 80 characters and questions 4 to 5 with the keys "k-4" to "k-5", all answered
    And that program parks questions 6 to 8 with the keys "k-6" to "k-8", their batch created and still running, and ends, its ledger gone with it
    And the lost ledger is rebuilt into a new ledger in memory, waiting for the batches it cannot read yet
    Then the ledger in memory has the lost ledger's identity, and records 8 requests, 3 of them keyed by their custom ids alone
    When a program on the ledger in memory asks questions 1 to 3 with keys of 80 characters and questions 4 to 10 with the keys "k-4" to "k-10"
    Then each of the 10 questions was answered with the emulated reply to it, from the same API batches for the first 8
    And the Anthropic API created 10 requests in all, each once
    And the ledger in memory holds no request keyed by its custom id alone any more

  @postgres
  Scenario: A PostgreSQL ledger whose tables are gone from under its programs is a LedgerError saying to rebuild it
    Given a postgres ledger store holding the requests alpha, beta
    When its table "batch_members" is dropped while the store is open, and its requests are read
    Then the read fails with a LedgerError saying "Its tables are damaged or gone" and "lowtide ledger rebuild --ledger postgresql://"
