*** Settings ***
Test Timeout        10 minutes    # stuck, not slow: the longest take a few minutes on a loaded machine
Documentation       Two client processes started together on one ledger with the same keys share the work: each
...                 request is created in exactly one batch, both get every answer, and their answers agree, the
...                 ledger file new and created by both at once. One of them killed while polling leaves
...                 nothing behind that the other does not finish.
...
...                 The clients meet at a barrier after their interpreters have started, so that their first calls
...                 (and so their first use of the ledger) happen at the same moment. One emulator serves the suite,
...                 reset before each test (and each round): no batch, call or fault of an earlier one is left.

Library             CrashLibrary.py

Suite Setup         Start Emulator    processing_seconds=${PROCESSING}
Suite Teardown      Clean Up
Test Setup          Reset Emulator
Test Teardown       Log Failure And Stop Clients


*** Variables ***
${PROCESSING}       2
${REQUESTS}         200
# Opening a fresh ledger at the same moment is a race that a single attempt may miss.
${FRESH_ROUNDS}     ${2}
# 20 calls take a client a few seconds, interpreter start-up included (on a machine busy with other tests, several
# times that); a client SQLite kept waiting for a lock fails after 30 s, and says so.
${SMALL_RUN_LIMIT}     90


*** Test Cases ***
Two Clients With The Same Keys Started Together On A Fresh Ledger Pay Once And Agree
    [Documentation]    Both clients exit 0 with all their answers, the same ones, and the API created each request in
    ...    exactly one batch; the ledger file does not exist yet, so that both processes create it at once. Run
    ...    ${FRESH_ROUNDS} times, each on a new ledger and a reset emulator: the first round with ${REQUESTS} requests
    ...    (the work shared), the others with 20 (the ledger's creation raced again, at less cost). A ledger that
    ...    exists is opened by the last test's clients.
    FOR    ${round}    IN RANGE    1    ${FRESH_ROUNDS + 1}
        Reset Emulator
        ${ledger}=    New Ledger
        ${requests}=    Set Variable If    ${round} == 1    ${REQUESTS}    20
        Run Two Clients Together    fresh${round}    ${ledger}    requests=${requests}
        ...    timeout=${{ 180 if $round == 1 else $SMALL_RUN_LIMIT }}
    END

A Client Opening A Ledger That Another Process Is Creating Waits For It
    [Documentation]    Another process has started writing a fresh ledger's schema (its transaction still open) when
    ...    the client opens the file: the client must wait for that schema and answer every call. This is, made
    ...    deterministic, what happens when two processes open a new ledger at the same moment.
    ${ledger}=    New Ledger
    Begin Creating Ledger    ${ledger}
    ${barrier}=    New Barrier
    ${client}=    Start Client    late    20    ${ledger}    barrier=${barrier}    parties=1
    Wait For Barrier    ${barrier}
    # Time to open the ledger, read its schema version (0: nothing committed yet) and queue for the write lock.
    Sleep    1.5s
    Finish Creating Ledger
    Wait For Client    ${client}    timeout=${SMALL_RUN_LIMIT}
    Client Should Have Succeeded    ${client}
    Answers Should Be Complete    ${client}    late    20
    Every Request Should Have Been Created Once    late    20
    Every Ticket Should Be Collected    ${ledger}    late    20

The Second Client Finishes What A First One Killed While Polling Left
    [Documentation]    The first creates the batch and polls it (the batch's poller: a process waiting on another's
    ...    batch leaves the polling to it), and dies at its second status check; the second, started once that batch
    ...    exists, waits on it, sees its poller dead, polls it itself and answers everything; the first, run again,
    ...    finds every answer in the ledger and creates nothing. (Started together, either could create the batch,
    ...    and the first would never poll one the second created.)
    ${ledger}=    New Ledger    initialized=${True}
    ${first}=    Start Client    shared    ${REQUESTS}    ${ledger}    crashpoint=while-polling    name=doomed
    Wait Until The Emulator Holds Batches    1
    ${second}=    Start Client    shared    ${REQUESTS}    ${ledger}    name=survivor
    Wait For Client    ${first}
    Wait For Client    ${second}
    Client Should Have Been Killed    ${first}
    Client Should Have Succeeded    ${second}
    Answers Should Be Complete    ${second}    shared    ${REQUESTS}
    Every Request Should Have Been Created Once    shared    ${REQUESTS}
    Every Ticket Should Be Collected    ${ledger}    shared    ${REQUESTS}
    ${stats}=    Emulator Stats
    ${again}=    Run Client In This Process    shared    ${REQUESTS}    ${ledger}    name=doomed-again
    Client Should Have Succeeded    ${again}
    Answers Should Be The Same    ${second}    ${again}
    Emulator Call Count Should Be    batches.create    ${stats}[calls][batches.create]
    Every Request Should Have Been Created Once    shared    ${REQUESTS}


*** Keywords ***
Run Two Clients Together
    [Arguments]    ${prefix}    ${ledger}    ${requests}=${REQUESTS}    ${timeout}=180
    ${barrier}=    New Barrier
    ${first}=    Start Client    ${prefix}    ${requests}    ${ledger}    name=${prefix}-first    barrier=${barrier}
    ${second}=    Start Client    ${prefix}    ${requests}    ${ledger}    name=${prefix}-second    barrier=${barrier}
    Wait For Client    ${first}    timeout=${timeout}
    Wait For Client    ${second}    timeout=${timeout}
    Client Should Have Succeeded    ${first}
    Client Should Have Succeeded    ${second}
    Answers Should Be Complete    ${first}    ${prefix}    ${requests}
    Answers Should Be Complete    ${second}    ${prefix}    ${requests}
    Answers Should Be The Same    ${first}    ${second}
    Every Request Should Have Been Created Once    ${prefix}    ${requests}
    Every Ticket Should Be Collected    ${ledger}    ${prefix}    ${requests}

Log Failure And Stop Clients
    Run Keyword If Test Failed    Log Diagnostics
    Stop Clients
