*** Settings ***
Documentation       Groq's, Mistral's and Together's crash tests:
...                 `__init__.robot` says what each checks.

Resource            ../resources/crash_recovery.resource

Suite Teardown      Clean Up And Stop PostgreSQL
Test Template       Killed At A Crash Point


*** Test Cases ***    PROVIDER    CRASHPOINT    REQUESTS
Groq: Killed After The Intent Was Committed, Before The Create Was Sent
                      groq            after-intent          ${REQUESTS}
Mistral: Killed After The Intent Was Committed, Before The Create Was Sent
                      mistral         after-intent          ${REQUESTS}
Together: Killed After The Intent Was Committed, Before The Create Was Sent
                      together        after-intent          ${REQUESTS}

Groq: Killed After The Input File Was Uploaded And Recorded, Before The Create
                      groq            after-step-input_file    ${REQUESTS}
Mistral: Killed After The Input File Was Uploaded And Recorded, Before The Create
                      mistral         after-step-input_file    ${REQUESTS}    provider_options=${MISTRAL_FILES}
Together: Killed After The Input File Was Uploaded And Recorded, Before The Create
                      together        after-step-input_file    ${REQUESTS}

Together: Killed After The Create Answered, Before Its Batch Id Was Recorded
    [Documentation]    The one provider whose finding a lost create depends on what its process knows: the job is found
    ...    by its input file's name, which a process that did not upload it reads from the API (`files.retrieve`).
    together        after-create          ${REQUESTS}

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
