*** Settings ***
Documentation       Azure OpenAI's, Bedrock's and Gemini's crash tests:
...                 `__init__.robot` says what each checks.

Resource            ../resources/crash_recovery.resource

Suite Teardown      Clean Up And Stop PostgreSQL
Test Template       Killed At A Crash Point


*** Test Cases ***    PROVIDER    CRASHPOINT    REQUESTS
Bedrock: Killed After The Intent Was Committed, Before The Input Was Written
                      bedrock         after-intent          ${REQUESTS}
Gemini: Killed After The Intent Was Committed, Before The Create Was Sent
                      gemini          after-intent          ${REQUESTS}

Azure OpenAI: Killed After The Input File Was Uploaded And Recorded, Before The Create
                      azure_openai    after-step-input_file    ${REQUESTS}
Bedrock: Killed After The Input Was Written And Recorded, Before The Create
                      bedrock         after-step-input_uri     ${REQUESTS}
Gemini: Killed After The Input File Was Uploaded And Recorded, Before The Create
                      gemini          after-step-input_file    ${REQUESTS}    provider_options=${GEMINI_FILES}

Azure OpenAI: Killed While The Create Is In Flight And The Batch Exists
                      azure_openai    during-create         ${REQUESTS}
Gemini: Killed While The Create Is In Flight And The Job Exists
                      gemini          during-create         ${REQUESTS}

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

Azure OpenAI: Killed After The Create Answered, Before Its Batch Id Was Recorded
                      azure_openai    after-create          ${REQUESTS}
Bedrock: Killed After The Create Answered, Before Its Job Was Recorded
                      bedrock         after-create          ${REQUESTS}
Gemini: Killed After The Create Answered, Before Its Job Name Was Recorded
                      gemini          after-create          ${REQUESTS}

Gemini: Killed While Polling The Job
                      gemini          while-polling         ${REQUESTS}

Bedrock: Killed While Storing The Results
                      bedrock         while-streaming       ${STREAMED}
Gemini: Killed While Storing The Results
                      gemini          while-streaming       ${STREAMED}

Azure OpenAI: Killed After Every Result Was Stored, Before The Batch Was Said Collected
                      azure_openai    after-results         ${REQUESTS}
Bedrock: Killed After Every Result Was Stored, Before The Job Was Said Collected
                      bedrock         after-results         ${REQUESTS}
Gemini: Killed After Every Result Was Stored, Before The Batch Was Said Collected
                      gemini          after-results         ${REQUESTS}

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
Bedrock: A Create Whose Answer Is Lost Is Made Again Under Its Token And Answered With The Same Job
    [Documentation]    The client cannot know whether the job exists, makes the create again under the same token
    ...    (the intent id), and the account answers with the job it made: the creates are two, the jobs one.
    [Template]    A Create Whose Answer Is Lost Is Paid Once
    bedrock         created again from what its create left    creates=2
