*** Settings ***
Test Timeout        10 minutes    # stuck, not slow: the longest take a few minutes on a loaded machine
Documentation       A live bulk run through the command line (`lowtide run --mode live`) against a `lowtide emulator`
...                 process enforcing rate limits and latency over a real socket: 2,000 items, the run stopped
...                 midway and started again with the same command. It ends with every item answered, in order, none
...                 with an error (no 429 reaching the results). Stopped by SIGTERM (or Ctrl-C), the run lets its
...                 calls in flight finish and stores their answers: the emulator answered every item exactly once.
...                 SIGKILLed, nothing was paid twice but what the killed process had been answered and never stored.
Library             LiveBulkLibrary.py
Suite Teardown      Clean Up


*** Test Cases ***
A 2,000-Item Live Run Killed Midway And Resumed Answers Every Item Once
    [Documentation]    1,500 requests a minute (the first minute's budget spent in a burst, then 25 a second),
    ...    input tokens limited alike, each answer taking 0.2 s, 32 calls at most in flight; the limits are learned
    ...    from the headers. Killed after 800 stored answers, resumed: the second process calls only the rest.
    Start Rate Limited Emulator    --rpm    1500    --input-tpm    40000    --latency    0.2
    ${prompts}=    Write Prompts    2000
    ${actor}=    Write Live Actor File    32
    ${ledger}=    New Path    ledger.sqlite3
    ${out}=    New Path    out.jsonl
    @{run}=    Create List    run    ${prompts}    --actor    ${actor}    --mode    live    --run-id    lb
    ...    --out    ${out}    --progress    plain    --progress-interval    5    --ledger    ${ledger}
    ${first}=    Start Lowtide    @{run}
    ${killed}=    Kill Lowtide After Answers    ${first}    ${ledger}    800
    Should Be True    ${killed}[stored] < 2000    msg=Not midway: ${killed}
    ${second}=    Start Lowtide    @{run}
    ${rc}=    Wait For Lowtide    ${second}    timeout=240
    Should Be Equal As Integers    ${rc}    0
    Results Should Hold Every Item Answered    ${out}    2000
    Every Item Should Have Been Answered Once    2000

A 2,000-Item Live Run Stopped Midway By SIGTERM And Resumed Pays For Every Item Exactly Once
    [Documentation]    The same run and limits, stopped by SIGTERM after 800 stored answers: it stops starting
    ...    calls, lets the ones in flight finish, stores their answers and exits 143; the same command again calls
    ...    only the rest. The emulator counts one answer per item: nothing was paid for twice.
    Start Rate Limited Emulator    --rpm    1500    --input-tpm    40000    --latency    0.2
    ${prompts}=    Write Prompts    2000
    ${actor}=    Write Live Actor File    32
    ${ledger}=    New Path    ledger-term.sqlite3
    ${out}=    New Path    out-term.jsonl
    @{run}=    Create List    run    ${prompts}    --actor    ${actor}    --mode    live    --run-id    lt
    ...    --out    ${out}    --progress    plain    --progress-interval    5    --ledger    ${ledger}
    ${first}=    Start Lowtide    @{run}
    ${stopped}=    Stop Lowtide After Answers    ${first}    ${ledger}    800    SIGTERM
    Should Be True    ${stopped}[stored] < 2000    msg=Not midway: ${stopped}
    ${second}=    Start Lowtide    @{run}
    ${rc}=    Wait For Lowtide    ${second}    timeout=240
    Should Be Equal As Integers    ${rc}    0
    Results Should Hold Every Item Answered    ${out}    2000
    Every Item Should Have Been Answered Exactly Once    2000
