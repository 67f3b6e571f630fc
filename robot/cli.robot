*** Settings ***
Test Timeout        10 minutes    # stuck, not slow: the longest take a few minutes on a loaded machine
Documentation       The `lowtide` command from a shell: `lowtide demo` (bundled and own actors files, invalid ones),
...                 `lowtide --version`, and `lowtide emulator`, which serves the official SDK over a socket and
...                 stops cleanly on SIGTERM; the exit statuses of a setup that is wrong (2, at once) and of an
...                 API that cannot be reached (3, within seconds, nothing lost); `lowtide status` on a ledger
...                 it cannot write. The commands whose point is their status and output, not their process, run in
...                 the Robot process (`Run Lowtide`, `Run Lowtide With`: `lowtide.cli.main`, the console script's
...                 own call); `--version` runs the console script, the run the emulator goes away under, the status
...                 read by a user whom file modes stop, the emulator and `lowtide serve` are processes. README.md's
...                 first example runs `lowtide demo` as a process in a fresh install (robot/readme_examples.robot).

Library             OperatingSystem
Library             Process
Library             String
Library             LowtideLibrary.py
Library             InProcessLibrary.py

Suite Setup         Find The Lowtide Command
Suite Teardown      Clean Up


*** Variables ***
${RUN_TIMEOUT}      90s


*** Test Cases ***
The Demo Answers Every Actor Through Batches At Half Price
    [Documentation]    `lowtide demo` runs the bundled actors' calls in batch mode on the in-process emulator and
    ...    prints each answer with its batch id, then the batch cost beside the live cost and the saving.
    ${result}=    Run Lowtide    demo    --processing-seconds    0.5
    Should Be Equal As Integers    ${result.rc}    0    msg=${result.stderr}
    FOR    ${actor}    IN    planner    reviewer    summarizer
        Should Contain X Times    ${result.stdout}    [${actor}]${SPACE}    2
    END
    Should Contain X Times    ${result.stdout}    \n${SPACE * 2}answer:${SPACE}    6
    ${ids}=    Get Regexp Matches    ${result.stdout}    batch (msgbatch_01\\w+)    1
    Length Should Be    ${ids}    6
    Should Contain    ${result.stdout}    6 of 6 calls answered
    Should Contain    ${result.stdout}    at batch prices (live: $
    Should Contain    ${result.stdout}    Cost at batch prices: $
    Should Contain    ${result.stdout}    The same calls live: $
    Should Contain    ${result.stdout}    Saved $
    Demo Report Should Show Half Price    ${result.stdout}
    Should Not Contain    ${result.stderr}    Traceback

The Demo Runs The Actors Of A File Given With --config
    [Documentation]    A small TOML actors file of our own: each of its actors introduces itself through a batch.
    ${dir}=    Create Scratch Directory
    ${actors}=    Catenate    SEPARATOR=\n
    ...    [defaults]
    ...    batch_processing = "batch"
    ...    max_tokens = 120
    ...    batch = { poll_interval = 0.1, max_wait = 30 }
    ...    ${EMPTY}
    ...    [actors.scout]
    ...    model = "claude-haiku-4-5"
    ...    system_prompt = "You scout ahead and report in one line."
    ...    ${EMPTY}
    ...    [actors.critic]
    ...    model = "claude-sonnet-5-5"
    ...    temperature = 0.1
    Create File    ${dir}/crew.toml    ${actors}\n
    ${result}=    Run Lowtide    demo    --config    ${dir}/crew.toml    --processing-seconds    0.5
    Should Be Equal As Integers    ${result.rc}    0    msg=${result.stderr}
    Should Contain    ${result.stdout}    2 concurrent calls from 2 actors (crew.toml)
    Should Contain    ${result.stdout}    [scout] Introduce yourself, scout.
    Should Contain    ${result.stdout}    [critic] Introduce yourself, critic.
    Should Not Contain    ${result.stdout}    [planner]
    Should Contain X Times    ${result.stdout}    \n${SPACE * 2}answer:${SPACE}    2
    Should Contain X Times    ${result.stdout}    batch msgbatch_01    2
    Should Contain    ${result.stdout}    2 of 2 calls answered
    Demo Report Should Show Half Price    ${result.stdout}

An Invalid Actors File Is Refused With Each Bad Field Named, A Misplaced Secret Never Echoed
    [Documentation]    Bad values fail at load time: a non-zero exit, a message naming the file, the actor and each
    ...    bad field, and no traceback; nothing was run. An `api_key` written into the file is an unknown field: the
    ...    error names it, not its value (one file, one process: the loader reports every bad field at once).
    ${dir}=    Create Scratch Directory
    Create File    ${dir}/broken.yaml
    ...    name: broken\nmodel: claude-haiku-4-5\nbatch_processing: sometimes\ntemperature: 3\napi_key: sk-ant-robot-secret-4242\n
    ${result}=    Run Lowtide    demo    --config    ${dir}/broken.yaml
    Should Be Equal As Integers    ${result.rc}    2
    Should Be Empty    ${result.stdout}
    Should Start With    ${result.stderr}    lowtide: Invalid configuration for actor 'broken' in ${dir}/broken.yaml
    Should Match Regexp    ${result.stderr}    (?m)^\\s+batch_processing: .*'sometimes'
    Should Match Regexp    ${result.stderr}    (?m)^\\s+temperature: .*3
    Should Match Regexp    ${result.stderr}    (?m)^\\s+api_key: not a known setting
    Should Not Contain    ${result.stderr}    sk-ant-robot-secret-4242
    Should Not Contain    ${result.stderr}    Traceback

A Missing Actors File Is Refused Without A Traceback
    ${dir}=    Create Scratch Directory
    ${result}=    Run Lowtide    demo    --config    ${dir}/nowhere.yaml
    Should Be Equal As Integers    ${result.rc}    2
    Should Contain    ${result.stderr}    Cannot read configuration file ${dir}/nowhere.yaml
    Should Not Contain    ${result.stderr}    Traceback

The Version Is Printed
    ${version}=    Evaluate    lowtide.__version__    modules=lowtide
    ${result}=    Run Process    @{LOWTIDE}    --version    timeout=${RUN_TIMEOUT}    on_timeout=kill
    Should Be Equal As Integers    ${result.rc}    0
    Should Be Equal    ${result.stdout}    lowtide ${version}

A Malformed Base URL Or A Key Holding A Newline Exits 2 At Once, Naming It, Never The Key
    [Documentation]    A configuration error is said before anything is recorded or sent: exit 2, one line naming
    ...    `base_url` or the key's variable, and nothing of the key itself.
    ${dir}=    Write A Batch Actor And Two Prompts
    ${result}=    Run Lowtide With    ${dir}    htp://127.0.0.1:1    sk-ant-robot-key
    Should Be Equal As Integers    ${result.rc}    2    msg=${result.stderr}
    Should Be Equal    ${result.stderr}
    ...    lowtide: base_url (from $ANTHROPIC_BASE_URL) 'htp://127.0.0.1:1' is not an http:// or https:// URL (its scheme is 'htp'); write it as https://host[:port][/path].
    ${result}=    Run Lowtide With    ${dir}    http://127.0.0.1:1    sk-ant-robot-key\n
    Should Be Equal As Integers    ${result.rc}    2    msg=${result.stderr}
    Should Start With    ${result.stderr}    lowtide: The API key (from $ANTHROPIC_API_KEY) holds a newline at its end;
    Should Not Contain    ${result.stderr}    sk-ant-robot-key
    File Should Not Exist    ${dir}/results.jsonl

An API Where Nothing Listens Exits 3 Within Seconds, Naming Host And Port
    [Documentation]    Nothing listens on 127.0.0.1:1: the create is tried four times in 3.5 s (not for 35 s), then
    ...    the run sends nothing more and exits 3, saying where it could not connect and how to resume.
    ${dir}=    Write A Batch Actor And Two Prompts
    ${result}=    Run Lowtide With    ${dir}    http://127.0.0.1:1    sk-ant-robot-key
    Should Be Equal As Integers    ${result.rc}    3    msg=${result.stderr}
    Should Contain    ${result.stdout}    2 item(s): APIUnreachableError: could not connect to 127.0.0.1:1 (connection refused)
    Should Contain    ${result.stderr}
    ...    lowtide: the API refused or failed a call: could not connect to 127.0.0.1:1 (connection refused). Nothing is lost:
    Should Contain    ${result.stderr}    run the same command again to resume once the cause is fixed.
    Should Not Contain    ${result.stderr}    Traceback

A Batch Whose API Goes Away Is Kept Waiting: Exit 3, Then The Same Command Finishes It
    [Documentation]    The batch is created, then the emulator stops: the run's status checks cannot connect, so
    ...    it exits 3 saying how to resume; its requests stay waiting on their batch in the ledger, `lowtide
    ...    collect` exits 3 too, and nothing is failed. With the API back (the same emulator state, on the same
    ...    port), the same command finishes the run, paying for nothing twice.
    ${dir}=    Write A Batch Actor And Two Prompts
    Stop Emulator    # the suite's, if a test before started it: this test's keeps its state in a file
    ${url}=    Start Emulator    20    0.5    120    --state-file    ${dir}/emulator.json
    ${port}=    Fetch From Right    ${url}    :
    ${run}=    Start Process    @{LOWTIDE}    run    prompts.jsonl    --actor    actor.yaml    --out    results.jsonl
    ...    --run-id    tides    --ledger    ${dir}/ledger.sqlite3    --progress    none    cwd=${dir}    stdout=${dir}/run.out
    ...    stderr=${dir}/run.err    env:ANTHROPIC_BASE_URL=${url}    env:ANTHROPIC_API_KEY=sk-ant-robot-key
    Wait Until Keyword Succeeds    60s    0.2s    The Emulator Holds A Batch
    Stop Emulator
    ${result}=    Wait For Process    ${run}    timeout=${RUN_TIMEOUT}    on_timeout=kill
    Log    rc ${result.rc}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}
    Should Be Equal As Integers    ${result.rc}    3    msg=${result.stderr}
    Should Contain    ${result.stderr}    could not connect to 127.0.0.1:${port} (connection refused)
    Should Contain    ${result.stderr}    batches already created keep running at the API
    ${status}=    Run Lowtide    status    --ledger    ${dir}/ledger.sqlite3
    Should Be Equal As Integers    ${status.rc}    0    msg=${status.stderr}
    Should Contain    ${status.stdout}    actor reader: 2 request(s) (waiting-on-batch 2)
    ${collect}=    Run Lowtide In This Process    collect    --ledger    ${dir}/ledger.sqlite3
    ...    env:ANTHROPIC_API_KEY=sk-ant-robot-key
    Should Be Equal As Integers    ${collect.rc}    3    msg=${collect.stderr}
    Should Contain    ${collect.stderr}    could not connect to 127.0.0.1:${port} (connection refused)
    Should Contain    ${collect.stderr}    stay as they were in the ledger
    ${cancel}=    Run Lowtide In This Process    cancel    tides-0    --ledger    ${dir}/ledger.sqlite3
    ...    env:ANTHROPIC_API_KEY=sk-ant-robot-key
    Should Be Equal As Integers    ${cancel.rc}    3    msg=${cancel.stderr}
    Should Contain    ${cancel.stderr}
    ...    lowtide: could not cancel tides-0: could not connect to 127.0.0.1:${port} (connection refused). Nothing was changed
    Start Emulator    20    0.5    120    --port    ${port}    --state-file    ${dir}/emulator.json
    ${again}=    Run Lowtide With    ${dir}    ${url}    sk-ant-robot-key
    Should Be Equal As Integers    ${again.rc}    0    msg=${again.stderr}
    Should Contain    ${again.stdout}    2 item(s): 2 succeeded; 1 batch(es)
    ${stats}=    Emulator Stats
    Should Be Equal As Integers    ${stats}[batches]    1
    [Teardown]    Stop Emulator

Lowtide Serve Answers An Upstream Where Nothing Listens In The API's Error Shape
    [Documentation]    A client of `lowtide serve` whose upstream API cannot be reached gets, within seconds, a 502
    ...    in the Messages API's error shape naming where the server could not connect.
    ${dir}=    Write A Batch Actor And Two Prompts
    ${status}    ${body}=    Ask Lowtide Serve In Front Of    ${dir}/actor.yaml    http://127.0.0.1:1
    Should Be Equal As Integers    ${status}    502
    Should Be Equal    ${body}[type]    error
    Should Be Equal    ${body}[error][type]    api_error
    Should Be Equal    ${body}[error][message]    could not connect to 127.0.0.1:1 (connection refused)

Lowtide Status Reads A Ledger In A Folder It Cannot Write, And Writes Nothing There
    [Documentation]    A ledger on a read-only file in a read-only folder: `lowtide status` and `lowtide runs`, run by
    ...    a user whom those modes stop (root without its capabilities, when the suite runs as root), read it through
    ...    SQLite's read-only modes; the file keeps its bytes and no `-wal` or `-shm` file appears beside it.
    ${url}=    Suite Emulator
    ${dir}=    Create Scratch Directory
    Create File    ${dir}/actor.yaml
    ...    name: reader\nmodel: claude-sonnet-5-5\nbatch_processing: batch\nmax_tokens: 64\nbatch: {poll_interval: 0.2}\n
    Create File    ${dir}/prompts.jsonl    {"prompt": "Is the harbour open?"}\n{"prompt": "When is high tide?"}\n
    ${made}=    Run Lowtide With    ${dir}    ${url}    sk-ant-robot-key
    Should Be Equal As Integers    ${made.rc}    0    msg=${made.stderr}
    Run Process    chmod    0444    ${dir}/ledger.sqlite3
    Run Process    chmod    0555    ${dir}
    A User Whom File Modes Stop Cannot Write In    ${dir}
    ${before}=    Evaluate    hashlib.sha256(pathlib.Path($dir, "ledger.sqlite3").read_bytes()).hexdigest()
    ...    modules=hashlib,pathlib
    ${status}=    Run Lowtide As A User Whom File Modes Stop    status    --ledger    ${dir}/ledger.sqlite3
    Should Be Equal As Integers    ${status.returncode}    0    msg=${status.stderr}
    Should Contain    ${status.stdout}    actor reader: 2 request(s) (collected 2)
    ${runs}=    Run Lowtide As A User Whom File Modes Stop    runs    --ledger    ${dir}/ledger.sqlite3
    Should Be Equal As Integers    ${runs.returncode}    0    msg=${runs.stderr}
    Should Contain    ${runs.stdout}    1 run(s) shown
    ${after}=    Evaluate    hashlib.sha256(pathlib.Path($dir, "ledger.sqlite3").read_bytes()).hexdigest()
    ...    modules=hashlib,pathlib
    Should Be Equal    ${after}    ${before}
    @{files}=    List Directory    ${dir}
    Should Be Equal    ${files}    ${{["actor.yaml", "ledger.sqlite3", "prompts.jsonl", "results.jsonl"]}}
    [Teardown]    Run Process    chmod    0755    ${dir}

A Program Using Only The Official SDK Gets Its Answer From The Emulator
    [Documentation]    Nothing but `ANTHROPIC_BASE_URL` and `ANTHROPIC_API_KEY` in the environment points an
    ...    unmodified SDK program at `lowtide emulator`.
    ${url}=    Suite Emulator
    Reset Emulator
    ${python}=    Python Executable
    ${result}=    Run Process    ${python}    ${CURDIR}/resources/sdk_hello.py
    ...    env:ANTHROPIC_BASE_URL=${url}    env:ANTHROPIC_API_KEY=anything    timeout=${RUN_TIMEOUT}    on_timeout=kill
    Log    ${result.stderr}
    Should Be Equal As Integers    ${result.rc}    0    msg=${result.stderr}
    @{lines}=    Split To Lines    ${result.stdout}
    Should Start With    ${lines}[0]    msg_
    Should Be Equal    ${lines}[1]    end_turn
    Should Match Regexp    ${lines}[2]    ^[1-9][0-9]* [1-9][0-9]*$
    Should Not Be Empty    ${lines}[3]
    ${calls}=    Emulator Call Count    messages.create
    Should Be Equal As Integers    ${calls}    1

The Emulator Serves On A Free Port And Stops Cleanly On SIGTERM
    [Documentation]    `lowtide emulator --port 0` prints the port it bound, answers, and exits on SIGTERM with code
    ...    0 (a clean shutdown) or -15 (when coverage's SIGTERM handler re-raises the signal after saving its data).
    ...    The suite's emulator, which the tests before talked to (last in the file: it stops it).
    ${url}=    Suite Emulator
    Should Match Regexp    ${url}    ^http://127\\.0\\.0\\.1:[1-9][0-9]*$
    ${stats}=    Emulator Stats
    Should Be True    $stats["batches"] >= 0    msg=the emulator's counters answered without a batch count: ${stats}
    ${rc}=    Stop Emulator
    Should Be True    ${rc} in (0, -15)    msg=Exit code ${rc} after SIGTERM
    Log    Exit code after SIGTERM: ${rc}    console=True
    Port Should Be Closed    ${url}
    ${output}=    Emulator Output
    Should Not Contain    ${output}    Traceback
    [Teardown]    Stop Emulator

*** Keywords ***
Find The Lowtide Command
    @{command}=    Lowtide Command
    Set Suite Variable    @{LOWTIDE}    @{command}

Run Lowtide
    [Documentation]    The `lowtide` command with `args`, in this process's environment, run in this process
    ...    (`InProcessLibrary`): its status and outputs are the point, not its process. Logged and returned.
    [Arguments]    @{args}
    ${result}=    Run Lowtide In This Process    @{args}
    RETURN    ${result}

Write A Batch Actor And Two Prompts
    [Documentation]    A scratch folder holding `actor.yaml` (batch mode, quick polls) and `prompts.jsonl` (two prompts).
    ${dir}=    Create Scratch Directory
    Create File    ${dir}/actor.yaml
    ...    name: reader\nmodel: claude-sonnet-5-5\nbatch_processing: batch\nmax_tokens: 64\nbatch: {poll_interval: 0.2}\n
    Create File    ${dir}/prompts.jsonl    {"prompt": "Is the harbour open?"}\n{"prompt": "When is high tide?"}\n
    RETURN    ${dir}

Run Lowtide With
    [Documentation]    `lowtide run` of the folder's prompts, with this base URL and key, its ledger in the folder,
    ...    in this process (`InProcessLibrary`).
    [Arguments]    ${dir}    ${base_url}    ${key}
    ${result}=    Run Lowtide In This Process    run    prompts.jsonl    --actor    actor.yaml    --out    results.jsonl
    ...    --run-id    tides    --ledger    ${dir}/ledger.sqlite3    --progress    none    cwd=${dir}
    ...    env:ANTHROPIC_BASE_URL=${base_url}    env:ANTHROPIC_API_KEY=${key}
    RETURN    ${result}

The Emulator Holds A Batch
    ${stats}=    Emulator Stats
    Should Be True    ${stats}[batches] >= 1
