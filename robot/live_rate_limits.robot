*** Settings ***
Test Timeout        10 minutes    # stuck, not slow: the longest take a few minutes on a loaded machine
Documentation       Live mode against `lowtide emulator` enforcing rate limits over a real socket, on the real clock:
...                 a program making many live calls at once through one actor learns the key's limits from the
...                 API's headers and stays under them, and when another program on the same key has used the
...                 budget up, the 429s it meets pause its calls and are absorbed: every call is answered, none fails.
Library             Process
Library             Collections
Library             LowtideLibrary.py
Library             InProcessLibrary.py
Library             PostgresLibrary.py
Suite Teardown      Run Keywords    Clean Up    AND    Stop PostgreSQL


*** Variables ***
${CLIENT}       ${CURDIR}/live_client.py


*** Test Cases ***
Many Live Calls Stay Under Limits Learned From The Headers
    [Documentation]    150 calls at once against 120 requests a minute, nothing configured: the first answers'
    ...    headers tell the limit; the calls over the first minute's budget wait for it to refill (about 15 s),
    ...    and the server never has to answer 429.
    ${url}=    Start Emulator    1.0    0.5    120.0    --rpm    120    --latency    0.2
    ${summary}=    Run Live Client    ${url}    150
    Should Be Equal As Integers    ${summary}[answered]    150
    Should Be Empty    ${summary}[failed]
    Should Be True    ${summary}[seconds] >= 10    msg=The refill took no time: ${summary}
    ${stats}=    Emulator Stats
    Should Be Equal As Integers    ${stats}[rate_limited]    0
    [Teardown]    Stop Emulator

The 429s Of A Key Another Program Used Up Pause The Calls, And Every Call Is Answered
    [Documentation]    Another program spends the whole minute's budget first, and goes on spending what the key
    ...    earns back until the actor has met a 429; the actor's first calls meet 429s (it could not know), its quota
    ...    pauses for retry-after and starts again slowly, and all 30 are answered.
    ${url}=    Start Emulator    1.0    0.5    120.0    --rpm    120    --latency    0.1
    ${summary}=    Run Live Client    ${url}    30    --use-up    120
    Should Be Equal As Integers    ${summary}[answered]    30
    Should Be Empty    ${summary}[failed]
    Should Be True    ${summary}[pauses] >= 1    msg=The actor met no 429: ${summary}
    ${stats}=    Emulator Stats
    Should Be True    ${stats}[rate_limited] >= 1    msg=No 429 was met: ${stats}
    [Teardown]    Stop Emulator


Two Programs On One Ledger Share One Quota, And The Server Never Answers 429
    [Documentation]    Two processes, each making 75 live calls at once through an actor on the same key and the
    ...    same ledger, against 120 requests a minute: together 150, so 30 must wait for the refill. The quota
    ...    they share through the ledger (requests taken, limits learned from the headers) keeps them both under
    ...    the limit: every call answered, and not one 429. (The same two with `--no-share`, counting alone, met
    ...    36 429s when tried by hand; `features/shared_quota.feature` shows the difference on a virtual clock.)
    ${url}=    Start Emulator    1.0    0.5    120.0    --rpm    120    --latency    0.2
    ${dir}=    Create Scratch Directory
    ${python}=    Python Executable
    ${first}=    Start Process    ${python}    ${CLIENT}    ${url}    75    --ledger    ${dir}/shared.sqlite3
    ...    --prefix    First    stdout=${dir}/first.json    stderr=${dir}/first.err
    ${second}=    Start Process    ${python}    ${CLIENT}    ${url}    75    --ledger    ${dir}/shared.sqlite3
    ...    --prefix    Second    stdout=${dir}/second.json    stderr=${dir}/second.err
    FOR    ${process}    IN    ${first}    ${second}
        ${result}=    Wait For Process    ${process}    timeout=180s    on_timeout=kill
        Log    ${result.stderr}
        Should Be Equal As Integers    ${result.rc}    0    msg=${result.stderr}
        ${summary}=    Evaluate    json.loads($result.stdout.strip().splitlines()[-1])    modules=json
        Log    ${summary}    console=True
        Should Be Equal As Integers    ${summary}[answered]    75
        Should Be Empty    ${summary}[failed]
    END
    ${stats}=    Emulator Stats
    Should Be Equal As Integers    ${stats}[rate_limited]    0    msg=The server answered 429: ${stats}
    [Teardown]    Stop Emulator

Three Hosts On One PostgreSQL Ledger Share One Quota, And The Server Never Answers 429
    [Documentation]    Three processes, each standing for a host of its own (its own LOWTIDE_HOST_ID), each making 50
    ...    live calls at once through an actor whose ledger is one PostgreSQL database, on the same key, against 120
    ...    requests a minute: together 150, so 30 must wait for the refill. The quota they share through the
    ...    database keeps them all under the limit: every call answered, not one 429, one scope in the database,
    ...    and the database's password in no output of theirs.
    [Tags]    postgres
    ${url}=    Start Emulator    1.0    0.5    120.0    --rpm    120    --latency    0.2
    ${ledger}=    Create PostgreSQL Database
    ${password}=    PostgreSQL Password
    ${dir}=    Create Scratch Directory
    ${python}=    Python Executable
    @{processes}=    Create List
    FOR    ${host}    IN    host-a    host-b    host-c
        ${process}=    Start Process    ${python}    ${CLIENT}    ${url}    50    --ledger    ${ledger}
        ...    --host-id    ${host}    --prefix    ${host}    stdout=${dir}/${host}.json    stderr=${dir}/${host}.err
        Append To List    ${processes}    ${process}
    END
    FOR    ${process}    IN    @{processes}
        ${result}=    Wait For Process    ${process}    timeout=180s    on_timeout=kill
        Log    ${result.stderr}
        Should Be Equal As Integers    ${result.rc}    0    msg=${result.stderr}
        ${summary}=    Evaluate    json.loads($result.stdout.strip().splitlines()[-1])    modules=json
        Log    ${summary}    console=True
        Should Be Equal As Integers    ${summary}[answered]    50
        Should Be Empty    ${summary}[failed]
        Should Not Contain    ${result.stdout}${result.stderr}    ${password}
    END
    ${stats}=    Emulator Stats
    Should Be Equal As Integers    ${stats}[rate_limited]    0    msg=The server answered 429: ${stats}
    ${database}=    Evaluate    $ledger.rsplit('/', 1)[1]
    ${scopes}=    PostgreSQL Query    ${database}    SELECT count(*) FROM live_quotas
    Should Be Equal As Integers    ${scopes}    1
    ${scope}=    PostgreSQL Query    ${database}    SELECT scope || state FROM live_quotas
    Should Not Contain    ${scope}    robot-live-key
    [Teardown]    Stop Emulator


*** Keywords ***
Run Live Client
    [Documentation]    One program's live calls (`live_client.py`), run in this process (`InProcessLibrary`): the calls
    ...    go over the socket to the emulator either way; a process of its own cost an interpreter's start and the SDK's
    ...    imports. The tests of two and three programs at once keep a process each.
    [Arguments]    ${url}    @{args}
    ${summary}=    Run Live Client In This Process    ${url}    @{args}
    Log    ${summary}    console=True
    RETURN    ${summary}
