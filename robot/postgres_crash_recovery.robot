*** Settings ***
Test Timeout        10 minutes    # stuck, not slow: the longest take a few minutes on a loaded machine
Documentation       The crash suite (`crash_recovery.robot`) on a PostgreSQL ledger: a batch-mode client killed with
...                 SIGKILL at any stage of a batch's life, then run again with the same keys and the same database,
...                 loses no answer and pays for nothing twice. Since schema 7 the intent writes no request row (a
...                 request's batch is its latest membership, a pending one a row of `pending_requests`): a client
...                 killed between the intent and the create leaves every request submitting in the intent, which the
...                 next run reconciles (the API holds no batch) and sends once.
...
...                 Each test has a database of its own in a throwaway cluster (`nox -s postgres`) and the suite's
...                 `lowtide emulator`, reset before the test (`Fresh Emulator`). The client is
...                 `resources/crash_client.py`; a create still in flight when it dies is kept in flight by the
...                 emulator's `delay_after_commit` fault.

Resource            resources/crash.resource
Library             PostgresLibrary.py

Suite Teardown      Clean Up And Stop PostgreSQL
Test Setup          Fresh Emulator    processing_seconds=${PROCESSING}
Test Teardown       Stop The Test's Clients
Test Template       Killed On A PostgreSQL Ledger

Test Tags           postgres


*** Variables ***
${PREFIX}           ${EMPTY}
${PROCESSING}       1
${REQUESTS}         20
# More than one chunk of results (2,000 lines), so that the client dies with part of them stored.
${STREAMED}         2400
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


*** Keywords ***
Killed On A PostgreSQL Ledger
    [Arguments]    ${crashpoint}    ${requests}    ${create_fault}=${NONE}
    ${ledger}=    Create PostgreSQL Database
    A Client Killed At A Crash Point Loses Nothing And Pays Once    ${crashpoint}    ${requests}
    ...    create_fault=${create_fault}    ledger=${ledger}

Clean Up And Stop PostgreSQL
    Clean Up
    Stop PostgreSQL
