@stores
Feature: An item whose batch exists is never failed for a reason of lowtide's
  As a developer whose batches were paid for
  I want answers that lowtide could not read, or not read yet, to stay mine: waiting on their batch, or kept as lines
  So that a broken download, a garbled line or an unreadable answer never costs me an item, nor a second payment

  Rule: A results download that stays broken leaves the unanswered items waiting on their batch

    Scenario Outline: A download that breaks half-way every time: what arrived is kept, the rest waits, and the run again answers every item, sending nothing twice (<provider>)
      Given an emulated <provider> API whose batches take 60 seconds
      And an actor "reader" of the <provider> API in batch mode
      And 6 prompts "Review {n}"
      And every download of a batch's results will break after 2 lines, 6 times in a row
      When the actor maps the prompts as run "cut"
      Then the run's items are 2 succeeded and 4 waiting on their batch, none failed
      And each waiting item names the batch it waits on, and the run's summary says how to collect it
      And lowtide status of the run "cut" says 4 items wait on that batch and how to collect them
      And the <provider> API was sent the results download 6 times
      When the actor maps the prompts as run "cut"
      Then every one of the 6 results succeeded
      And the <provider> API created each request of the run once, in 1 batch

      Examples:
        | provider  |
        | Anthropic |
        | OpenAI    |

    Scenario Outline: Waiting items are collected by lowtide collect, then reported by the run from the ledger alone (<provider>)
      Given an emulated <provider> API whose batches take 60 seconds
      And an actor "reader" of the <provider> API in batch mode
      And 5 prompts "Review {n}"
      And every download of a batch's results will break after 0 lines, 6 times in a row
      When the actor maps the prompts as run "later"
      Then the run's items are 0 succeeded and 5 waiting on their batch, none failed
      When lowtide collects the ended batches of the <provider> API
      Then lowtide status of the run "later" says 5 items succeeded and none waits
      When the API's call counts are noted
      And the actor maps the prompts as run "later"
      Then every one of the 5 results succeeded
      And the API received no calls since they were noted
      And the <provider> API created each request of the run once, in 1 batch

      Examples:
        | provider  |
        | Anthropic |
        | OpenAI    |

    Scenario: lowtide retry collects the waiting items, then sends only the failed again
      Given an emulated Anthropic API whose batches take 60 seconds
      And an actor "reader" of the Anthropic API in batch mode
      And 4 prompts "Review {n}", with prompt 1 ending as errored
      And every download of a batch's results will break after 0 lines, 6 times in a row
      When the actor maps the prompts as run "mixed"
      Then the run's items are 0 succeeded and 4 waiting on their batch, none failed
      When the run "mixed" is retried
      Then the run's items are 3 succeeded, 1 failed and 0 waiting
      And the Anthropic API created each request of the run once, in 1 batch
      When the run "mixed" is retried
      Then the run's items are 3 succeeded, 1 failed and 0 waiting
      And the Anthropic API created "mixed-0", "mixed-2" and "mixed-3" once, and item 1 once per attempt

    Scenario: A retryable error that arrived before the download broke is sent again at once; the rest waits
      Given an emulated Anthropic API whose batches take 60 seconds
      And an actor "reader" of the Anthropic API in batch mode, with 2 attempts a request
      And 2 prompts "Review {n}"
      And the first result line of the run "flaky" ends as errored with overloaded_error, in the first batch only
      And every download of a batch's results will break after 1 lines, 6 times in a row
      When the actor maps the prompts as run "flaky"
      Then the run's items are 1 succeeded, 0 failed and 1 waiting
      And the item whose first line errored succeeded in a batch of its own, the other waits on the first batch
      When the actor maps the prompts as run "flaky"
      Then every one of the 2 results succeeded

    Scenario: One call whose results cannot be read raises the error; its request waits on its batch and is answered later
      Given an emulated Anthropic API whose batches take 60 seconds
      And an actor "reader" of the Anthropic API in batch mode
      And every download of a batch's results will break after 0 lines, 6 times in a row
      When the actor is asked "Plan issue 42" with the key "plan-issue-42"
      Then an APIConnectionError is raised
      And lowtide status shows these tickets:
        | key           | state | batch | attempts |
        | plan-issue-42 | ended | yes   | 1        |
      When the actor waits for the result of "plan-issue-42"
      Then the answer is the emulated reply to "Plan issue 42"
      And the Anthropic API created "plan-issue-42" once

  Rule: A result line lowtide cannot read is that request's error, the line kept; the others are answered

    Scenario Outline: A garbled line (<kind>) fails its item alone, with the raw line in the ledger and in the raw results (<provider>)
      Given an emulated <provider> API whose batches take 60 seconds
      And an actor "reader" of the <provider> API in batch mode
      And 4 prompts "Review {n}"
      And the <provider> API will garble the result line of "garbled-2" as <kind>
      When the actor runs the prompts as run "garbled", writing its results into the folder "out"
      Then results 0, 1 and 3 succeeded, and result 2 failed with BatchRequestUnreadable saying "<says>"
      And the ledger keeps the raw line of "garbled-2" in its error, as the API sent it
      And the raw results in "out" hold each request's line once, "garbled-2" as the API sent it
      And the <provider> API created each request of the run once, in 1 batch

      Examples:
        | provider  | kind           | says                                   |
        | Anthropic | bad-json       | not JSON                               |
        | Anthropic | not-utf8       | not UTF-8                              |
        | Anthropic | unknown-shape  | a result of unknown type 'teleported'  |
        | Anthropic | lone-surrogate | a string holds an unpaired surrogate   |
        | Anthropic | not-an-object  | a JSON list, not an object             |
        | OpenAI    | bad-json       | not JSON                               |
        | OpenAI    | not-utf8       | not UTF-8                              |
        | OpenAI    | unknown-shape  | neither a response nor an error        |
        | OpenAI    | lone-surrogate | a string holds an unpaired surrogate   |
        | OpenAI    | not-an-object  | a JSON list, not an object             |

    Scenario: A garbled line is read once whatever the download it came in: broken off and fetched again, it is kept once
      Given an emulated Anthropic API whose batches take 60 seconds
      And an actor "reader" of the Anthropic API in batch mode
      And 4 prompts "Review {n}"
      And the Anthropic API will garble the result line of "twice-3" as bad-json
      And the next download of a batch's results will break after 3 lines
      When the actor runs the prompts as run "twice", writing its results into the folder "out"
      Then results 0, 1 and 2 succeeded, and result 3 failed with BatchRequestUnreadable saying "not JSON"
      And the raw results in "out" hold each request's line once, "twice-3" as the API sent it

  Rule: A prompt holding a lone surrogate, sent past every check before sending, loses no item

    Scenario: The API refuses the body, as it does: nothing is created or paid for, and every call is told why
      Given an emulated Anthropic API whose batches take 60 seconds
      And an actor "reader" of the Anthropic API in batch mode
      When the actor's batch engine sends "fine", "x \ud800" and "also fine" as one batch, past every check before sending
      Then each of the 3 calls failed with InvalidRequestError saying "The request body is not valid JSON: no low surrogate in string"
      And the Anthropic API created no batch
      And the ledger holds the 3 requests, each pending in no batch, ready to be sent again

    Scenario: A bulk run whose create the API refuses reports its items failed, everywhere, and lowtide retry sends them again
      Given an emulated Anthropic API whose batches take 60 seconds
      And an actor "reader" of the Anthropic API in batch mode
      And 3 prompts "Review {n}"
      And the API will fail the next "batches.create" call with status 400
      When the actor maps the prompts as run "refused"
      Then the run's items are 0 succeeded, 3 failed and 0 waiting
      And lowtide status of the run "refused" says 3 items failed
      When the run "refused" is retried
      Then every one of the 3 results succeeded

    Scenario: An answer that quotes a lone surrogate back fails its item alone, the line kept
      Given an emulated Anthropic API whose batches take 60 seconds
      And an actor "reader" of the Anthropic API in batch mode
      And 3 prompts "Review {n}"
      And the Anthropic API will garble the result line of "echo-1" as lone-surrogate
      When the actor runs the prompts as run "echo", writing its results into the folder "out"
      Then results 0 and 2 succeeded, and result 1 failed with BatchRequestUnreadable saying "unpaired surrogate"
      And the ledger keeps the raw line of "echo-1" in its error, as the API sent it

  Rule: From Python too, a run never writes over what a user gave, and a crash mid-write costs no file

    Background:
      Given an emulated Anthropic API whose batches take 60 seconds
      And an actor "reader" of the Anthropic API in batch mode
      And 3 prompts "Review {n}"

    Scenario: A crash while the results are written (the rename never happens) leaves the old file whole, and no partial file
      When the actor runs the prompts as run "kept", writing its results to "out.jsonl"
      Then "out.jsonl" holds the results of run "kept", 3 lines, all succeeded
      Given the bytes of "out.jsonl" are noted
      When the actor runs the prompts as run "kept", writing its results to "out.jsonl", but the rename never happens
      Then the run failed with OSError saying "the rename never happens"
      And "out.jsonl" is as it was
      And the scenario's folder holds no partial file
      When the actor runs the prompts as run "kept", writing its results to "out.jsonl"
      Then "out.jsonl" holds the results of run "kept", 3 lines, all succeeded

    Scenario: actor.map refuses an out= that is a file a job sends, or another run's results, before anything is sent
      Given a text file "notes.txt" with "High water at 06:12."
      And the bytes of "notes.txt" are noted
      When the actor runs a job sending "notes.txt" as run "jobs", writing its results to "notes.txt"
      Then the run failed with ConfigurationError saying "out: "
      And the run failed with ConfigurationError saying "notes.txt is a file a job sends; writing the results there would destroy it."
      And "notes.txt" is as it was
      When the actor runs the prompts as run "first", writing its results to "first.jsonl"
      And the bytes of "first.jsonl" are noted
      And the actor runs the prompts as run "second", writing its results to "first.jsonl"
      Then the run failed with ConfigurationError saying "already holds the results of run 'first', not those of run 'second'"
      And "first.jsonl" is as it was
      And the API created 1 batch in all

    Scenario: A raw results file left with half a line by a process killed while writing is cut back to its whole lines on resume
      Given every download of a batch's results will break after 1 lines, 6 times in a row
      When the actor runs the prompts as run "torn", writing its results into the folder "out"
      Then the run's items are 1 succeeded and 2 waiting on their batch, none failed
      Given the raw results of the batch in "out" end with half a line, as a process killed while writing leaves them
      When the actor runs the prompts as run "torn", writing its results into the folder "out"
      Then every one of the 3 results succeeded
      And every line of the raw results in "out" is whole, one per request of the run
      And "out/results.jsonl" holds the results of run "torn", 3 lines, all succeeded
