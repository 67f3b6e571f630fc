*** Settings ***
Documentation       The `lowtide` command from a shell: `lowtide demo` (bundled and own actors files, invalid ones),
...                 `lowtide --version`, and `lowtide emulator`, which serves the official SDK over a socket and
...                 stops cleanly on SIGTERM.

Library             OperatingSystem
Library             Process
Library             String
Library             LowtideLibrary.py

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

An Invalid Actors File Is Refused With The Field Named
    [Documentation]    Bad values fail at load time: a non-zero exit, a message naming the file, the actor and each
    ...    bad field, and no traceback; nothing was run.
    ${dir}=    Create Scratch Directory
    Create File    ${dir}/broken.yaml
    ...    name: broken\nmodel: claude-haiku-4-5\nbatch_processing: sometimes\ntemperature: 3\n
    ${result}=    Run Lowtide    demo    --config    ${dir}/broken.yaml
    Should Be Equal As Integers    ${result.rc}    2
    Should Be Empty    ${result.stdout}
    Should Start With    ${result.stderr}    lowtide: Invalid configuration for actor 'broken' in ${dir}/broken.yaml
    Should Match Regexp    ${result.stderr}    (?m)^\\s+batch_processing: .*'sometimes'
    Should Match Regexp    ${result.stderr}    (?m)^\\s+temperature: .*3
    Should Not Contain    ${result.stderr}    Traceback

A Misplaced Secret In An Actors File Is Named But Never Echoed
    [Documentation]    An `api_key` written into the file is an unknown field: the error names it, not its value.
    ${dir}=    Create Scratch Directory
    Create File    ${dir}/leaky.yaml    name: leaky\nmodel: claude-haiku-4-5\napi_key: sk-ant-robot-secret-4242\n
    ${result}=    Run Lowtide    demo    --config    ${dir}/leaky.yaml
    Should Be Equal As Integers    ${result.rc}    2
    Should Contain    ${result.stderr}    api_key
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
    ${result}=    Run Lowtide    --version
    Should Be Equal As Integers    ${result.rc}    0
    Should Be Equal    ${result.stdout}    lowtide ${version}

The Emulator Serves On A Free Port And Stops Cleanly On SIGTERM
    [Documentation]    `lowtide emulator --port 0` prints the port it bound, answers, and exits on SIGTERM with code
    ...    0 (a clean shutdown) or -15 (when coverage's SIGTERM handler re-raises the signal after saving its data).
    ${url}=    Start Emulator    processing_seconds=0.5
    Should Match Regexp    ${url}    ^http://127\\.0\\.0\\.1:[1-9][0-9]*$
    ${stats}=    Emulator Stats
    Should Be Equal As Integers    ${stats}[batches]    0
    ${rc}=    Stop Emulator
    Should Be True    ${rc} in (0, -15)    msg=Exit code ${rc} after SIGTERM
    Log    Exit code after SIGTERM: ${rc}    console=True
    Port Should Be Closed    ${url}
    ${output}=    Emulator Output
    Should Not Contain    ${output}    Traceback
    [Teardown]    Stop Emulator

A Second Emulator On A Busy Port Says So In One Line
    [Documentation]    `lowtide emulator --port P` where P is taken exits with code 2 and one clear line on stderr,
    ...    not a traceback.
    ${url}=    Start Emulator
    ${port}=    Fetch From Right    ${url}    :
    ${result}=    Run Lowtide    emulator    --host    127.0.0.1    --port    ${port}
    Should Be Equal As Integers    ${result.rc}    2
    Should Contain    ${result.stderr}    cannot listen on 127.0.0.1:${port}
    Should Not Contain    ${result.stderr}    Traceback
    [Teardown]    Stop Emulator

A Program Using Only The Official SDK Gets Its Answer From The Emulator
    [Documentation]    Nothing but `ANTHROPIC_BASE_URL` and `ANTHROPIC_API_KEY` in the environment points an
    ...    unmodified SDK program at `lowtide emulator`.
    ${url}=    Start Emulator
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
    [Teardown]    Stop Emulator


*** Keywords ***
Find The Lowtide Command
    @{command}=    Lowtide Command
    Set Suite Variable    @{LOWTIDE}    @{command}

Run Lowtide
    [Documentation]    Run the `lowtide` command with `args`, in this process's environment; log and return the result.
    [Arguments]    @{args}
    ${result}=    Run Process    @{LOWTIDE}    @{args}    timeout=${RUN_TIMEOUT}    on_timeout=kill
    Log    rc ${result.rc}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}
    RETURN    ${result}
