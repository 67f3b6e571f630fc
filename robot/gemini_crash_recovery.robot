*** Settings ***
Test Timeout        10 minutes    # stuck, not slow: the longest take a few minutes on a loaded machine
Documentation       The crash suite over the Gemini API's batch mode: a batch-mode Gemini client killed with SIGKILL
...                 at any stage of a job's life (before the create, with the create in flight, after it answered,
...                 while the job is polled, with its results half stored) loses no answer and pays for nothing twice.
...                 Run again with the same keys and ledger, it finishes the work; the emulator's Gemini API created
...                 each request in exactly one job. A create whose answer is lost is found by the intent id in the
...                 job's display name (the ledger logs it as found "by its metadata", as for every provider).
...
...                 Each test has its own ledger and the suite's `lowtide emulator` (a separate process on a loopback
...                 socket), reset before the test as if started anew (`Fresh Emulator`); the client is
...                 `resources/crash_client.py --provider gemini`, through google-genai. Its batches are small enough to
...                 go inline (the job answers inline, in the job itself), except in the test that sends every batch as
...                 an uploaded file and dies once the upload is recorded.

Resource            resources/crash.resource

Suite Setup         Use Provider    gemini
Suite Teardown      Clean Up
Test Setup          Fresh Emulator    processing_seconds=${PROCESSING}
Test Teardown       Stop The Test's Clients
Test Template       A Client Killed At A Crash Point Loses Nothing And Pays Once


*** Variables ***
${PREFIX}           gemini.
${PROCESSING}       1
${REQUESTS}         20
# More than one chunk of results (2,000 lines), so that the client dies with part of them stored.
${STREAMED}         2400
# `during-create`: the emulator answers the create 3 s after committing it; the client dies 1 s after sending it.
${CREATE_DELAY}     3
${CRASH_DELAY}      1
${FILES_ONLY}       {"gemini": {"batch_inline_bytes": 0}}


*** Test Cases ***    CRASHPOINT                        REQUESTS       CREATE FAULT
Killed After The Intent Was Committed, Before The Create Was Sent
                      after-intent                      ${REQUESTS}
Killed While The Create Is In Flight And The Job Exists
                      during-create:${CRASH_DELAY}      ${REQUESTS}    delay_after_commit
Killed After The Create Answered, Before Its Job Name Was Recorded
                      after-create                      ${REQUESTS}
Killed While Polling The Job
                      while-polling                     ${REQUESTS}
Killed While Storing The Results
                      while-streaming                   ${STREAMED}
Killed After Every Result Was Stored, Before The Batch Was Said Collected
                      after-results                     ${REQUESTS}

Killed After The Input File Was Uploaded And Recorded, Before The Create
    [Documentation]    Every batch goes as a file (`batch_inline_bytes: 0`): the client dies once the uploaded file's
    ...    name is in the ledger. Run again, it creates the job from that file: uploaded once, created once.
    [Template]    NONE
    A Client Killed At A Crash Point Loses Nothing And Pays Once
    ...    after-step-input_file    ${REQUESTS}    provider_options=${FILES_ONLY}
    # One upload in all: the resumable protocol's start and its bytes are two calls.
    Emulator Call Count Should Be    gemini.files.upload    2

A Create Whose Answer Is Lost Is Found By Its Display Name, Not Sent Again
    [Documentation]    The emulator commits the job and drops the connection without an answer. Nobody is killed:
    ...    the client cannot know whether the job exists, and finds it by the intent id in its display name.
    [Template]    NONE
    ${ledger}=    New Ledger
    Arm Fault    gemini.batches.create    drop_after_commit
    ${client}=    Run Client    dropped    ${REQUESTS}    ${ledger}
    Client Should Have Succeeded    ${client}
    Answers Should Be Complete    ${client}    dropped    ${REQUESTS}
    Client Log Should Contain    ${client}    by its metadata
    Emulator Call Count Should Be    gemini.batches.create    1
    Every Request Should Have Been Created Once    dropped    ${REQUESTS}
    Every Ticket Should Be Collected    ${ledger}    dropped    ${REQUESTS}
