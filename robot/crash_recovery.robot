*** Settings ***
Test Timeout        10 minutes    # stuck, not slow: the longest take a few minutes on a loaded machine
Documentation       A batch-mode client killed with SIGKILL at any stage of a batch's life loses no answer and pays
...                 for nothing twice: the same program run again with the same keys and the same ledger finishes
...                 the work, every request is answered once, and the API created each request in exactly one batch.
...
...                 Each test has its own ledger and the suite's `lowtide emulator` (a separate process on a loopback
...                 socket), reset before the test as if started anew (`Fresh Emulator`). The client
...                 (`resources/crash_client.py`) is killed by lowtide's own crash points (`LOWTIDE_CRASHPOINT`); a
...                 create still in flight when it dies is kept in flight by the emulator's `delay_after_commit` fault,
...                 which commits the batch and answers only later.

Resource            resources/crash.resource

Suite Teardown      Clean Up
Test Setup          Fresh Emulator    processing_seconds=${PROCESSING}
Test Teardown       Stop The Test's Clients
Test Template       A Client Killed At A Crash Point Loses Nothing And Pays Once


*** Variables ***
${PREFIX}           ${EMPTY}
${PROCESSING}       1
${REQUESTS}         20
# More than one chunk of results (2,000 lines), so that the client dies with part of them stored.
${STREAMED}         2400
# `during-create`: the emulator answers the create 3 s after committing it; the client dies 1 s after sending it.
${CREATE_DELAY}     3
${CRASH_DELAY}      1


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

A Create Whose Answer Is Lost Is Reconciled, Not Sent Again
    [Documentation]    The emulator commits the batch and drops the connection without an answer. Nobody is killed:
    ...    the client cannot know whether the batch exists, finds it in the API's list and adopts it.
    [Template]    NONE
    ${ledger}=    New Ledger
    Arm Fault    batches.create    drop_after_commit
    ${client}=    Run Client    dropped    ${REQUESTS}    ${ledger}
    Client Should Have Succeeded    ${client}
    Answers Should Be Complete    ${client}    dropped    ${REQUESTS}
    Client Log Should Contain    ${client}    reconciled with the API's
    Emulator Call Count Should Be    batches.create    1
    Every Request Should Have Been Created Once    dropped    ${REQUESTS}
    Every Ticket Should Be Collected    ${ledger}    dropped    ${REQUESTS}


