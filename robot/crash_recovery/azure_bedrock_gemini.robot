*** Settings ***
Documentation       Azure OpenAI's, Bedrock's, Gemini's and Vertex AI's crash tests:
...                 `__init__.robot` says what each checks.

Resource            ../resources/crash_recovery.resource

Suite Teardown      Clean Up And Stop PostgreSQL
Test Template       Killed At A Crash Point


*** Test Cases ***    PROVIDER    CRASHPOINT    REQUESTS
Bedrock: Killed After The Intent Was Committed, Before The Input Was Written
                      bedrock         after-intent          ${REQUESTS}
Gemini: Killed After The Intent Was Committed, Before The Create Was Sent
                      gemini          after-intent          ${REQUESTS}
Vertex: Killed After The Intent Was Committed, Before The Create Was Sent
                      vertex          after-intent          ${REQUESTS}

Azure OpenAI: Killed After The Input File Was Uploaded And Recorded, Before The Create
                      azure_openai    after-step-input_file    ${REQUESTS}
Bedrock: Killed After The Input Was Written And Recorded, Before The Create
                      bedrock         after-step-input_uri     ${REQUESTS}
Gemini: Killed After The Input File Was Uploaded And Recorded, Before The Create
                      gemini          after-step-input_file    ${REQUESTS}    provider_options=${GEMINI_FILES}
Vertex: Killed After The Input Was Written To Cloud Storage And Recorded, Before The Create
                      vertex          after-step-input_file    ${REQUESTS}

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
Vertex: A Create Whose Answer Is Lost Is Found By Its Display Name, Not Sent Again
    [Documentation]    Vertex AI's jobs carry the intent id in their display name, found by listing the jobs created
    ...    since the intent (the ledger logs the job as found "by its metadata", as for every provider).
    [Template]    A Create Whose Answer Is Lost Is Paid Once
    vertex          by its metadata
Bedrock: A Create Whose Answer Is Lost Is Made Again Under Its Token And Answered With The Same Job
    [Documentation]    The client cannot know whether the job exists, makes the create again under the same token
    ...    (the intent id), and the account answers with the job it made: the creates are two, the jobs one.
    [Template]    A Create Whose Answer Is Lost Is Paid Once
    bedrock         created again from what its create left    creates=2
