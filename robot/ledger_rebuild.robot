*** Settings ***
Test Timeout        10 minutes    # stuck, not slow: the longest take a few minutes on a loaded machine
Documentation       A lost ledger rebuilt as a user would: a program's batch-mode calls (`resources/crash_client.py`)
...                 through `lowtide emulator` on a loopback socket, some answered, some in a batch still running
...                 when the program is killed; the ledger file deleted with its -wal and -shm; `lowtide ledger
...                 rebuild` run, first to list the identities the API's batches carry, then with the one listed; and
...                 the same program run again with the same keys, and more. Every request is answered, and the
...                 emulator's own counters show each key created in exactly one batch. The killed program is a process
...                 (it dies of SIGKILL); the program nobody kills, the rebuild and the rerun run in the Robot process
...                 (`lowtide.cli.main`, `crash_client.run_here`): their output and the ledger they leave are the point,
...                 and a process each cost an interpreter's start and the SDKs' imports (3-4 s of CPU under coverage).
...
...                 OpenAI's API shows a running batch's requests in its input file: the rebuild records the batch as
...                 running, and the rerun collects it. Anthropic's shows them only in its results: the rebuild, told to
...                 `--wait`, waits for the batch to end and records its answers.

Resource            resources/crash.resource
Library             OperatingSystem
Library             String
Library             RebuildLibrary.py

Suite Teardown      Clean Up
Test Teardown       Stop The Test's Clients


*** Variables ***
# How long the killed program's batch takes: long enough that it usually still runs when the rebuild reads it, on a
# loaded machine; the checks hold either way (a batch that ended first is recorded answered). The batches before and
# after it end at once: the test waits on that one batch alone (it waited on three, 230 s of its suite's 17 s of CPU).
${PROCESSING}       40


*** Test Cases ***
A Ledger Deleted Half-Way Through A Run On OpenAI Is Rebuilt, And The Run Finishes Paying Nothing Twice
    Use Provider    openai
    A Lost Ledger Is Rebuilt And The Run Finishes    openai    listed=8

A Ledger Deleted While An Anthropic Batch Runs Is Rebuilt Once The Batch Ends, And The Run Finishes
    Use Provider    anthropic
    # Listed: the ended batch's 4 requests; the running one's only once it has ended.
    A Lost Ledger Is Rebuilt And The Run Finishes    anthropic    --wait    listed=4 8


*** Keywords ***
A Lost Ledger Is Rebuilt And The Run Finishes
    [Arguments]    ${provider}    @{rebuild options}    ${listed}=8
    ${base_url}=    Fresh Emulator    processing_seconds=0
    ${ledger}=    New Ledger
    ${answered}=    Run Client In This Process    a    4    ${ledger}
    Client Should Have Succeeded    ${answered}
    Emulator Batches Take    ${PROCESSING}
    ${killed}=    Run Client    b    4    ${ledger}    crashpoint=while-polling
    Client Should Have Been Killed    ${killed}
    Delete The Ledger's Files    ${ledger}
    ${actors}=    Write The Crash Clients' Actor File    ${base_url}    ${provider}
    ${listing}=    Run Lowtide Ledger Rebuild    --ledger    ${ledger}    --actors    ${actors}
    Should Be Equal As Integers    ${listing}    0
    Rebuild Output Should Contain    Nothing was written. Choose the lost ledger's identity
    File Should Not Exist    ${ledger}
    @{counts}=    Split String    ${listed}
    ${identity}=    The Only Identity Listed    @{counts}
    ${rebuilt}=    Run Lowtide Ledger Rebuild    --ledger    ${ledger}    --actors    ${actors}
    ...    --identity    ${identity}    @{rebuild options}
    Should Be Equal As Integers    ${rebuilt}    0
    Rebuild Output Should Contain    Recorded 2 batch(es), 8 request(s)
    Rebuild Should Have Printed No Traceback
    # The same programs run again, as one process (the keys of both): a-1 .. a-4 answered from the rebuilt ledger;
    # b-1 .. b-4 were in the killed program's batch; b-5 and b-6 were never sent.
    Emulator Batches Take    0
    ${again}=    Run Client In This Process    b    6    ${ledger}    shared_prefix=a    shared=4
    Client Should Have Succeeded    ${again}
    Answers Should Be Complete    ${again}    b    6    a    4
    Every Request Should Have Been Created Once    a    4    b    6
    Every Result Should Be Stored Once    ${ledger}
