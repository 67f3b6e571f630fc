*** Settings ***
Test Timeout        10 minutes    # stuck, not slow: the longest take a few minutes on a loaded machine
Documentation       The crash suite over Amazon Bedrock batch inference: a batch-mode Bedrock client killed with
...                 SIGKILL at any stage of a job's life (before the create, once its input is in S3, with the create
...                 in flight, after it answered, while the job is polled, with its output half stored) loses no
...                 answer and pays for nothing twice. Run again with the same keys and ledger, it finishes the work;
...                 the emulator's account created each record in exactly one job. An unknown create is made again
...                 under the same clientRequestToken (the intent id), and the account answers with the job the
...                 first create made: the creates may be two, the jobs are one.
...
...                 Each test has its own ledger and the suite's `lowtide emulator` (a separate process on a loopback
...                 socket), reset before the test as if started anew (`Fresh Emulator`); the client is
...                 `resources/crash_client.py --provider bedrock`, through boto3.

Resource            resources/crash.resource

Suite Setup         Use Provider    bedrock
Suite Teardown      Clean Up
Test Setup          Fresh Emulator    processing_seconds=${PROCESSING}
Test Teardown       Stop The Test's Clients
Test Template       A Bedrock Client Killed At A Crash Point Loses Nothing And Pays Once


*** Variables ***
${PREFIX}           bedrock.
${PROCESSING}       1
${REQUESTS}         20
# More than one chunk of results (2,000 lines), so that the client dies with part of them stored.
${STREAMED}         2400


*** Test Cases ***    CRASHPOINT                        REQUESTS       JOBS
Killed After The Intent Was Committed, Before The Input Was Written
                      after-intent                      ${REQUESTS}    0
Killed After The Input Was Written And Recorded, Before The Create
                      after-step-input_uri              ${REQUESTS}    0
Killed After The Create Answered, Before Its Job Was Recorded
                      after-create                      ${REQUESTS}    1
Killed While Storing The Results
                      while-streaming                   ${STREAMED}    1
Killed After Every Result Was Stored, Before The Job Was Said Collected
                      after-results                     ${REQUESTS}    1

Killed While The Create Is In Flight And The Job Exists
    [Documentation]    The emulator commits the job and holds its answer back; the client is killed once the emulator
    ...    holds the job (not after a fixed delay: the input's upload comes first, and a loaded machine may take
    ...    longer than any delay). Run again, the create is made again under the same token: one job.
    [Template]    NONE
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

A Create Whose Answer Is Lost Is Made Again Under Its Token And Answered With The Same Job
    [Documentation]    The emulator commits the job and drops the connection without an answer. Nobody is killed:
    ...    the client cannot know whether the job exists, makes the create again under the same token, and the
    ...    account answers with the job it made.
    [Template]    NONE
    ${ledger}=    New Ledger
    Arm Fault    bedrock.batches.create    drop_after_commit
    ${client}=    Run Client    dropped    ${REQUESTS}    ${ledger}
    Client Should Have Succeeded    ${client}
    Answers Should Be Complete    ${client}    dropped    ${REQUESTS}
    Client Log Should Contain    ${client}    created again from what its create left
    Emulator Call Count Should Be    bedrock.batches.create    2
    Emulator Should Hold Batches    1
    Every Request Should Have Been Created Once    dropped    ${REQUESTS}
    Every Ticket Should Be Collected    ${ledger}    dropped    ${REQUESTS}


*** Keywords ***
A Bedrock Client Killed At A Crash Point Loses Nothing And Pays Once
    [Arguments]    ${crashpoint}    ${requests}    ${jobs}
    ${ledger}=    New Ledger
    ${crashed}=    Run Client    crash    ${requests}    ${ledger}    crashpoint=${crashpoint}
    Client Should Have Been Killed    ${crashed}
    Ledger Should Show A Crash At    ${ledger}    ${crashpoint}    ${requests}
    Emulator Should Hold Batches    ${jobs}
    ${again}=    Run Client    crash    ${requests}    ${ledger}
    Client Should Have Succeeded    ${again}
    Answers Should Be Complete    ${again}    crash    ${requests}
    Emulator Should Hold Batches    1
    Every Request Should Have Been Created Once    crash    ${requests}
    Every Ticket Should Be Collected    ${ledger}    crash    ${requests}
    Every Batch Should Be Collected    ${ledger}
    IF    $crashpoint == 'after-step-input_uri'
        # The input written before the crash is reused: one upload in all.
        Emulator Call Count Should Be    bedrock.s3.put_object    1
    END
