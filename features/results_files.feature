Feature: A bulk run never writes over what a user gave
  As an operator pointing lowtide at my files
  I want a results path that would destroy an input, or someone else's results, refused before anything is sent
  So that no typo in --out or --results-dir costs me my data, and a crash mid-write costs me no file

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
    And a JSONL file "in.jsonl" of 3 prompts
    And the bytes of "in.jsonl" are noted
    And the bytes of "actor.yaml" are noted

  Scenario Outline: An --out that is one of the run's inputs is refused, before anything is sent, and the input is intact (<how>)
    Given "link.jsonl" in the scenario's folder is a symbolic link to "in.jsonl"
    And "hard.jsonl" in the scenario's folder is a hard link to "in.jsonl"
    When "lowtide run in.jsonl --actor actor.yaml --out <out> --progress none" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "<message>"
    And "in.jsonl" is as it was
    And "actor.yaml" is as it was
    And the API received no calls at all
    And the ledger has no run

    Examples:
      | how                  | out           | message                                                                                                           |
      | the same path        | in.jsonl      | lowtide: --out: in.jsonl is the run's input; writing the results there would destroy it. Name another file for the results. |
      | another spelling     | ./in.jsonl    | --out: in.jsonl is the run's input; writing the results there would destroy it.                                   |
      | a symbolic link      | link.jsonl    | --out: link.jsonl is the run's input (in.jsonl); writing the results there would destroy it.                      |
      | a hard link          | hard.jsonl    | --out: hard.jsonl is the run's input (in.jsonl); writing the results there would destroy it.                      |
      | the actor file       | actor.yaml    | --out: actor.yaml is the actor file; writing the results there would destroy it.                                  |

  Scenario: An --out that is a file a job sends is refused, and the file is intact
    Given the file "notes.txt" in the scenario's folder holds:
      """
      High water at 06:12.
      """
    And the bytes of "notes.txt" are noted
    And the file "jobs.jsonl" in the scenario's folder holds:
      """
      {"prompt": "When is high water?", "file": "notes.txt"}
      """
    When "lowtide run jobs.jsonl --actor actor.yaml --out notes.txt --progress none" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "--out: notes.txt is a file a job sends"
    And "notes.txt" is as it was
    And the API received no calls at all

  Scenario: A results folder whose results.jsonl would be the input is refused, and the input is intact
    Given the folder "data" in the scenario's folder holds the file "results.jsonl" of 3 prompts
    And the bytes of "data/results.jsonl" are noted
    When "lowtide run data/results.jsonl --actor actor.yaml --results-dir data --progress none" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "--results-dir: the run would write its results to data/results.jsonl, which is the run's input; that would destroy it. Name another folder for the results."
    And "data/results.jsonl" is as it was
    And the API received no calls at all

  Scenario: A results folder whose raw results would be the input is refused, and the input is intact
    Given the folder "data" in the scenario's folder holds the file "raw/batch.jsonl" of 3 prompts
    And the bytes of "data/raw/batch.jsonl" are noted
    When "lowtide run data/raw/batch.jsonl --actor actor.yaml --results-dir data --progress none" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "--results-dir: the run would write its results to data/raw/batch.jsonl, which is the run's input"
    And "data/raw/batch.jsonl" is as it was
    And the API received no calls at all

  Scenario Outline: An existing file that is not this run's results is refused, named, with how to go on (<held>)
    Given the file "<file>" in the scenario's folder holds:
      """
      <content>
      """
    And the bytes of "<file>" are noted
    When "lowtide run in.jsonl --actor actor.yaml --run-id mine <option> --progress none" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "<message>"
    And the command printed on stderr "Name another path, or delete the file to replace it."
    And "<file>" is as it was
    And the API received no calls at all
    And the ledger has no run

    Examples:
      | held               | file                | option                | content                                                     | message                                                                  |
      | notes              | out.jsonl           | --out out.jsonl       | my own notes, not results                                   | --out: out.jsonl already holds something other than a run's results, not those of run 'mine' |
      | another run's      | out.jsonl           | --out out.jsonl       | {"index": 0, "key": "theirs-0", "status": "succeeded"}      | --out: out.jsonl already holds the results of run 'theirs', not those of run 'mine' |
      | another run's, dir | res/results.jsonl   | --results-dir res     | {"index": 0, "key": "theirs-0-a2", "status": "failed"}      | --results-dir: res/results.jsonl already holds the results of run 'theirs' |

  Scenario: The same run resumed, or retried, replaces its own results
    When "lowtide run in.jsonl --actor actor.yaml --run-id mine --out out.jsonl --results-dir res --progress none" runs in the scenario's folder
    Then the command exits with 0
    And "out.jsonl" holds the results of run "mine", 3 lines, all succeeded
    When "lowtide run in.jsonl --actor actor.yaml --run-id mine --out out.jsonl --results-dir res --progress none" runs in the scenario's folder
    Then the command exits with 0
    And "out.jsonl" holds the results of run "mine", 3 lines, all succeeded
    And "res/results.jsonl" holds the results of run "mine", 3 lines, all succeeded
    When "lowtide retry mine --progress none" runs in the scenario's folder
    Then the command exits with 0
    And "out.jsonl" holds the results of run "mine", 3 lines, all succeeded
    When "lowtide run in.jsonl --actor actor.yaml --run-id yours --out out.jsonl --progress none" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "--out: out.jsonl already holds the results of run 'mine', not those of run 'yours'"
    And "out.jsonl" holds the results of run "mine", 3 lines, all succeeded
    And "in.jsonl" is as it was

  Scenario: An empty file may be replaced: it holds nothing to lose
    Given the file "empty.jsonl" in the scenario's folder holds the bytes b''
    When "lowtide run in.jsonl --actor actor.yaml --run-id mine --out empty.jsonl --progress none" runs in the scenario's folder
    Then the command exits with 0
    And "empty.jsonl" holds the results of run "mine", 3 lines, all succeeded

  Scenario: Standard output is no file: --out - writes the results there as before
    When "lowtide run in.jsonl --actor actor.yaml --run-id mine --out - --progress none" runs in the scenario's folder
    Then the command exits with 0
    And "in.jsonl" is as it was
