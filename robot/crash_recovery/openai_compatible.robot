*** Settings ***
Documentation       The crash tests of an OpenAI-compatible endpoint configured by data (`provider: openai_compatible`,
...                 the openai SDK at the emulator's OpenAI wire): `__init__.robot` says what each checks. The
...                 endpoint keeps metadata here; `features/openai_compatible.feature` runs the dialects that lack it.

Resource            ../resources/crash_recovery.resource

Suite Teardown      Clean Up And Stop PostgreSQL
Test Template       Killed At A Crash Point


*** Test Cases ***    PROVIDER    CRASHPOINT    REQUESTS
OpenAI-Compatible: Killed After The Intent Was Committed, Before The Create Was Sent
                      openai_compatible    after-intent          ${REQUESTS}

OpenAI-Compatible: Killed After The Input File Was Uploaded And Recorded, Before The Create
                      openai_compatible    after-step-input_file    ${REQUESTS}

OpenAI-Compatible: Killed After The Create Answered, Before Its Batch Id Was Recorded
                      openai_compatible    after-create          ${REQUESTS}

OpenAI-Compatible: A Create Whose Answer Is Lost Is Found By Its Intent Id, Not Sent Again
    [Template]    A Create Whose Answer Is Lost Is Paid Once
    openai_compatible    by its metadata
