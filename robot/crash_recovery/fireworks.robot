*** Settings ***
Documentation       Fireworks' crash tests (its Batch Inference API: an input dataset uploaded, then a job created
...                 under an id made from the intent, a true idempotency key, as Bedrock's clientRequestToken):
...                 `__init__.robot` says what each checks. A create whose outcome is unknown is made again under the
...                 same id; Fireworks refuses a second job of it (409), and the job is read by its id.

Resource            ../resources/crash_recovery.resource

Suite Teardown      Clean Up And Stop PostgreSQL
Test Template       Killed At A Crash Point


*** Test Cases ***    PROVIDER    CRASHPOINT    REQUESTS
Fireworks: Killed After The Intent Was Committed, Before The Create Was Sent
                      fireworks    after-intent             ${REQUESTS}

Fireworks: Killed After The Input Dataset Was Uploaded And Recorded, Before The Create
                      fireworks    after-step-input_dataset    ${REQUESTS}

Fireworks: Killed After The Create Answered, Before Its Job Id Was Recorded
                      fireworks    after-create             ${REQUESTS}

Fireworks: A Create Whose Answer Is Lost Is Made Again Under Its Id, Not Paid Twice
    [Template]    A Create Whose Answer Is Lost Is Paid Once
    fireworks       read by its id    creates=2
