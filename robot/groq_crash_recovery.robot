*** Settings ***
Test Timeout        10 minutes    # stuck, not slow: the longest take a few minutes on a loaded machine
Documentation       The crash suite over Groq's Batch API: a batch-mode Groq client killed with SIGKILL at any
...                 stage of a batch's life (the input file uploaded or not, the create in flight, the batch polled,
...                 its output file half stored) loses no answer and pays for nothing twice. Run again with the same
...                 keys and ledger, it finishes the work; the emulator's Groq API created each request in exactly
...                 one batch. A create whose answer is lost is found by the intent id in the batch's metadata, which
...                 Groq's `batches.create` takes as OpenAI's does.
...
...                 Each test has its own ledger and the suite's `lowtide emulator` (a separate process on a loopback
...                 socket), reset before the test as if started anew (`Fresh Emulator`); the client is
...                 `resources/crash_client.py --provider groq`, through the groq SDK (which adds Groq's `/openai/v1` to
...                 the emulator's address itself).

Resource            resources/crash.resource

Suite Setup         Use Provider    groq
Suite Teardown      Clean Up
Test Setup          Fresh Emulator    processing_seconds=${PROCESSING}
Test Teardown       Stop The Test's Clients
Test Template       A Client Killed At A Crash Point Loses Nothing And Pays Once


*** Variables ***
${PREFIX}           groq.
${PROCESSING}       1
${REQUESTS}         20
# More than one chunk of results (2,000 lines), so that the client dies with part of them stored.
${STREAMED}         2400
# `during-create`: the client dies 5 s after its create began, the emulator answers the create 15 s after committing
# it. The create is two calls (the upload, then the create) and the clock starts before the upload: with 1 s, a
# loaded machine could kill the client before its create reached the API (seen once in a full run); 5 s is far more
# than both calls take, and the answer still comes long after the kill.
${CREATE_DELAY}     15
${CRASH_DELAY}      5


*** Test Cases ***    CRASHPOINT                        REQUESTS       CREATE FAULT
Killed After The Intent Was Committed, Before The Create Was Sent
                      after-intent                      ${REQUESTS}
Killed While The Create Is In Flight And The Batch Exists
                      during-create:${CRASH_DELAY}      ${REQUESTS}    delay_after_commit
Killed After The Create Answered, Before Its Batch Id Was Recorded
                      after-create                      ${REQUESTS}
Killed While Polling The Batch
                      while-polling                     ${REQUESTS}
Killed While Storing The Results
                      while-streaming                   ${STREAMED}
Killed After Every Result Was Stored, Before The Batch Was Said Collected
                      after-results                     ${REQUESTS}

Killed After The Input File Was Uploaded And Recorded, Before The Create
    [Documentation]    The client dies once the uploaded file's id is in the ledger. Run again, it creates the batch
    ...    from that file: uploaded once, created once.
    [Template]    NONE
    A Client Killed At A Crash Point Loses Nothing And Pays Once    after-step-input_file    ${REQUESTS}
    Emulator Call Count Should Be    groq.files.create    1

A Create Whose Answer Is Lost Is Found By Its Intent Id, Not Sent Again
    [Documentation]    The emulator commits the batch and drops the connection without an answer. Nobody is killed:
    ...    the client cannot know whether the batch exists, and finds it by the intent id in its metadata.
    [Template]    NONE
    ${ledger}=    New Ledger
    Arm Fault    groq.batches.create    drop_after_commit
    ${client}=    Run Client    dropped    ${REQUESTS}    ${ledger}
    Client Should Have Succeeded    ${client}
    Answers Should Be Complete    ${client}    dropped    ${REQUESTS}
    Client Log Should Contain    ${client}    by its metadata
    Emulator Call Count Should Be    groq.batches.create    1
    Every Request Should Have Been Created Once    dropped    ${REQUESTS}
    Every Ticket Should Be Collected    ${ledger}    dropped    ${REQUESTS}
