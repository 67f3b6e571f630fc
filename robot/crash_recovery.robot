*** Settings ***
Test Timeout        10 minutes    # stuck, not slow: the longest take a few minutes on a loaded machine
Documentation       A batch-mode client killed with SIGKILL at any stage of a batch's life loses no answer and pays
...                 for nothing twice, over every provider's batch API: the same program run again with the same keys
...                 and the same ledger finishes the work, every request is answered once, and the API created each
...                 request in exactly one batch (or job). A create whose answer is lost is not sent again: the
...                 client finds the batch (Anthropic: by time and request count, then its first custom id; OpenAI,
...                 Azure OpenAI, Groq, Mistral: by the intent id in its metadata; Gemini: in its display name;
...                 Together: by its input file, named after the intent) or, Bedrock, makes the create again under the
...                 same clientRequestToken and is answered with the job the first create made.
...
...                 Each test names its provider first (`Groq: ...`; one provider's tests: `--test "Groq:*"`), has its
...                 own ledger and the suite's `lowtide emulator` (a separate process on a loopback socket, serving
...                 every provider's API), reset before the test as if started anew (`Fresh Emulator`). The client
...                 (`resources/crash_client.py --provider ...`, through the provider's own SDK) is killed by
...                 lowtide's own crash points (`LOWTIDE_CRASHPOINT`); a create still in flight when it dies is kept
...                 in flight by the emulator's `delay_after_commit` fault, which commits the batch and answers only
...                 later. The tests tagged `postgres` (`nox -s postgres`) run the Anthropic crash tests on a
...                 PostgreSQL ledger, a database of their own each in a throwaway cluster. Since schema 7 the intent
...                 writes no request row (a request's batch is its latest membership, a pending one a row of
...                 `pending_requests`): a client killed between the intent and the create leaves every request
...                 submitting in the intent, which the next run reconciles (the API holds no batch) and sends once.

Resource            resources/crash.resource
Library             PostgresLibrary.py

Suite Teardown      Clean Up And Stop PostgreSQL
Test Setup          Fresh Emulator    processing_seconds=${PROCESSING}
Test Teardown       Stop The Test's Clients
Test Template       Killed At A Crash Point


*** Variables ***
${PROCESSING}       1
${REQUESTS}         20
# More than one chunk of results (2,000 lines), so that the client dies with part of them stored.
${STREAMED}         2400
# `during-create`: the emulator answers the create CREATE_DELAY s after committing it; the client dies CRASH_DELAY s
# after sending it (3 and 1). Groq's and Together's: 15 and 5. Their create is two calls (the upload, then the
# create) and the clock starts before the upload: with 1 s, a loaded machine could kill the client before its create
# reached the API (seen once in a full run); 5 s is far more than both calls take, and the answer still comes long
# after the kill.
&{CREATE_DELAYS}    groq=15    together=15
&{CRASH_DELAYS}    groq=5    together=5
# Where a provider's input goes before its create (`after-step-...`: the client dies once the upload is recorded;
# run again, it creates the batch from that upload: uploaded once, created once). Gemini's resumable upload is two
# calls, its start and its bytes.
&{UPLOAD_ROUTE}     azure_openai=files.create    bedrock=s3.put_object    gemini=files.upload    groq=files.create
...                 mistral=files.upload    together=files.put
&{UPLOAD_CALLS}     gemini=2
# Gemini's and Mistral's batches this small go inline (the job answers in the job itself): every batch as a file.
${GEMINI_FILES}     {"gemini": {"batch_inline_bytes": 0}}
${MISTRAL_FILES}    {"mistral": {"batch_inline_bytes": 0}}


*** Test Cases ***    PROVIDER    CRASHPOINT    REQUESTS
Anthropic: Killed After The Intent Was Committed, Before The Create Was Sent
                      anthropic       after-intent          ${REQUESTS}
OpenAI: Killed After The Intent Was Committed, Before The Create Was Sent
                      openai          after-intent          ${REQUESTS}
Bedrock: Killed After The Intent Was Committed, Before The Input Was Written
                      bedrock         after-intent          ${REQUESTS}
Gemini: Killed After The Intent Was Committed, Before The Create Was Sent
                      gemini          after-intent          ${REQUESTS}
Groq: Killed After The Intent Was Committed, Before The Create Was Sent
                      groq            after-intent          ${REQUESTS}
Mistral: Killed After The Intent Was Committed, Before The Create Was Sent
                      mistral         after-intent          ${REQUESTS}
Together: Killed After The Intent Was Committed, Before The Create Was Sent
                      together        after-intent          ${REQUESTS}

Azure OpenAI: Killed After The Input File Was Uploaded And Recorded, Before The Create
                      azure_openai    after-step-input_file    ${REQUESTS}
Bedrock: Killed After The Input Was Written And Recorded, Before The Create
                      bedrock         after-step-input_uri     ${REQUESTS}
Gemini: Killed After The Input File Was Uploaded And Recorded, Before The Create
                      gemini          after-step-input_file    ${REQUESTS}    provider_options=${GEMINI_FILES}
Groq: Killed After The Input File Was Uploaded And Recorded, Before The Create
                      groq            after-step-input_file    ${REQUESTS}
Mistral: Killed After The Input File Was Uploaded And Recorded, Before The Create
                      mistral         after-step-input_file    ${REQUESTS}    provider_options=${MISTRAL_FILES}
Together: Killed After The Input File Was Uploaded And Recorded, Before The Create
                      together        after-step-input_file    ${REQUESTS}

Anthropic: Killed While The Create Is In Flight And The Batch Exists
                      anthropic       during-create         ${REQUESTS}
OpenAI: Killed While The Create Is In Flight And The Batch Exists
                      openai          during-create         ${REQUESTS}
Azure OpenAI: Killed While The Create Is In Flight And The Batch Exists
                      azure_openai    during-create         ${REQUESTS}
Gemini: Killed While The Create Is In Flight And The Job Exists
                      gemini          during-create         ${REQUESTS}
Groq: Killed While The Create Is In Flight And The Batch Exists
                      groq            during-create         ${REQUESTS}
Mistral: Killed While The Create Is In Flight And The Job Exists
                      mistral         during-create         ${REQUESTS}
Together: Killed While The Create Is In Flight And The Batch Exists
                      together        during-create         ${REQUESTS}

Bedrock: Killed While The Create Is In Flight And The Job Exists
    [Documentation]    The emulator commits the job and holds its answer back; the client is killed once the emulator
    ...    holds the job (not after a fixed delay: the input's upload comes first, and a loaded machine may take
    ...    longer than any delay). Run again, the create is made again under the same token: one job.
    [Template]    NONE
    Use Provider For The Test    bedrock
    ${ledger}=    New Ledger
    Arm Fault    bedrock.batches.create    delay_after_commit    seconds=60
    ${crashed}=    Start Client    crash    ${REQUESTS}    ${ledger}
    Wait Until The Emulator Holds Batches    1
    Kill Client    ${crashed}
    Client Should Have Been Killed    ${crashed}
    Ledger Should Show A Crash At    ${ledger}    during-create    ${REQUESTS}
    ${again}=    Run Client    crash    ${REQUESTS}    ${ledger}
    Client Should Have Succeeded    ${again}
    Answers Should Be Complete    ${again}    crash    ${REQUESTS}
    Emulator Should Hold Batches    1
    Every Request Should Have Been Created Once    crash    ${REQUESTS}
    Every Ticket Should Be Collected    ${ledger}    crash    ${REQUESTS}

Anthropic: Killed After The Create Answered, Before Its Batch Id Was Recorded
                      anthropic       after-create          ${REQUESTS}
OpenAI: Killed After The Create Answered, Before Its Batch Id Was Recorded
                      openai          after-create          ${REQUESTS}
Azure OpenAI: Killed After The Create Answered, Before Its Batch Id Was Recorded
                      azure_openai    after-create          ${REQUESTS}
Bedrock: Killed After The Create Answered, Before Its Job Was Recorded
                      bedrock         after-create          ${REQUESTS}
Gemini: Killed After The Create Answered, Before Its Job Name Was Recorded
                      gemini          after-create          ${REQUESTS}
Groq: Killed After The Create Answered, Before Its Batch Id Was Recorded
                      groq            after-create          ${REQUESTS}
Mistral: Killed After The Create Answered, Before Its Job Id Was Recorded
                      mistral         after-create          ${REQUESTS}
Together: Killed After The Create Answered, Before Its Batch Id Was Recorded
                      together        after-create          ${REQUESTS}

Anthropic: Killed While Polling The Batch
                      anthropic       while-polling         ${REQUESTS}
OpenAI: Killed While Polling The Batch
                      openai          while-polling         ${REQUESTS}
Gemini: Killed While Polling The Job
                      gemini          while-polling         ${REQUESTS}
Groq: Killed While Polling The Batch
                      groq            while-polling         ${REQUESTS}
Mistral: Killed While Polling The Job
                      mistral         while-polling         ${REQUESTS}
Together: Killed While Polling The Batch
                      together        while-polling         ${REQUESTS}

Anthropic: Killed While Storing The Results
                      anthropic       while-streaming       ${STREAMED}
OpenAI: Killed While Storing The Results
                      openai          while-streaming       ${STREAMED}
Bedrock: Killed While Storing The Results
                      bedrock         while-streaming       ${STREAMED}
Gemini: Killed While Storing The Results
                      gemini          while-streaming       ${STREAMED}
Groq: Killed While Storing The Results
                      groq            while-streaming       ${STREAMED}
Mistral: Killed While Storing The Results
                      mistral         while-streaming       ${STREAMED}
Together: Killed While Storing The Results
                      together        while-streaming       ${STREAMED}

Anthropic: Killed After Every Result Was Stored, Before The Batch Was Said Collected
                      anthropic       after-results         ${REQUESTS}
OpenAI: Killed After Every Result Was Stored, Before The Batch Was Said Collected
                      openai          after-results         ${REQUESTS}
Azure OpenAI: Killed After Every Result Was Stored, Before The Batch Was Said Collected
                      azure_openai    after-results         ${REQUESTS}
Bedrock: Killed After Every Result Was Stored, Before The Job Was Said Collected
                      bedrock         after-results         ${REQUESTS}
Gemini: Killed After Every Result Was Stored, Before The Batch Was Said Collected
                      gemini          after-results         ${REQUESTS}
Groq: Killed After Every Result Was Stored, Before The Batch Was Said Collected
                      groq            after-results         ${REQUESTS}
Mistral: Killed After Every Result Was Stored, Before The Batch Was Said Collected
                      mistral         after-results         ${REQUESTS}
Together: Killed After Every Result Was Stored, Before The Batch Was Said Collected
                      together        after-results         ${REQUESTS}

Anthropic: A Create Whose Answer Is Lost Is Reconciled, Not Sent Again
    [Documentation]    The emulator commits the batch and drops the connection without an answer. Nobody is killed:
    ...    the client cannot know whether the batch exists, finds it in the API's list and adopts it.
    [Template]    A Create Whose Answer Is Lost Is Paid Once
    anthropic       reconciled with the API's
OpenAI: A Create Whose Answer Is Lost Is Found By Its Intent Id, Not Sent Again
    [Template]    A Create Whose Answer Is Lost Is Paid Once
    openai          by its metadata
Azure OpenAI: A Create Whose Answer Is Lost Is Found By Its Intent Id, Not Sent Again
    [Documentation]    Found by the intent id in the batch's metadata, which Azure's API takes and echoes (API version
    ...    2024-10-21), and created from the one file uploaded.
    [Template]    NONE
    A Create Whose Answer Is Lost Is Paid Once    azure_openai    by its metadata
    Emulator Call Count Should Be    azure_openai.files.create    1
Gemini: A Create Whose Answer Is Lost Is Found By Its Display Name, Not Sent Again
    [Documentation]    Gemini's jobs carry the intent id in their display name (the ledger logs the job as found "by
    ...    its metadata", as for every provider).
    [Template]    A Create Whose Answer Is Lost Is Paid Once
    gemini          by its metadata
Groq: A Create Whose Answer Is Lost Is Found By Its Intent Id, Not Sent Again
    [Template]    A Create Whose Answer Is Lost Is Paid Once
    groq            by its metadata
Mistral: A Create Whose Answer Is Lost Is Found By Its Metadata, Not Sent Again
    [Template]    A Create Whose Answer Is Lost Is Paid Once
    mistral         by its metadata
Together: A Create Whose Answer Is Lost Is Found By Its Input File, Not Sent Again
    [Documentation]    Together's jobs carry no metadata: the client finds the job by its input file, uploaded once
    ...    under a name made from the intent id.
    [Template]    A Create Whose Answer Is Lost Is Paid Once
    together        by its metadata
Bedrock: A Create Whose Answer Is Lost Is Made Again Under Its Token And Answered With The Same Job
    [Documentation]    The client cannot know whether the job exists, makes the create again under the same token
    ...    (the intent id), and the account answers with the job it made: the creates are two, the jobs one.
    [Template]    A Create Whose Answer Is Lost Is Paid Once
    bedrock         created again from what its create left    creates=2

PostgreSQL Ledger: Killed After The Intent Was Committed, Before The Create Was Sent
    [Tags]    postgres
    anthropic       after-intent          ${REQUESTS}        store=postgres
PostgreSQL Ledger: Killed While The Create Is In Flight And The Batch Exists
    [Tags]    postgres
    anthropic       during-create         ${REQUESTS}        store=postgres
PostgreSQL Ledger: Killed After The Create Answered, Before Its Batch Id Was Recorded
    [Tags]    postgres
    anthropic       after-create          ${REQUESTS}        store=postgres
PostgreSQL Ledger: Killed While Polling The Batch
    [Tags]    postgres
    anthropic       while-polling         ${REQUESTS}        store=postgres
PostgreSQL Ledger: Killed While Storing The Results
    [Tags]    postgres
    anthropic       while-streaming       ${STREAMED}        store=postgres
PostgreSQL Ledger: Killed After Every Result Was Stored, Before The Batch Was Said Collected
    [Tags]    postgres
    anthropic       after-results         ${REQUESTS}        store=postgres


*** Keywords ***
Killed At A Crash Point
    [Documentation]    The provider's client killed at `crashpoint`, run again: nothing lost, nothing paid twice
    ...    (`A Client Killed At A Crash Point Loses Nothing And Pays Once`, Bedrock's below). `during-create`: the
    ...    create kept in flight (`delay_after_commit`), the client killed while it is. `after-step-...`: the upload
    ...    that step recorded is made once in all. `store=postgres`: the ledger a PostgreSQL database.
    [Arguments]    ${provider}    ${crashpoint}    ${requests}    ${provider_options}=${NONE}    ${store}=sqlite
    Use Provider For The Test    ${provider}
    ${ledger}=    IF    $store == 'postgres'    Create PostgreSQL Database    ELSE    New Ledger
    IF    $provider == 'bedrock'
        A Bedrock Client Killed At A Crash Point Loses Nothing And Pays Once    ${crashpoint}    ${requests}
        ...    ${ledger}
    ELSE IF    $crashpoint == 'during-create'
        A Client Killed At A Crash Point Loses Nothing And Pays Once    during-create:${CRASH_DELAY}    ${requests}
        ...    create_fault=delay_after_commit    ledger=${ledger}
    ELSE
        A Client Killed At A Crash Point Loses Nothing And Pays Once    ${crashpoint}    ${requests}
        ...    provider_options=${provider_options}    ledger=${ledger}
    END
    IF    $crashpoint.startswith('after-step-')
        Emulator Call Count Should Be    ${PREFIX}${UPLOAD_ROUTE}[${provider}]
        ...    ${{ $UPLOAD_CALLS.get($provider, 1) }}
    END

A Bedrock Client Killed At A Crash Point Loses Nothing And Pays Once
    [Documentation]    An unknown create is made again under the same clientRequestToken (the intent id), and the
    ...    account answers with the job the first create made: the creates may be two, the jobs are one.
    [Arguments]    ${crashpoint}    ${requests}    ${ledger}
    ${crashed}=    Run Client    crash    ${requests}    ${ledger}    crashpoint=${crashpoint}
    Client Should Have Been Killed    ${crashed}
    Ledger Should Show A Crash At    ${ledger}    ${crashpoint}    ${requests}
    ${created}=    Evaluate    not ($crashpoint == 'after-intent' or $crashpoint.startswith('after-step-'))
    Emulator Should Hold Batches    ${{ int($created) }}
    ${again}=    Run Client    crash    ${requests}    ${ledger}
    Client Should Have Succeeded    ${again}
    Answers Should Be Complete    ${again}    crash    ${requests}
    Emulator Should Hold Batches    1
    Every Request Should Have Been Created Once    crash    ${requests}
    Every Ticket Should Be Collected    ${ledger}    crash    ${requests}
    Every Batch Should Be Collected    ${ledger}

A Create Whose Answer Is Lost Is Paid Once
    [Documentation]    The emulator commits the batch and drops the connection without an answer. Nobody is killed:
    ...    the client cannot know whether the batch exists, finds it (`found`: what its log says) and does not
    ...    send it again; every request answered, created once.
    [Arguments]    ${provider}    ${found}    ${creates}=1
    Use Provider For The Test    ${provider}
    ${ledger}=    New Ledger
    Arm Fault    ${PREFIX}batches.create    drop_after_commit
    ${client}=    Run Client    dropped    ${REQUESTS}    ${ledger}
    Client Should Have Succeeded    ${client}
    Answers Should Be Complete    ${client}    dropped    ${REQUESTS}
    Client Log Should Contain    ${client}    ${found}
    Emulator Call Count Should Be    ${PREFIX}batches.create    ${creates}
    Emulator Should Hold Batches    1
    Every Request Should Have Been Created Once    dropped    ${REQUESTS}
    Every Ticket Should Be Collected    ${ledger}    dropped    ${REQUESTS}

Use Provider For The Test
    [Documentation]    The test's clients and checks use `provider`'s API: its routes in the emulator (`${PREFIX}`:
    ...    `` for Anthropic, `openai.` for OpenAI) and its create's delays.
    [Arguments]    ${provider}
    Use Provider    ${provider}
    ${prefix}=    Set Variable If    $provider == 'anthropic'    ${EMPTY}    ${provider}.
    Set Test Variable    ${PREFIX}    ${prefix}
    Set Test Variable    ${CREATE_DELAY}    ${{ $CREATE_DELAYS.get($provider, 3) }}
    Set Test Variable    ${CRASH_DELAY}    ${{ $CRASH_DELAYS.get($provider, 1) }}

Clean Up And Stop PostgreSQL
    Clean Up
    Stop PostgreSQL
