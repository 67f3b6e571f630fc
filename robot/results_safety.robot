*** Settings ***
Test Timeout        10 minutes    # stuck, not slow: the longest take a few minutes on a loaded machine
Documentation       What a bulk run must never lose, for real: `lowtide run` against `lowtide emulator` on a loopback
...                 socket. An `--out` that is the run's input (by its path, a symbolic or a hard link) is refused
...                 before anything is sent, the input intact. A results download the emulator cuts part way, every
...                 time, leaves the unanswered items waiting on their batch (exit 1, the summary and `lowtide runs`
...                 say so); `lowtide collect` and the same command again answer every one, each request created once.
...                 A garbled result line is its item's error, its bytes kept in the raw results, the others answered.
...                 Both providers' batch APIs. No command here is killed or signalled: each runs in this process,
...                 through the console script's own `main` (`Run Lowtide In This Process`), with the environment a
...                 process of its own is given, an interpreter's start-up and the SDK's imports each saved (the
...                 commands killed and resumed in processes of their own: bulk_run.robot, crash_recovery/).

Library             OperatingSystem
Library             ResultsLibrary.py

Suite Setup         Start Emulator
Suite Teardown      Clean Up
Test Teardown       Stop Processes


*** Test Cases ***
An --out That Is The Input Is Refused Before Anything Is Sent, The Input Intact
    [Template]    Out Over The Input Is Refused
    same path
    symbolic link
    hard link

A Results Download Cut Every Time Leaves Items Waiting, Collected Later, Each Created Once
    [Template]    Cut Results Are Collected Later
    anthropic    lowtide collect
    openai       lowtide collect
    anthropic    the same command
    openai       the same command

A Garbled Result Line Is Its Item's Error, Its Bytes Kept, The Others Answered
    [Template]    A Garbled Line Fails Its Item Alone
    anthropic    not-utf8
    openai       bad-json


*** Keywords ***
Out Over The Input Is Refused
    [Arguments]    ${how}
    Reset Emulator    # each iteration of a template counts its own calls
    ${input}=    Write Prompts    3
    ${actor}=    Write Actor File
    ${before}=    Digest Of File    ${input}
    ${out}=    Set Variable If    '${how}' == 'same path'    ${input}    ${None}
    IF    '${how}' == 'symbolic link'
        ${out}=    Link File    ${input}    link.jsonl
    ELSE IF    '${how}' == 'hard link'
        ${out}=    Link File    ${input}    hard.jsonl    kind=hard
    END
    ${work}=    New Directory    ledger-
    ${result}=    Run Lowtide In This Process    run    ${input}    --actor    ${actor}
    ...    --out    ${out}    --ledger    ${work}/ledger.sqlite3    --progress    none
    Should Be Equal As Integers    ${result.rc}    2    msg=Refused as a usage error: exit 2.\n${result.stderr}
    Should Contain    ${result.stderr}    is the run's input
    Should Contain    ${result.stderr}    writing the results there would destroy it. Name another file for the results.
    Should Not Contain    ${result.stderr}    Traceback
    ${after}=    Digest Of File    ${input}
    Should Be Equal    ${before}    ${after}    msg=The input was changed.
    Emulator Should Have Seen No Calls

Cut Results Are Collected Later
    [Arguments]    ${provider}    ${collector}
    Reset Emulator    # each iteration of a template counts its own calls
    ${input}=    Write Prompts    4
    ${actor}=    Write Actor File    ${provider}
    ${work}=    New Directory    run-
    # Two tries (api_retries: 1), each cut after one line: then the run stops waiting and says so.
    Cut Results Downloads    ${provider}    after_lines=1    times=2
    @{command}=    Create List    run    ${input}    --actor    ${actor}    --run-id    cut    --out    ${work}/out.jsonl
    ...    --results-dir    ${work}/res    --ledger    ${work}/ledger.sqlite3    --progress    none
    ${first}=    Run Lowtide In This Process    @{command}
    # The API failed a call (a download broken for good): exit 3, and nothing is lost.
    Should Be Equal As Integers    ${first.rc}    3    msg=The API failed a call: exit 3.\n${first.stderr}
    Should Contain    ${first.stdout}    run cut: 4 item(s): 1 succeeded, 3 waiting
    Should Contain    ${first.stdout}    3 item(s) are in batches whose answers were not collected: run the same command again
    Should Not Contain    ${first.stdout}    failed
    Should Not Contain    ${first.stderr}    Traceback
    Results Downloads Should Be    ${provider}    2
    ${runs}=    Run Lowtide In This Process    runs    --ledger    ${work}/ledger.sqlite3
    Should Contain    ${runs.stdout}    4 item(s): 1 succeeded, 3 waiting
    ${status}=    Run Lowtide In This Process    status    cut    --ledger    ${work}/ledger.sqlite3
    Should Contain    ${status.stdout}    3 item(s) wait on batch
    IF    '${collector}' == 'lowtide collect'
        ${collect}=    Run Lowtide In This Process    collect    --ledger    ${work}/ledger.sqlite3    --api-key-env    LOWTIDE_ROBOT_KEY
        Should Be Equal As Integers    ${collect.rc}    0    msg=${collect.stderr}
        ${status}=    Run Lowtide In This Process    status    cut    --ledger    ${work}/ledger.sqlite3
        Should Contain    ${status.stdout}    run cut (actor reader): 4 item(s): 4 succeeded
        Results Downloads Should Be    ${provider}    3
    END
    ${again}=    Run Lowtide In This Process    @{command}
    Should Be Equal As Integers    ${again.rc}    0    msg=${again.stderr}
    Should Contain    ${again.stdout}    run cut: 4 item(s): 4 succeeded
    Results Downloads Should Be    ${provider}    3
    Results Should Be    ${work}/out.jsonl    succeeded    succeeded    succeeded    succeeded
    # The run reads the batch itself: its raw results then hold every line, the one kept before the cut once.
    IF    '${collector}' == 'the same command'
        Raw Results Should Hold Each Line Once    ${work}/res    cut-0    cut-1    cut-2    cut-3
    END
    Emulator Should Have Created Each Once    ${provider}    cut-0    cut-1    cut-2    cut-3

A Garbled Line Fails Its Item Alone
    [Arguments]    ${provider}    ${how}
    Reset Emulator    # each iteration of a template counts its own calls
    ${input}=    Write Prompts    3
    ${actor}=    Write Actor File    ${provider}
    ${work}=    New Directory    run-
    Garble Result Line    garbled-1    ${how}    ${work}/ledger.sqlite3
    ${result}=    Run Lowtide In This Process    run    ${input}    --actor    ${actor}    --run-id    garbled    --out    ${work}/out.jsonl
    ...    --results-dir    ${work}/res    --ledger    ${work}/ledger.sqlite3    --progress    none
    Should Be Equal As Integers    ${result.rc}    1    msg=One item failed: exit 1.\n${result.stderr}
    Should Contain    ${result.stdout}    run garbled: 3 item(s): 2 succeeded, 1 failed
    Should Contain    ${result.stdout}    BatchRequestUnreadable: Request garbled-1_
    Should Not Contain    ${result.stderr}    Traceback
    @{lines}=    Results Should Be    ${work}/out.jsonl    succeeded    failed    succeeded
    Should Be Equal    ${lines}[1][error][type]    BatchRequestUnreadable
    ${raw}=    Raw Results Should Hold Each Line Once    ${work}/res    garbled-0    garbled-1    garbled-2
    Emulator Should Have Created Each Once    ${provider}    garbled-0    garbled-1    garbled-2
