*** Settings ***
Test Timeout        10 minutes    # stuck, not slow: the longest take a few minutes on a loaded machine
Documentation       `lowtide run` over a CSV of hundreds of rows in ten batches, for real: the command in its own
...                 process against `lowtide emulator` on a loopback socket, killed with SIGKILL midway, started
...                 again (it resumes: nothing is created twice), then `lowtide retry` sends the failed and expired
...                 items again, and `lowtide status` reports the run from the ledger; the summaries count the
...                 batches the run really used, and the final progress line is printed once. Also: a dry run sends
...                 nothing, a `--deadline` no batch is expected to meet goes live (its dry run saying so), and a template naming a column the CSV lacks is refused before anything is sent; an actor
...                 of each other provider runs the same command through its own batch API (three batches each: the
...                 API's shape is the point, not the count).
...
...                 The runs killed, signalled or resumed after a kill are processes of their own; every other command
...                 (the reference run never stopped, `retry`, `status`, the dry run, the refused template, each other
...                 provider's run, the run that finishes the signalled ones) runs in this process through the console
...                 script's own `main` (`Run Lowtide In This Process`: the environment a process is given, its output
...                 kept in files for the key's check, its ledgers closed after as at a process's exit), which saves an
...                 interpreter's start-up and lowtide's and the SDK's imports each, 2-5 s of CPU under coverage. That
...                 an ordinary exit closes the ledger is ledger.feature's "exits without closing anything" scenario.
...
...                 Some rows carry `[[emulator:errored]]` (every attempt of them fails); some first attempts are
...                 armed to fail (`overloaded_error`) or expire through the emulator's `/_emulator/outcomes` route,
...                 by custom id (`<run id>-<index>`), so that their retry (`<run id>-<index>-a2`) succeeds.

Library             OperatingSystem
Library             BulkLibrary.py

Suite Setup         Start Emulator    processing_seconds=${PROCESSING}
Suite Teardown      Clean Up
Test Setup          Reset Emulator
Test Teardown       Stop Processes


*** Variables ***
${PROCESSING}       2
# The killed run's leases must not be waited for: the actor's lease is made an hour (LEASE), far beyond any slowness,
# so that a run waiting for it is stuck, not slow. The resumed run itself needs about 5 s of CPU (importing lowtide
# and the Anthropic SDK 2-3 s of it), and at a load of 12-17 on two cores it waits for a core 10-15 times as long as
# it computes: 100 s of wall clock were passed that way once, with no lease waited for.
${LEASE}            3600
${RESUME_TIMEOUT}   300
# The kill-and-resume run's rows span ten batches, three out at once, so that the kill lands with batches settled,
# out and unsent; the count is not the point (the engine's scale is benchmarks/batch_vs_sdk.py's and
# features/emulator.feature's 100,000 requests). 5,000 rows of 500 took 184 s of CPU for the suite under coverage.
${RUN}              bulk
${ROWS}             ${400}
${PER_BATCH}        40
${BATCHES}          ${10}
${TEMPLATE}         Review {id}: {review}
@{MARKED}           42    123    271    399
@{FLAKY}            7    250    321
@{EXPIRING}         49    301    398
# Each provider's run: three batches of its API's shape (Bedrock's jobs hold at least 100 records: 100 a batch).
${SMALL}            ${120}
${SMALL_BATCH}      50
# `lowtide retry` sends every failed and expired item again: the marked rows too, which fail again.
@{RETRIED}          @{MARKED}    @{FLAKY}    @{EXPIRING}


*** Test Cases ***
A Run Killed Midway Resumes, Writes What A Run Never Stopped Writes, Pays Once, And Retry Sends Only The Failed Again
    [Documentation]    The same rows run twice: once never stopped, and once killed with SIGKILL once a batch's
    ...    results are stored, while the next group of requests is claimed in the ledger but not yet in a batch,
    ...    with other batches out and more rows unsent (it dies there itself, `LOWTIDE_CRASHPOINT=before-intent#4`:
    ...    the fourth group, sent once one of the three parallel batches has settled). Run again, it takes the dead run's claimed requests over at
    ...    once (their owner's pid is gone: its lease, an hour here, is not waited for), attaches to the batches out
    ...    and sends the rest: every custom id created exactly once. The killed run kept the lines of the items it
    ...    had answered in a spool beside its `--out` file; its last line, torn as a kill mid-write leaves it, is
    ...    found and made again from the ledger, the others copied: the resumed run's results hold the same lines,
    ...    in the same order, as the run never stopped (but for the batches that carried them), and the spool is
    ...    gone. Then `lowtide retry` sends the failed and expired items, and only them, under `-a2` keys. At the
    ...    end the results (in `--out` and in the results directory) hold one line per row, in order, and no file
    ...    holds the API key. (The run never stopped was a test of its own, on rows of its own: one run fewer.)
    ${csv}=    Write Reviews    ${ROWS}    marked=${MARKED}
    ${actor}=    Write Actor File    lease_seconds=${LEASE}
    ${whole}=    New Directory    whole-
    Arm First Attempt Outcomes    ${RUN}    ${whole}/ledger.sqlite3    errored=${FLAKY}    expired=${EXPIRING}
    @{options}=    Create List    --actor    ${actor}    --template    ${TEMPLATE}    --id-column    id
    ...    --run-id    ${RUN}    --items-per-batch    ${PER_BATCH}    --max-parallel-batches    3    --progress    plain
    ${never}=    Run Lowtide In This Process    run    ${csv}    @{options}    --out    ${whole}/results.jsonl
    ...    --ledger    ${whole}/ledger.sqlite3
    Should Be Equal As Integers    ${never.rc}    1    msg=Some items failed: exit code 1.\n${never.stderr}
    Should Contain    ${never.stdout}    run ${RUN}: 400 item(s): 390 succeeded, 7 failed, 3 expired; ${BATCHES} batch(es); $
    No Spool Should Be Left Beside    ${whole}/results.jsonl    ${RUN}
    Results Should Be Complete    ${whole}/results.jsonl    ${RUN}    ${TEMPLATE}
    Reset Emulator

    ${work}=    New Directory    run-
    ${ledger}=    Set Variable    ${work}/ledger.sqlite3
    Arm First Attempt Outcomes    ${RUN}    ${ledger}    errored=${FLAKY}    expired=${EXPIRING}
    ${out}=    Set Variable    ${work}/results.jsonl
    @{command}=    Create List    run    ${csv}    @{options}
    ...    --out    ${out}    --results-dir    ${work}/resdir    --ledger    ${ledger}

    ${first}=    Start Lowtide    @{command}    crashpoint=before-intent#4
    Lowtide Should Die Midway    ${first}    ${ledger}    batches=${BATCHES}
    Emulator Should Have Created Each Custom Id Once    ${RUN}    ${ROWS}    partial=${TRUE}
    File Should Not Exist    ${out}
    # With `--results-dir` the spool is kept there, as its `results` file's.
    Tear The Last Line Of The Spool Beside    ${work}/resdir/results    ${RUN}

    ${again}=    Run Lowtide    @{command}    timeout=${RESUME_TIMEOUT}
    Should Be Equal As Integers    ${again.rc}    1    msg=Some items failed: exit code 1.\n${again.stderr}
    Should Contain    ${again.stdout}    run ${RUN}: 400 item(s): 390 succeeded, 7 failed, 3 expired; ${BATCHES} batch(es); $
    Should Contain    ${again.stdout}    lowtide retry ${RUN}
    Should Contain X Times    ${again.stderr}    run ${RUN}: 400/400 items (390 ok, 7 failed, 3 expired, 0 canceled, 0 not run) · batches ${BATCHES}/${BATCHES} done, 0 in flight    1
    Should Not Contain    ${again.stderr}    Traceback
    Emulator Should Have Created Each Custom Id Once    ${RUN}    ${ROWS}
    Emulator Should Have Created Batches    ${BATCHES}
    Results Should Be Complete    ${out}    ${RUN}    ${TEMPLATE}
    Results Should Equal But For Batches    ${out}    ${whole}/results.jsonl
    No Spool Should Be Left Beside    ${work}/resdir/results    ${RUN}

    ${retry}=    Run Lowtide In This Process    retry    ${RUN}    --ledger    ${ledger}    --progress    plain
    Should Be Equal As Integers    ${retry.rc}    1    msg=The marked rows still fail: exit code 1.\n${retry.stderr}
    Should Contain    ${retry.stdout}    run ${RUN}: 400 item(s): 396 succeeded, 4 failed; ${BATCHES + 1} batch(es); $
    Should Not Contain    ${retry.stderr}    Traceback
    Emulator Should Have Created Each Custom Id Once    ${RUN}    ${ROWS}    retried=${RETRIED}
    Emulator Should Have Created Batches    ${BATCHES + 1}
    Results Should Be Complete    ${out}    ${RUN}    ${TEMPLATE}    retried=${TRUE}
    Results Directory Should Match    ${work}/resdir    ${out}

    ${in_ledger}=    Every Batch Should Be Collected    ${ledger}    ${BATCHES + 1}
    ${status}=    Run Lowtide In This Process    status    ${RUN}    --ledger    ${ledger}
    Should Be Equal As Integers    ${status.rc}    0    msg=${status.stderr}
    Should Contain    ${status.stdout}    run ${RUN} (actor reviewer): 400 item(s): 396 succeeded, 4 failed
    Should Contain    ${status.stdout}    ${in_ledger} batch(es);
    No File Should Contain The API Key

A Dry Run Prints The Plan And Sends Nothing
    [Documentation]    `--dry-run` splits the rows into batches and prices them, prints that, and neither calls
    ...    the API nor records the run.
    ${csv}=    Write Reviews    ${SMALL}
    ${actor}=    Write Actor File
    ${work}=    New Directory    dry-
    ${plan}=    Run Lowtide In This Process    run    ${csv}    --actor    ${actor}    --template    ${TEMPLATE}    --id-column    id
    ...    --run-id    dry    --items-per-batch    ${SMALL_BATCH}    --out    ${work}/results.jsonl
    ...    --ledger    ${work}/ledger.sqlite3    --dry-run
    Should Be Equal As Integers    ${plan.rc}    0    msg=${plan.stderr}
    Should Contain    ${plan.stdout}    run dry: 120 item(s), 0 already answered, 120 to send in 3 batch(es)
    Should Match Regexp    ${plan.stdout}    (?m)^\\s+batch 1: 50 request\\(s\\), [0-9,]+ bytes, \\$[0-9.]+ to \\$[0-9.]+$
    Should Contain    ${plan.stdout}    batch 3: 20 request(s)
    Should Match Regexp    ${plan.stdout}    (?m)^estimated cost: \\$[0-9.]+ to \\$[0-9.]+ at batch prices$
    Should Contain    ${plan.stdout}    dry run: nothing was sent
    Emulator Should Have Seen No Calls
    File Should Not Exist    ${work}/results.jsonl
    ${status}=    Run Lowtide In This Process    status    dry    --ledger    ${work}/ledger.sqlite3
    Should Be Equal As Integers    ${status.rc}    2
    Should Contain    ${status.stderr}    has no run 'dry'

A Deadline No Batch Is Expected To Meet Goes Live, And Its Dry Run Says So First
    [Documentation]    With no batch in its ledger's history, a batch is expected to take the API's 24 hours, so
    ...    `--deadline 2h` routes the run live: the dry run prints each venue's expected time and the route, sending
    ...    nothing; a deadline in the past exits 2 before anything is sent; the run answers every row by one live
    ...    call over the socket and creates no batch (issue 63).
    ${csv}=    Write Reviews    20
    ${actor}=    Write Actor File
    ${work}=    New Directory    deadline-
    @{command}=    Create List    run    ${csv}    --actor    ${actor}    --template    ${TEMPLATE}    --id-column    id
    ...    --run-id    due    --ledger    ${work}/ledger.sqlite3    --out    ${work}/results.jsonl    --progress    none
    ${plan}=    Run Lowtide In This Process    @{command}    --deadline    2h    --dry-run
    Should Be Equal As Integers    ${plan.rc}    0    msg=${plan.stderr}
    Should Contain    ${plan.stdout}    batch: about 24h00m (no history in this ledger
    Should Contain    ${plan.stdout}    route: live, expected 1m00s
    Emulator Should Have Seen No Calls
    ${past}=    Run Lowtide In This Process    @{command}    --deadline    2020-01-01T06:00+00:00
    Should Be Equal As Integers    ${past.rc}    2    msg=${past.stderr}
    Should Contain    ${past.stderr}    is in the past
    Emulator Should Have Seen No Calls
    ${run}=    Run Lowtide In This Process    @{command}    --deadline    2h
    Should Be Equal As Integers    ${run.rc}    0    msg=${run.stderr}
    Emulator Should Have Answered Live Calls    20
    Emulator Should Have Created Batches    0
    ${lines}=    Get File    ${work}/results.jsonl
    Should Contain X Times    ${lines}    "status":"succeeded"    20

A Template Naming A Missing Column Is Refused Before Anything Is Sent
    [Documentation]    Exit code 2, one message naming the file, the line, the missing column and the columns
    ...    there are; no traceback, no output file, no call.
    ${csv}=    Write Reviews    50
    ${actor}=    Write Actor File
    ${work}=    New Directory    bad-
    ${result}=    Run Lowtide In This Process    run    ${csv}    --actor    ${actor}    --template    Review {review} in {language}
    ...    --run-id    bad    --out    ${work}/results.jsonl    --ledger    ${work}/ledger.sqlite3
    Should Be Equal As Integers    ${result.rc}    2    msg=${result.stderr}
    Should Be Empty    ${result.stdout}
    Should Contain    ${result.stderr}    reviews.csv, line 1: the template names the column 'language'
    Should Contain    ${result.stderr}    it has 'id', 'review'
    Should Not Contain    ${result.stderr}    Traceback
    File Should Not Exist    ${work}/results.jsonl
    Emulator Should Have Seen No Calls

An OpenAI Actor's Run Goes Through OpenAI's Batch API, Resumable And Paid Once
    [Documentation]    The same command with `provider: openai` in the actor file: the rows go through the
    ...    emulator's OpenAI Batch API (one input file and one batch per 50 rows), the results hold one line per
    ...    row in order, each custom id was created once, and running the command again answers everything from
    ...    the ledger without a call. A dry run first prices the batches at OpenAI's batch prices. The other
    ...    providers' tests leave both to this one: the run again is every provider's (a complete run's results
    ...    are made from the answers the ledger stored, with no call and no provider's code), and each provider's
    ...    dry-run prices are its feature file's "A bulk run through ..., with a dry run first" scenario's.
    ${csv}=    Write Reviews    ${SMALL}
    ${actor}=    Write Actor File    provider=openai
    ${work}=    New Directory    openai-
    @{command}=    Create List    run    ${csv}    --actor    ${actor}    --template    ${TEMPLATE}    --id-column    id
    ...    --run-id    oai    --items-per-batch    ${SMALL_BATCH}    --out    ${work}/results.jsonl
    ...    --ledger    ${work}/ledger.sqlite3    --progress    none
    ${plan}=    Run Lowtide In This Process    @{command}    --dry-run
    Should Be Equal As Integers    ${plan.rc}    0    msg=${plan.stderr}
    Should Match Regexp    ${plan.stdout}    (?m)^estimated cost: \\$0\\.0*[1-9][0-9.]* to \\$[0-9.]+ at batch prices$
    Emulator Should Have Seen No Calls
    ${run}=    Run Lowtide In This Process    @{command}
    Should Be Equal As Integers    ${run.rc}    0    msg=${run.stderr}
    Should Contain    ${run.stdout}    run oai: 120 item(s): 120 succeeded; 3 batch(es); $
    Should Not Contain    ${run.stderr}    Traceback
    Emulator Should Have Created Each Custom Id Once    oai    ${SMALL}    provider=openai
    Emulator Should Have Created Batches    3    provider=openai
    Results Should Be Complete    ${work}/results.jsonl    oai    ${TEMPLATE}
    Reset Emulator
    ${again}=    Run Lowtide In This Process    @{command}
    Should Be Equal As Integers    ${again.rc}    0    msg=${again.stderr}
    Should Contain    ${again.stdout}    run oai: 120 item(s): 120 succeeded
    Emulator Should Have Seen No Calls
    No File Should Contain The API Key

A Gemini Actor's Run Goes Through Gemini's Batch Mode, Paid Once
    [Documentation]    The same command with `provider: gemini` in the actor file: the rows go through the
    ...    emulator's Gemini API by google-genai (one inline job per 50 rows), the results hold one line per row in
    ...    order, each custom id was created once.
    ${csv}=    Write Reviews    ${SMALL}
    ${actor}=    Write Actor File    provider=gemini
    ${work}=    New Directory    gemini-
    @{command}=    Create List    run    ${csv}    --actor    ${actor}    --template    ${TEMPLATE}    --id-column    id
    ...    --run-id    gem    --items-per-batch    ${SMALL_BATCH}    --out    ${work}/results.jsonl
    ...    --ledger    ${work}/ledger.sqlite3    --progress    none
    ${run}=    Run Lowtide In This Process    @{command}
    Should Be Equal As Integers    ${run.rc}    0    msg=${run.stderr}
    Should Contain    ${run.stdout}    run gem: 120 item(s): 120 succeeded; 3 batch(es); $
    Should Not Contain    ${run.stderr}    Traceback
    Emulator Should Have Created Each Custom Id Once    gem    ${SMALL}    provider=gemini
    Emulator Should Have Created Batches    3    provider=gemini
    Results Should Be Complete    ${work}/results.jsonl    gem    ${TEMPLATE}
    No File Should Contain The API Key

A Bedrock Actor's Run Goes Through Bedrock Batch Inference, Paid Once
    [Documentation]    The same command with `provider: bedrock` in the actor file: the rows go through the
    ...    emulator's AWS account by boto3 (each job's records written to S3, one job per 100 rows, a job's least,
    ...    its output read back from S3), the results hold one line per row in order, each record was created
    ...    once.
    ${csv}=    Write Reviews    300
    ${actor}=    Write Actor File    provider=bedrock
    ${work}=    New Directory    bedrock-
    @{command}=    Create List    run    ${csv}    --actor    ${actor}    --template    ${TEMPLATE}    --id-column    id
    ...    --run-id    bed    --items-per-batch    100    --out    ${work}/results.jsonl
    ...    --ledger    ${work}/ledger.sqlite3    --progress    none
    ${run}=    Run Lowtide In This Process    @{command}
    Should Be Equal As Integers    ${run.rc}    0    msg=${run.stderr}
    Should Contain    ${run.stdout}    run bed: 300 item(s): 300 succeeded; 3 batch(es); $
    Should Not Contain    ${run.stderr}    Traceback
    Emulator Should Have Created Each Custom Id Once    bed    300    provider=bedrock
    Emulator Should Have Created Batches    3    provider=bedrock
    Results Should Be Complete    ${work}/results.jsonl    bed    ${TEMPLATE}

A Mistral Actor's Run Goes Through Mistral's Batch Jobs, Paid Once
    [Documentation]    The same command with `provider: mistral` in the actor file: the rows go through the
    ...    emulator's Mistral API by mistralai (one inline job per 50 rows), the results hold one line per row in
    ...    order, each custom id was created once.
    ${csv}=    Write Reviews    ${SMALL}
    ${actor}=    Write Actor File    provider=mistral
    ${work}=    New Directory    mistral-
    @{command}=    Create List    run    ${csv}    --actor    ${actor}    --template    ${TEMPLATE}    --id-column    id
    ...    --run-id    mis    --items-per-batch    ${SMALL_BATCH}    --out    ${work}/results.jsonl
    ...    --ledger    ${work}/ledger.sqlite3    --progress    none
    ${run}=    Run Lowtide In This Process    @{command}
    Should Be Equal As Integers    ${run.rc}    0    msg=${run.stderr}
    Should Contain    ${run.stdout}    run mis: 120 item(s): 120 succeeded; 3 batch(es); $
    Should Not Contain    ${run.stderr}    Traceback
    Emulator Should Have Created Each Custom Id Once    mis    ${SMALL}    provider=mistral
    Emulator Should Have Created Batches    3    provider=mistral
    Results Should Be Complete    ${work}/results.jsonl    mis    ${TEMPLATE}
    No File Should Contain The API Key

An Azure OpenAI Actor's Run Goes Through Azure's Batch API At Its Deployment, Paid Once
    [Documentation]    The same command with `provider: azure_openai` in the actor file (its `model` a global-batch
    ...    deployment): the rows go through the emulator's Azure OpenAI API by the SDK's AsyncAzureOpenAI (one file and
    ...    one batch per 50 rows, every line at `/chat/completions` naming the deployment), the results hold one line
    ...    per row in order, each custom id was created once.
    ${csv}=    Write Reviews    ${SMALL}
    ${actor}=    Write Actor File    provider=azure_openai
    ${work}=    New Directory    azure-
    @{command}=    Create List    run    ${csv}    --actor    ${actor}    --template    ${TEMPLATE}    --id-column    id
    ...    --run-id    azr    --items-per-batch    ${SMALL_BATCH}    --out    ${work}/results.jsonl
    ...    --ledger    ${work}/ledger.sqlite3    --progress    none
    ${run}=    Run Lowtide In This Process    @{command}
    Should Be Equal As Integers    ${run.rc}    0    msg=${run.stderr}
    Should Contain    ${run.stdout}    run azr: 120 item(s): 120 succeeded; 3 batch(es); $
    Should Not Contain    ${run.stderr}    Traceback
    Emulator Should Have Created Each Custom Id Once    azr    ${SMALL}    provider=azure_openai
    Emulator Should Have Created Batches    3    provider=azure_openai
    Results Should Be Complete    ${work}/results.jsonl    azr    ${TEMPLATE}
    No File Should Contain The API Key

A Groq Actor's Run Goes Through Groq's Batch API, Paid Once
    [Documentation]    The same command with `provider: groq` in the actor file: the rows go through the emulator's
    ...    Groq API by the groq SDK (one input file and one batch per 50 rows, under `/openai/v1/`), the results
    ...    hold one line per row in order, each custom id was created once.
    ${csv}=    Write Reviews    ${SMALL}
    ${actor}=    Write Actor File    provider=groq
    ${work}=    New Directory    groq-
    @{command}=    Create List    run    ${csv}    --actor    ${actor}    --template    ${TEMPLATE}    --id-column    id
    ...    --run-id    grq    --items-per-batch    ${SMALL_BATCH}    --out    ${work}/results.jsonl
    ...    --ledger    ${work}/ledger.sqlite3    --progress    none
    ${run}=    Run Lowtide In This Process    @{command}
    Should Be Equal As Integers    ${run.rc}    0    msg=${run.stderr}
    Should Contain    ${run.stdout}    run grq: 120 item(s): 120 succeeded; 3 batch(es); $
    Should Not Contain    ${run.stderr}    Traceback
    Emulator Should Have Created Each Custom Id Once    grq    ${SMALL}    provider=groq
    Emulator Should Have Created Batches    3    provider=groq
    Results Should Be Complete    ${work}/results.jsonl    grq    ${TEMPLATE}
    No File Should Contain The API Key

A Together Actor's Run Goes Through Together's Batch API, Paid Once
    [Documentation]    The same command with `provider: together` in the actor file: the rows go through the
    ...    emulator's Together API by the together SDK (one uploaded file and one job per 50 rows), the results
    ...    hold one line per row in order, each custom id was created once.
    ${csv}=    Write Reviews    ${SMALL}
    ${actor}=    Write Actor File    provider=together
    ${work}=    New Directory    together-
    @{command}=    Create List    run    ${csv}    --actor    ${actor}    --template    ${TEMPLATE}    --id-column    id
    ...    --run-id    tgr    --items-per-batch    ${SMALL_BATCH}    --out    ${work}/results.jsonl
    ...    --ledger    ${work}/ledger.sqlite3    --progress    none
    ${run}=    Run Lowtide In This Process    @{command}
    Should Be Equal As Integers    ${run.rc}    0    msg=${run.stderr}
    Should Contain    ${run.stdout}    run tgr: 120 item(s): 120 succeeded; 3 batch(es); $
    Should Not Contain    ${run.stderr}    Traceback
    Emulator Should Have Created Each Custom Id Once    tgr    ${SMALL}    provider=together
    Emulator Should Have Created Batches    3    provider=together
    Results Should Be Complete    ${work}/results.jsonl    tgr    ${TEMPLATE}
    No File Should Contain The API Key

SIGTERM And Ctrl-C End A Run With One Line Saying Nothing Is Lost And How To Resume, The Ledger Closed
    [Documentation]    SIGTERM while a batch is out (a service manager stopping the run): exit code 143; run
    ...    again, SIGINT (Ctrl-C) while its next batch is out: exit code 130. Each time no traceback, one message
    ...    that says what is safe and the exact command that resumes, no `-wal` or `-shm` file left beside the
    ...    ledger; that command then finishes the run, paying for nothing twice. (One batch out at a time, so that
    ...    the second run has a batch of its own to be stopped in; SIGTERM's and Ctrl-C's were two tests.)
    ${csv}=    Write Reviews    300
    ${actor}=    Write Actor File
    ${work}=    New Directory    interrupted-
    @{command}=    Create List    run    ${csv}    --actor    ${actor}    --template    ${TEMPLATE}    --id-column    id
    ...    --run-id    stop    --items-per-batch    100    --max-parallel-batches    1    --out    ${work}/results.jsonl
    ...    --ledger    ${work}/ledger.sqlite3    --progress    none
    ${first}=    Start Lowtide    @{command}
    ${stopped}=    Interrupt Lowtide Once A Batch Is Out    ${first}    ${work}/ledger.sqlite3    signal_name=SIGTERM
    Should Be Equal As Integers    ${stopped.rc}    143    msg=${stopped.stderr}
    Should Contain    ${stopped.stderr}    lowtide: interrupted. Nothing is lost
    Should Contain    ${stopped.stderr}    lowtide run ${csv} --actor ${actor}
    Should Not Contain    ${stopped.stderr}    Traceback
    Ledger Should Be Closed    ${work}/ledger.sqlite3
    ${second}=    Start Lowtide    @{command}
    ${stopped}=    Interrupt Lowtide Once A Batch Is Out    ${second}    ${work}/ledger.sqlite3    after=1
    Should Be Equal As Integers    ${stopped.rc}    130    msg=${stopped.stderr}
    Should Contain    ${stopped.stderr}    lowtide: interrupted. Nothing is lost
    Should Contain    ${stopped.stderr}    lowtide run ${csv} --actor ${actor}
    Should Not Contain    ${stopped.stderr}    Traceback
    Ledger Should Be Closed    ${work}/ledger.sqlite3
    ${again}=    Run Lowtide In This Process    @{command}
    Should Be Equal As Integers    ${again.rc}    0    msg=${again.stderr}
    Should Contain    ${again.stdout}    run stop: 300 item(s): 300 succeeded
    Ledger Should Be Closed    ${work}/ledger.sqlite3
    Emulator Should Have Created Each Custom Id Once    stop    300
