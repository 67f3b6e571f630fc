*** Settings ***
Test Timeout        10 minutes    # stuck, not slow: the longest take a few minutes on a loaded machine
Documentation       The crash suite over Azure OpenAI's Batch API: a batch-mode Azure client (its `model` a
...                 deployment) killed with SIGKILL around the create (the input file uploaded and recorded, the create
...                 in flight, its answer not yet recorded) loses no answer and pays for nothing twice. Run again with the same keys and ledger, it finishes the work; the emulator's Azure API
...                 created each request in exactly one batch. A create whose answer is lost is found by the intent id
...                 in the batch's metadata, which Azure's API takes and echoes (API version 2024-10-21).
...
...                 Each test has its own ledger and the suite's `lowtide emulator` (a separate process on a loopback
...                 socket), reset before the test as if started anew (`Fresh Emulator`); the client is
...                 `resources/crash_client.py --provider azure_openai`. The stages every provider shares (the intent
...                 recorded, polling, storing results) are held by the OpenAI suite, whose backend Azure's reuses.

Resource            resources/crash.resource

Suite Setup         Use Provider    azure_openai
Suite Teardown      Clean Up
Test Setup          Fresh Emulator    processing_seconds=${PROCESSING}
Test Teardown       Stop The Test's Clients
Test Template       A Client Killed At A Crash Point Loses Nothing And Pays Once


*** Variables ***
${PREFIX}           azure_openai.
${PROCESSING}       1
${REQUESTS}         20
# `during-create`: the emulator answers the create 3 s after committing it; the client dies 1 s after sending it.
${CREATE_DELAY}     3
${CRASH_DELAY}      1


*** Test Cases ***    CRASHPOINT                        REQUESTS       CREATE FAULT
Killed After The Input File Was Uploaded And Recorded, Before The Create
                      after-step-input_file             ${REQUESTS}
Killed While The Create Is In Flight And The Batch Exists
                      during-create:${CRASH_DELAY}      ${REQUESTS}    delay_after_commit
Killed After The Create Answered, Before Its Batch Id Was Recorded
                      after-create                      ${REQUESTS}
Killed After Every Result Was Stored, Before The Batch Was Said Collected
                      after-results                     ${REQUESTS}

A Create Whose Answer Is Lost Is Found By Its Intent Id, Not Sent Again
    [Documentation]    The emulator commits the batch and drops the connection without an answer. Nobody is killed:
    ...    the client cannot know whether the batch exists, and finds it by the intent id in its metadata.
    [Template]    NONE
    ${ledger}=    New Ledger
    Arm Fault    azure_openai.batches.create    drop_after_commit
    ${client}=    Run Client    dropped    ${REQUESTS}    ${ledger}
    Client Should Have Succeeded    ${client}
    Answers Should Be Complete    ${client}    dropped    ${REQUESTS}
    Client Log Should Contain    ${client}    by its metadata
    Emulator Call Count Should Be    azure_openai.batches.create    1
    Emulator Call Count Should Be    azure_openai.files.create    1
    Every Request Should Have Been Created Once    dropped    ${REQUESTS}
    Every Ticket Should Be Collected    ${ledger}    dropped    ${REQUESTS}
