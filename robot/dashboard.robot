*** Settings ***
Documentation       `lowtide dashboard` in a real browser (Debian's headless Chromium, through selenium): a ledger with
...                 a run in progress, a finished run, failures and a parked call; each page checked for what a user
...                 sees, the live update seen to change, the token refused and accepted, a read-only ledger file.
...                 Screenshots: build/dashboard/*.png.
Library             Collections
Library             Process
Library             DashboardLibrary.py
Library             PostgresLibrary.py
Suite Setup         Open The Dashboard On A Built Ledger
Suite Teardown      Clean Up Everything


*** Variables ***
${LEDGER}       ${EMPTY}
${URL}          ${EMPTY}
${LIVE}         [data-run="reviews-live"]
${FINISHED}     [data-run="reviews-finished"]


*** Test Cases ***
Runs Show Progress, ETA, Spend, The Worst Case Still Out And The Cost Limit
    Go To    ${URL}#runs
    Wait Until Text Of Is    ${LIVE} [data-fact="count-succeeded"] .value    4
    ${waiting}=    Fact Of    ${LIVE}    count-waiting
    Should Be Equal    ${waiting}    6
    ${state}=    Text Of    ${LIVE} .run-state
    Should Be Equal    ${state}    in progress · 4 of 10 done
    ${eta}=    Fact Of    ${LIVE}    eta
    Should Match Regexp    ${eta}    ^(19|20)m \\d+s$
    ${spent}=    Fact Of    ${LIVE}    spent
    Should Be Equal    ${spent}    $0.0060
    ${worst}=    Fact Of    ${LIVE}    worst
    Should Be Equal    ${worst}    $0.0600
    ${limit}=    Fact Of    ${LIVE}    limit
    Should Be Equal    ${limit}    $5.00
    ${state}=    Text Of    ${FINISHED} .run-state
    Should Be Equal    ${state}    finished · 6 of 6 done
    ${failed}=    Fact Of    ${FINISHED}    count-failed
    Should Be Equal    ${failed}    1
    ${expired}=    Fact Of    ${FINISHED}    count-expired
    Should Be Equal    ${expired}    1
    ${retry}=    Text Of    ${FINISHED} code
    Should Be Equal    ${retry}    lowtide retry reviews-finished
    ${points}=    Chart Is Drawn    run-reviews-live    answers
    Should Be True    ${points} >= 1
    ${bars}=    Count Of    ${LIVE} [data-bar="progress"] span
    Should Be Equal As Integers    ${bars}    2
    Take Screenshot    runs

Batches Are Listed Waiting Longest First, Each With The API's Batch Id And Its Cost Beside The Live Price
    Show Page    batches
    Wait Until Page Contains    Batches, waiting longest first
    @{first}=    Texts Of    \#batches-table tbody tr:nth-child(1) td
    Should Be Equal    ${first}[0]    batch-parked
    Should Be Equal    ${first}[1]    api-batch-parked
    Should Be Equal    ${first}[2]    openai
    Should Be Equal    ${first}[3]    waiting-on-batch
    Should Match Regexp    ${first}[7]    ^5h 0m$
    Should Match Regexp    ${first}[8]    ^1[89]h \\d+m$
    @{second}=    Texts Of    \#batches-table tbody tr:nth-child(2) td
    Should Be Equal    ${second}[0]    batch-live-2
    @{collected}=    Texts Of    \#batches-table tbody tr:nth-child(4) td
    Should Be Equal    ${collected}[0]    batch-fin
    Should Be Equal    ${collected}[1]    api-batch-fin
    Should Be Equal    ${collected}[5]    6 / 6
    Should Be Equal    ${collected}[9]    $0.0060
    Should Be Equal    ${collected}[10]    $0.0120
    Should Be Equal    ${collected}[11]    $0.0060
    Take Screenshot    batches

Money Shows Spend And Savings Over Time, By Actor, Model And Provider
    Show Page    money
    Wait Until Text Of Is    \#page-money [data-fact="spent"] .value    $0.0120
    ${live}=    Fact Of    \#page-money    live
    Should Be Equal    ${live}    $0.0240
    ${saved}=    Fact Of    \#page-money    saved
    Should Be Equal    ${saved}    $0.0120
    # Two batches answered an hour apart: every interval between them is drawn, empty (61 minutes in 2-minute ones).
    ${points}=    Chart Is Drawn    money    cost_usd
    Should Be Equal As Integers    ${points}    31
    Chart Is Drawn    money    live_cost_usd
    @{provider}=    Texts Of    table[data-by="provider"] tbody tr:nth-child(1) td
    Should Be Equal    ${provider}    ${{ ["anthropic", "8", "2", "$0.0120", "$0.0240", "$0.0120"] }}
    @{actor}=    Texts Of    table[data-by="actor"] tbody td
    Should Be Equal    ${actor}[0]    reviewer
    Take Screenshot    money

Failures Are Grouped By Error, With An Example And The Command That Retries Them
    Show Page    failures
    Wait Until Page Contains    Failures by error
    @{first}=    Texts Of    \#failures-table tbody tr:nth-child(1) td
    Should Be Equal    ${first}[0]    BatchRequestErrored
    Should Be Equal    ${first}[1]    invalid_request_error
    Should Be Equal    ${first}[2]    1
    Should Be Equal    ${first}[3]    fin-4
    Should Be Equal    ${first}[4]    max_tokens: must be at most 8192
    Should Be Equal    ${first}[5]    lowtide retry reviews-finished
    @{second}=    Texts Of    \#failures-table tbody tr:nth-child(2) td
    Should Be Equal    ${second}[0]    BatchRequestExpired
    Take Screenshot    failures

One Request Is Found By Custom Id Or Key, With Its Batches, Create Steps, Results And Answer
    ${custom_id}=    Custom Id Of The Parked Call In    ${LEDGER}
    Show Page    request
    Search Request    ${custom_id}
    Wait Until Text Of Is    \#request-card h2    parked-call-1
    ${state}=    Fact Of    \#request-card    state
    Should Be Equal    ${state}    waiting-on-batch
    @{batch}=    Texts Of    \#request-batches tbody td
    Should Be Equal    ${batch}[0]    batch-parked
    Should Be Equal    ${batch}[3]    ${custom_id}
    Should Be Equal    ${batch}[4]    input_file: file-batch-parked
    Take Screenshot    request-parked
    Search Request    fin-4
    Wait Until Text Of Is    \#request-card h2    fin-4
    ${error}=    Text Of    \#request-error
    Should Contain    ${error}    invalid_request_error
    @{result}=    Texts Of    \#request-results tbody td
    Should Be Equal    ${result}[2]    failed
    Search Request    fin-0
    Wait Until Text Of Is    \#request-answer    answer to fin-0
    ${prompt}=    Text Of    \#request-prompt
    Should Contain    ${prompt}    "content": "fin-0"
    ${cost}=    Fact Of    \#request-card    cost
    Should Be Equal    ${cost}    $0.0015
    Search Request    no-such-request
    Wait Until Page Contains    No request with that key or custom id.

The Agents Page Counts Agent Runs By State And Shows A Run's Timeline
    [Documentation]    Each turn and step in order: its outcome, the batch it went in, its cost, how long it waited.
    Go To    ${URL}#runs
    Show Page    agents
    Wait Until Text Of Is    \#page-agents [data-fact="agents-parked"] .value    1
    ${finished}=    Fact Of    \#page-agents    agents-finished
    Should Be Equal    ${finished}    0
    @{listed}=    Texts Of    \#agents-table tbody tr:nth-child(1) td
    Should Be Equal    ${listed}[0]    triage-7
    Should Be Equal    ${listed}[1]    parked
    Should Be Equal    ${listed}[3]    $0.0015
    Go To    ${URL}#agents=triage-7
    Wait Until Text Of Is    \#agent-run h2 .run-state    parked
    @{turn}=    Texts Of    \#agent-timeline tbody tr:nth-child(1) td
    Should Be Equal    ${turn}[1]    turn
    Should Be Equal    ${turn}[3]    done
    Should Be Equal    ${turn}[4]    batch-fin
    Should Be Equal    ${turn}[5]    $0.0015
    Should Be Equal    ${turn}[6]    1h 0m
    @{waiting}=    Texts Of    \#agent-timeline tbody tr:nth-child(3) td
    Should Be Equal    ${waiting}[3]    begun
    Should Be Equal    ${waiting}[4]    batch-live-2
    Should Match Regexp    ${waiting}[6]    ^1\\d?m \\d+s$
    Take Screenshot    agents

The Spend Page Shows Each Cap With What Is Spent, Reserved And Left, And Spend By Team, Project And Day
    Show Page    spend
    Wait Until Page Contains    Spend by team and project
    @{project}=    Texts Of    \#caps-table tbody tr:nth-child(1) td
    Should Be Equal    ${project}[0]    project
    Should Be Equal    ${project}[1]    tides
    Should Be Equal    ${project}[2]    all
    Should Be Equal    ${project}[3]    $0.05
    Should Be Equal    ${project}[4]    $0.0100
    Should Be Equal    ${project}[5]    $0.0200
    Should Be Equal    ${project}[6]    $0.0200
    @{team}=    Texts Of    \#caps-table tbody tr:nth-child(2) td
    Should Be Equal    ${team}[1]    research
    Should Be Equal    ${team}[3]    $1.00
    Should Be Equal    ${team}[6]    $0.9700
    ${spent}=    Fact Of    \#page-spend    spend-spent
    Should Be Equal    ${spent}    $0.0100
    ${reserved}=    Fact Of    \#page-spend    spend-reserved
    Should Be Equal    ${reserved}    $0.0300
    @{ops}=    Texts Of    [data-spend-by="team"] tbody tr:nth-child(1) td
    Should Be Equal    ${ops}    ${{ ["ops", "1", "$0", "$0.0100"] }}
    @{research}=    Texts Of    [data-spend-by="team"] tbody tr:nth-child(2) td
    Should Be Equal    ${research}    ${{ ["research", "7", "$0.0100", "$0.0200"] }}
    ${days}=    Count Of    [data-spend-by="day"] tbody tr
    Should Be True    ${days} >= 1
    Take Screenshot    spend

The Page Updates Itself As The Ledger Changes
    Show Page    runs
    Wait Until Text Of Is    ${LIVE} [data-fact="count-waiting"] .value    6
    ${before}=    Updates Seen
    Answer The Waiting Batch In    ${LEDGER}
    Wait Until Text Of Is    ${LIVE} [data-fact="count-succeeded"] .value    10
    Wait Until Text Of Is    ${LIVE} .run-state    finished · 10 of 10 done
    ${after}=    Updates Seen
    Should Be True    ${after} > ${before}
    Take Screenshot    runs-updated

A Token Is Refused Until The Right One Is Given
    [Setup]    Stop Dashboard
    ${url}=    Start Dashboard    ${LEDGER}    --token    s3cret-token    --refresh    0.5
    Should End With    ${url}    /?token=s3cret-token
    ${base}=    Evaluate    $url.split("?")[0]
    Go To    ${base}
    Wait Until Page Contains    Token required
    ${status}    ${body}=    Ask The Dashboard    /api/runs
    Should Be Equal As Integers    ${status}    401
    Should Not Contain    ${body}    reviews
    ${status}    ${body}=    Ask The Dashboard    /api/runs    wrong-token
    Should Be Equal As Integers    ${status}    401
    Go To    ${base}?token=wrong-token
    Wait Until Page Contains    Token required
    Take Screenshot    token-refused
    ${status}    ${body}=    Ask The Dashboard    /api/runs    s3cret-token
    Should Be Equal As Integers    ${status}    200
    Go To    ${url}
    Wait Until Text Of Is    ${FINISHED} [data-fact="count-failed"] .value    1
    Take Screenshot    token-accepted
    [Teardown]    Stop Dashboard

Beyond Loopback A Token Is Made, Printed Once, And Required Of Every Request
    [Setup]    Stop Dashboard
    ${url}=    Start Dashboard Beyond Loopback    ${LEDGER}    0.0.0.0    --refresh    0.5
    Should Match Regexp    ${url}    ^http://0\\.0\\.0\\.0:\\d+/\\?token=[A-Za-z0-9_-]{32}$
    ${token}=    Evaluate    $url.split("?token=")[1]
    ${local}=    Loopback Address Of    ${url}
    ${base}=    Evaluate    $local.split("?")[0]
    Go To    ${base}
    Wait Until Page Contains    Token required
    ${status}    ${body}=    Ask The Dashboard    /api/runs
    Should Be Equal As Integers    ${status}    401
    Should Not Contain    ${body}    reviews
    ${status}    ${body}=    Ask The Dashboard    /api/money    not-${token}
    Should Be Equal As Integers    ${status}    401
    ${status}    ${body}=    Ask The Dashboard    /api/runs    ${token}
    Should Be Equal As Integers    ${status}    200
    Should Contain    ${body}    reviews-finished
    Go To    ${local}
    Wait Until Text Of Is    ${FINISHED} [data-fact="count-failed"] .value    1
    ${address}=    Current Address
    Should Start With    ${address}    ${base}
    Should Not Contain    ${address}    token
    &{cookie}=    Token Cookie
    Should Be Equal    ${cookie}[value]    ${token}
    Should Be True    ${cookie}[httpOnly]
    Should Be Equal    ${cookie}[sameSite]    Strict
    Go To    ${base}
    Wait Until Text Of Is    ${FINISHED} [data-fact="count-failed"] .value    1
    Take Screenshot    token-made
    Stop Dashboard
    ${printed}=    Times Printed    ${token}
    Should Be Equal As Integers    ${printed}    1
    [Teardown]    Stop Dashboard

The Token In LOWTIDE_DASHBOARD_TOKEN Is The One Required, Beyond Loopback Or On It
    [Setup]    Stop Dashboard
    ${url}=    Start Dashboard Beyond Loopback    ${LEDGER}    0.0.0.0    token_env=from-the-environment-1
    Should Match Regexp    ${url}    ^http://0\\.0\\.0\\.0:\\d+/\\?token=from-the-environment-1$
    ${status}    ${body}=    Ask The Dashboard    /api/runs
    Should Be Equal As Integers    ${status}    401
    ${status}    ${body}=    Ask The Dashboard    /api/runs    from-the-environment-1
    Should Be Equal As Integers    ${status}    200
    ${local}=    Loopback Address Of    ${url}
    Go To    ${local}
    Wait Until Text Of Is    ${FINISHED} [data-fact="count-failed"] .value    1
    Stop Dashboard
    ${printed}=    Times Printed    from-the-environment-1
    Should Be Equal As Integers    ${printed}    1
    ${url}=    Start Dashboard Beyond Loopback    ${LEDGER}    127.0.0.1    token_env=from-the-environment-2
    Should Match Regexp    ${url}    ^http://127\\.0\\.0\\.1:\\d+/\\?token=from-the-environment-2$
    ${status}    ${body}=    Ask The Dashboard    /api/runs
    Should Be Equal As Integers    ${status}    401
    ${status}    ${body}=    Ask The Dashboard    /api/runs    from-the-environment-2
    Should Be Equal As Integers    ${status}    200
    [Teardown]    Stop Dashboard

A Read-Only Ledger File Is Shown, And Nothing Is Written To It Or Beside It
    ${ledger}=    Build Dashboard Ledger    kept
    ${before}=    Make Read Only    ${ledger}
    @{files}=    Files Beside    ${ledger}
    ${url}=    Start Dashboard    ${ledger}    --refresh    0.5    whom_modes_stop=${True}
    Go To    ${url}#runs
    Wait Until Text Of Is    ${LIVE} [data-fact="count-waiting"] .value    6
    Show Page    money
    Wait Until Text Of Is    \#page-money [data-fact="spent"] .value    $0.0120
    Take Screenshot    read-only
    Stop Dashboard
    ${after}=    Digest Of    ${ledger}
    Should Be Equal    ${after}    ${before}
    @{now}=    Files Beside    ${ledger}
    Should Be Equal    ${now}    ${files}

A Run Too Large To Count At Each Refresh Is Shown At Once, And Says How Old Its Counts Are
    [Setup]    Stop Dashboard
    ${ledger}=    Build Large Dashboard Ledger    large    100000
    ${url}=    Start Dashboard    ${ledger}    --refresh    0.2
    Go To    ${url}#runs
    Wait Until Text Of Is    [data-run="reviews-large"] [data-fact="count-waiting"] .value    100000
    ${state}=    Text Of    [data-run="reviews-large"] .run-state
    Should Be Equal    ${state}    in progress · 0 of 100000 done
    Wait Until Page Contains    counted again in the background.
    ${note}=    Text Of    [data-run="reviews-large"] .counted
    Should Match Regexp    ${note}    ^Counted \\d+s ago; counted again in the background\\.$
    Take Screenshot    runs-counted-ago
    [Teardown]    Stop Dashboard

A Run Still Being Counted Is Shown At Once As Such, Then With Its Counts
    [Setup]    Stop Dashboard
    ${ledger}=    Build Dashboard Ledger    held
    ${url}=    Start Dashboard Whose Counts Are Held    ${ledger}
    Go To    ${url}#runs
    Wait Until Text Of Is    ${LIVE} .run-state    10 items · being counted
    ${note}=    Text Of    ${LIVE} .counted
    Should Be Equal    ${note}    Counting this run's items for the first time; shown here once counted.
    ${actor}=    Fact Of    ${LIVE}    actor
    Should Be Equal    ${actor}    reviewer
    Take Screenshot    runs-being-counted
    Show Page    money
    Wait Until Text Of Is    \#page-money [data-fact="spent"] .value    $0.0120
    Show Page    runs
    Release The Held Counts
    Wait Until Text Of Is    ${LIVE} [data-fact="count-waiting"] .value    6
    ${state}=    Text Of    ${LIVE} .run-state
    Should Be Equal    ${state}    in progress · 4 of 10 done
    [Teardown]    Stop Dashboard

A PostgreSQL Ledger Is Shown As A SQLite File Is, Its Password Never
    [Tags]    postgres
    [Setup]    Stop Dashboard
    ${database}=    Create PostgreSQL Database
    Build Dashboard Ledger In    ${database}
    ${password}=    PostgreSQL Password
    ${url}=    Start Dashboard    ${database}    --refresh    0.5
    Go To    ${url}#runs
    Wait Until Text Of Is    ${LIVE} [data-fact="count-succeeded"] .value    4
    ${waiting}=    Fact Of    ${LIVE}    count-waiting
    Should Be Equal    ${waiting}    6
    ${failed}=    Fact Of    ${FINISHED}    count-failed
    Should Be Equal    ${failed}    1
    Show Page    money
    Wait Until Text Of Is    \#page-money [data-fact="spent"] .value    $0.0120
    Show Page    failures
    Wait Until Page Contains    invalid_request_error
    Take Screenshot    postgres
    ${page}=    Text Of    body
    Should Not Contain    ${page}    ${password}
    ${printed}=    Dashboard Output
    Should Not Contain    ${printed}    ${password}
    Should Contain    ${printed}    postgresql://
    [Teardown]    Stop Dashboard

With No Ledger There, It Says So In One Line And Serves Nothing
    @{command}=    Lowtide Command Line
    ${done}=    Run Process    @{command}    dashboard    --ledger    ${TEMPDIR}/no-such-ledger.sqlite3    --port    0
    ...    timeout=60s
    Should Be Equal As Integers    ${done.rc}    2
    Should Be Equal    ${done.stderr.strip()}
    ...    lowtide: There is no ledger at ${TEMPDIR}/no-such-ledger.sqlite3. Name the one your programs use with --ledger or $LOWTIDE_LEDGER.
    Should Not Contain    ${done.stdout}    listening


*** Keywords ***
Clean Up Everything
    Clean Up
    Stop PostgreSQL

Open The Dashboard On A Built Ledger
    ${ledger}=    Build Dashboard Ledger    shared
    Set Suite Variable    ${LEDGER}    ${ledger}
    ${url}=    Start Dashboard    ${ledger}    --refresh    0.5
    Set Suite Variable    ${URL}    ${url}
    Open Browser
